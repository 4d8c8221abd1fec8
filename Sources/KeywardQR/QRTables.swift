/// Numbers from ISO/IEC 18004:2015 tables 7 and 9 (error correction structure) and annex E (alignment patterns).
enum QRTables {
    /// Error correction codewords per block, indexed by `[level][version - 1]`.
    static let ecCodewordsPerBlock: [QRCode.ErrorCorrection: [Int]] = [
        .low: [
            7, 10, 15, 20, 26, 18, 20, 24, 30, 18, 20, 24, 26, 30, 22, 24, 28, 30, 28, 28,
            28, 28, 30, 30, 26, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30,
        ],
        .medium: [
            10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26,
            26, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28,
        ],
        .quartile: [
            13, 22, 18, 26, 18, 24, 18, 22, 20, 24, 28, 26, 24, 20, 30, 24, 28, 28, 26, 30,
            28, 30, 30, 30, 30, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30,
        ],
        .high: [
            17, 28, 22, 16, 22, 28, 26, 26, 24, 28, 24, 28, 22, 24, 24, 30, 28, 28, 26, 28,
            30, 24, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30,
        ],
    ]

    /// Number of error correction blocks, indexed by `[level][version - 1]`.
    static let blockCount: [QRCode.ErrorCorrection: [Int]] = [
        .low: [
            1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 4, 6, 6, 6, 6, 7, 8,
            8, 9, 9, 10, 12, 12, 12, 13, 14, 15, 16, 17, 18, 19, 19, 20, 21, 22, 24, 25,
        ],
        .medium: [
            1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16,
            17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49,
        ],
        .quartile: [
            1, 1, 2, 2, 4, 4, 6, 6, 8, 8, 8, 10, 12, 16, 12, 17, 16, 18, 21, 20,
            23, 23, 25, 27, 29, 34, 34, 35, 38, 40, 43, 45, 48, 51, 53, 56, 59, 62, 65, 68,
        ],
        .high: [
            1, 1, 2, 4, 4, 4, 5, 6, 8, 8, 11, 11, 16, 16, 18, 16, 19, 21, 25, 25,
            25, 34, 30, 32, 35, 37, 40, 42, 45, 48, 51, 54, 57, 60, 63, 66, 70, 74, 77, 81,
        ],
    ]

    /// Row/column centres of the alignment patterns (annex E). Spacing is even and as uniform as possible,
    /// counted back from the bottom-right; version 32 is the one place where the standard's spacing differs
    /// from that rule, so it is spelled out.
    static func alignmentPatternCentres(version: Int) -> [Int] {
        if version == 1 { return [] }
        let count = version / 7 + 2
        let last = 4 * version + 10
        let step: Int
        if version == 32 {
            step = 26
        } else {
            let span = last - 6
            let rough = (span + count - 2) / (count - 1)
            step = rough + (rough & 1)
        }
        var centres = [6]
        for i in stride(from: count - 2, through: 0, by: -1) {
            centres.append(last - i * step)
        }
        return centres
    }

    /// Modules left for codewords after all function patterns, format and version information.
    static func rawDataModules(version: Int) -> Int {
        let size = 17 + 4 * version
        var modules = size * size
        modules -= 3 * 64                    // finders with their separators
        modules -= 2 * (size - 16)           // timing patterns between the finders
        modules -= 31                        // two copies of format information plus the dark module
        if version >= 2 {
            let count = version / 7 + 2
            // Alignment patterns overlapping the finders are skipped; those on the timing lines share 5 modules.
            let patterns = count * count - 3
            modules -= patterns * 25
            modules += 2 * (count - 2) * 5
        }
        if version >= 7 { modules -= 36 }    // two copies of version information
        return modules
    }

    static func totalCodewords(version: Int) -> Int {
        rawDataModules(version: version) / 8
    }

    static func dataCodewords(version: Int, level: QRCode.ErrorCorrection) -> Int {
        let blocks = blockCount[level]![version - 1]
        let ec = ecCodewordsPerBlock[level]![version - 1]
        return totalCodewords(version: version) - blocks * ec
    }

    /// Bits of the character count field in byte mode (table 3).
    static func byteCountBits(version: Int) -> Int {
        version <= 9 ? 8 : 16
    }

    /// Largest byte-mode payload: 4 bits of mode indicator plus the count field come out of the data capacity.
    static func byteCapacity(version: Int, level: QRCode.ErrorCorrection) -> Int {
        (dataCodewords(version: version, level: level) * 8 - 4 - byteCountBits(version: version)) / 8
    }
}
