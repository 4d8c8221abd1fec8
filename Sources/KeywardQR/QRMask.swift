/// The eight data masks of ISO/IEC 18004 §7.8.2 (x = column, y = row) and the §7.8.3 penalty used to pick one.
struct QRMask: Sendable, Equatable {
    let pattern: Int

    static let all = (0..<8).map(QRMask.init(pattern:))

    func flips(x: Int, y: Int) -> Bool {
        switch pattern {
        case 0: (x + y) % 2 == 0
        case 1: y % 2 == 0
        case 2: x % 3 == 0
        case 3: (x + y) % 3 == 0
        case 4: (y / 2 + x / 3) % 2 == 0
        case 5: (x * y) % 2 + (x * y) % 3 == 0
        case 6: ((x * y) % 2 + (x * y) % 3) % 2 == 0
        default: ((x + y) % 2 + (x * y) % 3) % 2 == 0
        }
    }
}

/// Penalty score of a finished symbol; lower means easier for a reader to binarise and locate.
enum QRPenalty {
    static func score(_ matrix: QRMatrix) -> Int {
        let size = matrix.size
        let dark = matrix.dark
        var total = 0
        // N1 (runs) and N3 (finder-like patterns) look along every row and then every column.
        var line = [Bool](repeating: false, count: size)
        for transposed in [false, true] {
            for index in 0..<size {
                for i in 0..<size {
                    line[i] = transposed ? dark[i * size + index] : dark[index * size + i]
                }
                total += runPenalty(line) + finderLikePenalty(line)
            }
        }
        total += blockPenalty(matrix) + balancePenalty(matrix)
        return total
    }

    /// N1: 3 points for a run of five same-coloured modules, plus 1 for each module beyond five.
    static func runPenalty(_ line: [Bool]) -> Int {
        var penalty = 0
        var runLength = 0
        var previous: Bool? = nil
        for module in line {
            if module == previous {
                runLength += 1
            } else {
                if runLength >= 5 { penalty += runLength - 2 }
                runLength = 1
                previous = module
            }
        }
        if runLength >= 5 { penalty += runLength - 2 }
        return penalty
    }

    /// N3: 40 points for each dark-light-dark-dark-dark-light-dark (1:1:3:1:1) with four light modules on
    /// either side, since a reader could mistake it for a finder pattern.
    static func finderLikePenalty(_ line: [Bool]) -> Int {
        let pattern: [Bool] = [true, false, true, true, true, false, true]
        let count = line.count
        var penalty = 0
        guard count >= pattern.count + 4 else { return 0 }
        for start in 0...(count - pattern.count) {
            var matches = true
            for i in 0..<pattern.count where line[start + i] != pattern[i] {
                matches = false
                break
            }
            guard matches else { continue }
            let end = start + pattern.count
            if start >= 4 && !line[start - 4] && !line[start - 3] && !line[start - 2] && !line[start - 1] {
                penalty += 40
            }
            if end + 4 <= count && !line[end] && !line[end + 1] && !line[end + 2] && !line[end + 3] {
                penalty += 40
            }
        }
        return penalty
    }

    /// N2: 3 points for every 2×2 square of one colour (overlapping squares all count).
    static func blockPenalty(_ matrix: QRMatrix) -> Int {
        let size = matrix.size
        let dark = matrix.dark
        var penalty = 0
        for y in 0..<(size - 1) {
            for x in 0..<(size - 1) {
                let i = y * size + x
                let colour = dark[i]
                if dark[i + 1] == colour && dark[i + size] == colour && dark[i + size + 1] == colour {
                    penalty += 3
                }
            }
        }
        return penalty
    }

    /// N4: 10 points for each full 5% step the dark proportion strays from 50%.
    static func balancePenalty(_ matrix: QRMatrix) -> Int {
        let total = matrix.size * matrix.size
        var darkCount = 0
        for module in matrix.dark where module { darkCount += 1 }
        let steps = abs(darkCount * 100 - total * 50) / (total * 5)
        return steps * 10
    }
}
