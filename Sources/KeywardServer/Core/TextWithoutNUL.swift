// Refusing NUL characters in request bodies: no field Keyward takes holds one, and PostgreSQL cannot store or
// compare text that does (error 22021), which would turn a client's bad input into a 503.
import KeywardJOSE

extension JSONValue {
    /// Whether a string anywhere in the value, member names included, holds U+0000.
    var containsNUL: Bool {
        switch self {
        case .string(let text): text.utf8.contains(0)
        case .array(let values): values.contains { $0.containsNUL }
        case .object(let members): members.contains { $0.key.utf8.contains(0) || $0.value.containsNUL }
        default: false
        }
    }
}

extension Dictionary where Key == String, Value == JSONValue {
    var containsNUL: Bool { JSONValue.object(self).containsNUL }
}
