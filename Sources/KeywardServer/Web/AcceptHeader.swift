/// Reads an HTTP `Accept` header (RFC 9110 §12.5.1) far enough to tell whether a client prefers an HTML page
/// to JSON, as the push-MFA device API must (reference §2.1: browsers get an HTML error page, `*/*` gets JSON).
enum AcceptHeader {
    /// True only when `text/html` is explicitly listed with a higher quality than JSON gets (from
    /// `application/json`, `application/*` or `*/*`). A missing header, `*/*` and ties mean JSON.
    static func prefersHTML(_ header: String?) -> Bool {
        guard let header, !header.isEmpty, header.utf8.count <= 1024 else { return false }
        var html: Double?
        var json = (specificity: -1, quality: 0.0)
        for range in header.split(separator: ",") {
            let parts = range.split(separator: ";").map { $0.trimmingBlanks.lowercased() }
            guard let type = parts.first else { continue }
            let quality = parts.dropFirst().lazy.compactMap(Self.quality).first ?? 1
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

    /// The value of a `q=` parameter (0...1), nil for any other parameter; Accept-Language uses it too.
    static func quality(_ parameter: String) -> Double? {
        guard parameter.hasPrefix("q="), let value = Double(parameter.dropFirst(2)), (0...1).contains(value) else { return nil }
        return value
    }
}
