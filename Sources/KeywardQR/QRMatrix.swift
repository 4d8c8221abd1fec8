/// The module grid while a symbol is being built: function patterns first, then codewords in the zigzag order,
/// then a mask over everything that is not a function pattern.
struct QRMatrix: Sendable {
    let version: Int
    let size: Int
    private(set) var dark: [Bool]
    /// Modules that belong to function patterns or format/version information; codewords and masks skip them.
    private(set) var reserved: [Bool]

    init(version: Int) {
        self.version = version
        size = 17 + 4 * version
        dark = [Bool](repeating: false, count: size * size)
        reserved = [Bool](repeating: false, count: size * size)
        drawFunctionPatterns()
    }

    subscript(x: Int, y: Int) -> Bool {
        dark[y * size + x]
    }

    private mutating func set(_ x: Int, _ y: Int, _ isDark: Bool) {
        dark[y * size + x] = isDark
        reserved[y * size + x] = true
    }

    private mutating func drawFunctionPatterns() {
        // Timing patterns go first so the finders and alignment patterns overwrite their ends.
        for i in 0..<size {
            set(6, i, i % 2 == 0)
            set(i, 6, i % 2 == 0)
        }
        drawFinder(centreX: 3, centreY: 3)
        drawFinder(centreX: size - 4, centreY: 3)
        drawFinder(centreX: 3, centreY: size - 4)

        let centres = QRTables.alignmentPatternCentres(version: version)
        let last = centres.count - 1
        for (i, cy) in centres.enumerated() {
            for (j, cx) in centres.enumerated() {
                // The three corners holding finder patterns get no alignment pattern.
                let nearFinder = (i == 0 && j == 0) || (i == 0 && j == last) || (i == last && j == 0)
                if !nearFinder { drawAlignment(centreX: cx, centreY: cy) }
            }
        }

        // Reserve the format areas now; the real bits are written once the mask is chosen.
        writeFormatBits(0)
        writeVersionInformation()
    }

    /// 7×7 finder plus its one-module light separator, clipped at the symbol edge.
    private mutating func drawFinder(centreX: Int, centreY: Int) {
        for dy in -4...4 {
            for dx in -4...4 {
                let x = centreX + dx, y = centreY + dy
                guard (0..<size).contains(x), (0..<size).contains(y) else { continue }
                let ring = max(abs(dx), abs(dy))
                set(x, y, ring != 2 && ring != 4)
            }
        }
    }

    private mutating func drawAlignment(centreX: Int, centreY: Int) {
        for dy in -2...2 {
            for dx in -2...2 {
                set(centreX + dx, centreY + dy, max(abs(dx), abs(dy)) != 1)
            }
        }
    }

    /// Writes both copies of the 15 format bits (bit 0 = least significant) and the always-dark module.
    mutating func writeFormatBits(_ bits: Int) {
        func bit(_ i: Int) -> Bool { (bits >> i) & 1 == 1 }
        // Copy around the top-left finder: down column 8, then left along row 8, hopping the timing lines.
        for i in 0...5 { set(8, i, bit(i)) }
        set(8, 7, bit(6))
        set(8, 8, bit(7))
        set(7, 8, bit(8))
        for i in 9...14 { set(14 - i, 8, bit(i)) }
        // Second copy split between the top-right and bottom-left finders.
        for i in 0...7 { set(size - 1 - i, 8, bit(i)) }
        for i in 8...14 { set(8, size - 15 + i, bit(i)) }
        set(8, size - 8, true)
    }

    /// Versions 7 and up carry their number twice, in 6×3 blocks beside the top-right and bottom-left finders.
    private mutating func writeVersionInformation() {
        guard version >= 7 else { return }
        let bits = QRFormat.versionBits(version: version)
        for i in 0..<18 {
            let isDark = (bits >> i) & 1 == 1
            let along = i / 3
            let across = size - 11 + i % 3
            set(across, along, isDark)
            set(along, across, isDark)
        }
    }

    /// Places codewords most significant bit first, in two-module-wide columns zigzagging up and down from
    /// the bottom-right corner; column 6 is the vertical timing pattern and is stepped over entirely.
    mutating func placeCodewords(_ codewords: [UInt8]) {
        var bitIndex = 0
        let totalBits = codewords.count * 8
        var right = size - 1
        var upward = true
        while right >= 1 {
            if right == 6 { right = 5 }
            for step in 0..<size {
                let y = upward ? size - 1 - step : step
                for x in stride(from: right, through: right - 1, by: -1) where !reserved[y * size + x] {
                    // Modules past the last codeword are the remainder bits, which are zero.
                    if bitIndex < totalBits {
                        let byte = codewords[bitIndex >> 3]
                        dark[y * size + x] = (byte >> (7 - UInt8(bitIndex & 7))) & 1 == 1
                        bitIndex += 1
                    }
                }
            }
            upward.toggle()
            right -= 2
        }
        assert(bitIndex == totalBits, "codewords do not fit the symbol")
    }

    /// Applying the same mask twice restores the original, which lets mask selection try each one in place.
    mutating func applyMask(_ mask: QRMask) {
        for y in 0..<size {
            for x in 0..<size {
                let i = y * size + x
                if !reserved[i] && mask.flips(x: x, y: y) { dark[i].toggle() }
            }
        }
    }
}
