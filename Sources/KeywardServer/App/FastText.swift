/// Text checks for hot request paths. Foundation's CharacterSet is slow on Linux, and tokens are long; these
/// look at scalars directly.
extension Unicode.Scalar {
    /// Java's `Character.isISOControl`, which the original's input validators use: U+0000–U+001F and U+007F–U+009F.
    var isISOControl: Bool { value < 0x20 || (0x7F...0x9F).contains(value) }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    var trimmingBlanks: SubSequence {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isBlank($0) }), let last = lastIndex(where: { !isBlank($0) }) else { return self[endIndex...] }
        return self[first...last]
    }

    /// Empty or only spaces and tabs.
    var isBlank: Bool { allSatisfy { $0 == " " || $0 == "\t" } }

    var containsISOControl: Bool { unicodeScalars.contains { $0.isISOControl } }
}
