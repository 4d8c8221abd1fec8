// Escaping values rendered into pages one Unicode scalar at a time, so no quote slips through.
import Mustache

/// Escaping of values rendered into pages, one Unicode scalar at a time.
///
/// swift-mustache's own HTML escaper compares whole `Character`s, and a `"` followed by a combining mark
/// (U+0301) is one grapheme that is not `"`: it would leave the quote raw, and a device label could leave its
/// `aria-label` attribute. Looking at scalars, every special character is replaced whatever follows it.
enum HTMLText {
    static func escaped(_ text: String) -> String {
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped.append(contentsOf: "&amp;".unicodeScalars)
            case "<": escaped.append(contentsOf: "&lt;".unicodeScalars)
            case ">": escaped.append(contentsOf: "&gt;".unicodeScalars)
            case "\"": escaped.append(contentsOf: "&quot;".unicodeScalars)
            case "'": escaped.append(contentsOf: "&#39;".unicodeScalars)
            default: escaped.append(scalar)
            }
        }
        return String(escaped)
    }

    /// The content type every Keyward template is rendered with, named by the pragma `PageRenderer` puts first
    /// in each template.
    struct ContentType: MustacheContentType {
        static let name = "KEYWARD_HTML"
        static let pragma = "{{% CONTENT_TYPE: \(name)}}"

        func escapeText(_ text: String) -> String { HTMLText.escaped(text) }
    }
}
