// Reading a browser's Accept-Language header into language tags, most preferred first.
import KeywardHTTPInput

/// Reads an HTTP `Accept-Language` header (RFC 9110 §12.5.4) into language tags, most preferred first.
enum AcceptLanguage {
    /// Lower-cased tags in order of quality (ties keep the header's order); `*`, `q=0` and malformed ranges are
    /// left out. Oversized headers and lists give no preference rather than a partial one.
    static func preferences(_ header: String?) -> [String] {
        let ranked = AcceptHeader.ranges(header, maximumRanges: 32).enumerated().filter { _, range in
            range.quality > 0 && isLanguageTag(range.value)
        }
        return ranked.sorted { ($0.element.quality, -$0.offset) > ($1.element.quality, -$1.offset) }.map(\.element.value)
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
