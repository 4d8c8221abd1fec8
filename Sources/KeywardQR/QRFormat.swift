/// Format and version information: short BCH codes so a reader can recover them before anything else.
enum QRFormat {
    /// The two-bit error correction indicator is not in level order: L = 01, M = 00, Q = 11, H = 10.
    static func levelIndicator(_ level: QRCode.ErrorCorrection) -> Int {
        switch level {
        case .low: 0b01
        case .medium: 0b00
        case .quartile: 0b11
        case .high: 0b10
        }
    }

    /// BCH(15,5) with generator 0x537, XORed with 0x5412 so that no valid format string is all light.
    static func formatBits(level: QRCode.ErrorCorrection, mask: Int) -> Int {
        let data = levelIndicator(level) << 3 | mask
        return (data << 10 | bchRemainder(data << 10, generator: 0x537)) ^ 0x5412
    }

    /// BCH(18,6) with generator 0x1F25; no XOR mask because the version number is never zero.
    static func versionBits(version: Int) -> Int {
        version << 12 | bchRemainder(version << 12, generator: 0x1F25)
    }

    private static func bchRemainder(_ value: Int, generator: Int) -> Int {
        let generatorDegree = Int.bitWidth - generator.leadingZeroBitCount - 1
        var remainder = value
        while remainder != 0 {
            let degree = Int.bitWidth - remainder.leadingZeroBitCount - 1
            if degree < generatorDegree { break }
            remainder ^= generator << (degree - generatorDegree)
        }
        return remainder
    }
}
