/// A QR code symbol (ISO/IEC 18004) holding bytes in byte mode, at the smallest version that fits.
public struct QRCode: Sendable {
    public enum ErrorCorrection: Sendable, Hashable, CaseIterable {
        /// Recovers about 7% of codewords.
        case low
        /// Recovers about 15% of codewords; the default, a fair trade for a code shown on a screen.
        case medium
        /// Recovers about 25% of codewords.
        case quartile
        /// Recovers about 30% of codewords.
        case high
    }

    public let version: Int
    public let size: Int
    public let errorCorrection: ErrorCorrection
    /// The mask pattern (0–7) that scored the lowest penalty.
    public let mask: Int
    private let modules: [Bool]

    public init(bytes: [UInt8], errorCorrection: ErrorCorrection = .medium) throws(QRCodeError) {
        guard let version = Self.smallestVersion(byteCount: bytes.count, errorCorrection: errorCorrection) else {
            throw .dataTooLong(bytes: bytes.count, maximum: QRTables.byteCapacity(version: 40, level: errorCorrection))
        }
        let codewords = QRCodewords.build(bytes: bytes, version: version, level: errorCorrection)

        var matrix = QRMatrix(version: version)
        matrix.placeCodewords(codewords)

        // Try every mask with its format bits in place, since the format modules count towards the penalty.
        var chosen = 0
        var lowestPenalty = Int.max
        for mask in QRMask.all {
            matrix.applyMask(mask)
            matrix.writeFormatBits(QRFormat.formatBits(level: errorCorrection, mask: mask.pattern))
            let penalty = QRPenalty.score(matrix)
            if penalty < lowestPenalty { (chosen, lowestPenalty) = (mask.pattern, penalty) }
            matrix.applyMask(mask)
        }
        matrix.applyMask(QRMask(pattern: chosen))
        matrix.writeFormatBits(QRFormat.formatBits(level: errorCorrection, mask: chosen))

        self.version = version
        self.size = matrix.size
        self.errorCorrection = errorCorrection
        self.mask = chosen
        self.modules = matrix.dark
    }

    public init(text: String, errorCorrection: ErrorCorrection = .medium) throws(QRCodeError) {
        // Byte mode without an ECI header: readers in practice take such bytes as UTF-8.
        try self.init(bytes: Array(text.utf8), errorCorrection: errorCorrection)
    }

    /// Outside the symbol is the quiet zone, so it reads as light rather than trapping.
    public func isDark(x: Int, y: Int) -> Bool {
        guard (0..<size).contains(x), (0..<size).contains(y) else { return false }
        return modules[y * size + x]
    }

    /// The version `init(bytes:errorCorrection:)` picks for a payload of this length, or nil when none holds it.
    public static func smallestVersion(byteCount: Int, errorCorrection: ErrorCorrection = .medium) -> Int? {
        (1...40).first { byteCount <= QRTables.byteCapacity(version: $0, level: errorCorrection) }
    }

    /// Largest byte-mode payload a version holds at a level.
    public static func byteCapacity(version: Int, errorCorrection: ErrorCorrection = .medium) -> Int {
        precondition((1...40).contains(version), "QR versions run from 1 to 40")
        return QRTables.byteCapacity(version: version, level: errorCorrection)
    }
}

public enum QRCodeError: Error, Equatable {
    case dataTooLong(bytes: Int, maximum: Int)
}
