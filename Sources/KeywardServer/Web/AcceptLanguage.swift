/// Reads an HTTP `Accept-Language` header (RFC 9110 §12.5.4) into language tags, most preferred first.
enum AcceptLanguage {
    /// Lower-cased tags in order of quality (ties keep the header's order); `*`, `q=0` and malformed ranges are
    /// left out. Oversized headers and lists give no preference rather than a partial one.
    static func preferences(_ header: String?) -> [String] {
        guard let header, !header.isEmpty, header.utf8.count <= 1024 else { return [] }
        var ranked: [(tag: String, quality: Double, position: Int)] = []
        for (position, range) in header.split(separator: ",").enumerated() {
            guard position < 32 else { return [] }
            let parts = range.split(separator: ";").map { $0.trimmingBlanks.lowercased() }
            guard let tag = parts.first, isLanguageTag(tag) else { continue }
            let quality = parts.dropFirst().lazy.compactMap(AcceptHeader.quality).first ?? 1
            if quality > 0 { ranked.append((tag, quality, position)) }
        }
        return ranked.sorted { ($0.quality, -$0.position) > ($1.quality, -$1.position) }.map(\.tag)
    }

    /// A language tag as settings and headers may name it: a 2–8 letter primary subtag, then subtags of 1–8
    /// letters or digits (`de`, `pt-br`, `zh-hant-tw`), lower case, at most 35 characters.
    static func isLanguageTag(_ tag: String) -> Bool {
        let subtags = tag.split(separator: "-", omittingEmptySubsequences: false)
        guard tag.utf8.count <= 35, let primary = subtags.first, (2...8).contains(primary.count),
            primary.allSatisfy({ $0.isASCII && $0.isLowercase })
        else { return false }
        return subtags.dropFirst().allSatisfy { subtag in
            (1...8).contains(subtag.count) && subtag.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber) }
        }
    }
}
