/// Reads an HTTP `Accept` header (RFC 9110 §12.5.1) far enough to tell whether a client prefers an HTML page
/// to JSON, as the push-MFA device API must (docs/PUSH-MFA-PROTOCOL.md §2.1: browsers get an HTML error page,
/// `*/*` gets JSON).
package enum AcceptHeader {
    /// True only when `text/html` is explicitly listed with a higher quality than JSON gets (from
    /// `application/json`, `application/*` or `*/*`). A missing header, `*/*` and ties mean JSON.
    package static func prefersHTML(_ header: String?) -> Bool {
        var html: Double?
        var json = (specificity: -1, quality: 0.0)
        for (type, quality) in ranges(header) {
            switch type {
            case "text/html": html = max(html ?? 0, quality)
            case "application/json": json = Self.moreSpecific(json, (2, quality))
            case "application/*": json = Self.moreSpecific(json, (1, quality))
            case "*/*": json = Self.moreSpecific(json, (0, quality))
            default: continue
            }
        }
        guard let html, html > 0 else { return false }
        return html > json.quality
    }

    /// The most specific range that matches decides a type's quality (RFC 9110 §12.5.1).
    private static func moreSpecific(_ current: (specificity: Int, quality: Double), _ candidate: (Int, Double)) -> (specificity: Int, quality: Double) {
        candidate.0 > current.specificity ? (candidate.0, candidate.1) : current
    }

    /// The comma-separated ranges of an Accept-style header (Accept, Accept-Language), lower-cased, in header order,
    /// each with its `q` (1 when absent or outside 0...1). None for a missing or empty header, one over 1 KiB, or
    /// one of more than `maximumRanges` ranges.
    package static func ranges(_ header: String?, maximumRanges: Int = .max) -> [(value: String, quality: Double)] {
        guard let header, !header.isEmpty, header.utf8.count <= 1024 else { return [] }
        let ranges = header.split(separator: ",")
        guard ranges.count <= maximumRanges else { return [] }
        return ranges.compactMap { range in
            let parts = range.split(separator: ";").map { Self.trimmingBlanks($0).lowercased() }
            guard let value = parts.first else { return nil }
            return (value, parts.dropFirst().lazy.compactMap(Self.quality).first ?? 1)
        }
    }

    /// Without leading and trailing spaces and tabs (the OWS of RFC 9110 §5.6.3).
    private static func trimmingBlanks(_ text: Substring) -> Substring {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isBlank($0) }), let last = text.lastIndex(where: { !isBlank($0) }) else {
            return text[text.endIndex...]
        }
        return text[first...last]
    }

    private static func quality(_ parameter: String) -> Double? {
        guard parameter.hasPrefix("q="), let value = Double(parameter.dropFirst(2)), (0...1).contains(value) else { return nil }
        return value
    }
}
