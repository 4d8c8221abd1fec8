// SCIM's dateTime (RFC 7643 §2.3.5: xsd:dateTime, written as RFC 3339), in meta.created and in filters.
import Foundation

enum SCIMDateTime {
    /// Milliseconds, UTC: `2026-11-28T17:04:05.123Z`.
    static func format(_ date: Date) -> String {
        // From the stored milliseconds: a Double's .123 may be .12299…, which a formatter would write as .122.
        let (seconds, milliseconds) = max(StorageTime.milliseconds(date), 0).quotientAndRemainder(dividingBy: 1000)
        let whole = Date(timeIntervalSince1970: Double(seconds)).formatted(Date.ISO8601FormatStyle())
        return String(whole.dropLast()) + "." + String(String(1000 + milliseconds).dropFirst()) + "Z"
    }

    /// An RFC 3339 date-time, with or without fractional seconds, `Z` or an offset; nil for anything else.
    static func parse(_ text: String) -> Date? {
        guard text.utf8.count <= 40 else { return nil }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
        return try? Date(text, strategy: Date.ISO8601FormatStyle())
    }
}
