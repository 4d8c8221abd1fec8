// Reading the person's name from the user field Sign in with Apple posts on first authorization only.
import Foundation
import KeywardJOSE

/// The `user` field Sign in with Apple posts with the callback, on a person's first authorization of the app only:
/// `{"name": {"firstName", "lastName"}, "email"}`. The name is nowhere else (not in the id_token, never again), so
/// Keyward stores it from here, once; the e-mail is taken from the signed id_token instead.
///
/// The field is not signed: whoever posts the callback could write any name. It lands only on the identity the
/// provider's code proves, so at worst a person names their own account oddly; a field that does not parse is
/// dropped rather than failing a sign-in over a cosmetic value.
enum AppleFirstAuthorization {
    static let maxFieldBytes = 4096
    static let maxNameCharacters = 200

    /// "First Last" from the field, or nil when it carries no usable name.
    static func name(fromUserField field: String?) -> String? {
        guard let field, field.utf8.count <= maxFieldBytes, let object = try? StrictJSON.parseObject(Array(field.utf8)),
            let name = object["name"]?.objectValue
        else { return nil }
        let parts = [name.string("firstName"), name.string("lastName")].compactMap { part in
            part.map { $0.filter { !$0.isNewline && !($0.unicodeScalars.first?.properties.generalCategory == .control) } }
                .map { $0.trimmingCharacters(in: .whitespaces) }
        }.filter { !$0.isEmpty }
        guard !parts.isEmpty else { return nil }
        return String(parts.joined(separator: " ").prefix(maxNameCharacters))
    }
}
