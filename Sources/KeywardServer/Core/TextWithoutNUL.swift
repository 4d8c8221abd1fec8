// Reading a request body as a JSON object, refusing NUL characters: no field Keyward takes holds one, and PostgreSQL
// cannot store or compare text that does (error 22021), which would turn a client's bad input into a 503.
import KeywardJOSE

/// Why a request body is not a JSON object Keyward reads; each API words it in its own error.
enum RequestJSONRefusal: Error {
    /// Not strict JSON, or not an object: the parser's words.
    case malformed(String)
    /// A string (or a member name) holds U+0000.
    case nul
}

/// `bytes` as a JSON object (`StrictJSON`: a member given twice is refused), with no NUL in any string.
func requestJSONObject(_ bytes: some Collection<UInt8>) throws(RequestJSONRefusal) -> JSONObject {
    let object: JSONObject
    do {
        object = try StrictJSON.parseObject(bytes)
    } catch {
        throw .malformed(error.message)
    }
    guard !JSONValue.object(object).containsNUL else { throw .nul }
    return object
}

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
