// Reading an admin request's JSON body: its media type and size, strict JSON, each member typed, none unknown.
import Hummingbird
import KeywardJOSE

/// An admin request's body: `application/json` (or `application/merge-patch+json` for a PATCH), at most the
/// configured size, one JSON object with no member twice and no NUL. Members are taken one by one with their types;
/// `finish()` refuses any member the route did not read, so a misspelt or unsupported field is an error naming it,
/// never silently ignored.
struct AdminRequestBody {
    private let object: JSONObject
    private var read: Set<String> = []

    static func read(_ request: Request, maxSize: Int) async throws -> AdminRequestBody {
        let mediaType = request.headers[.contentType]?.split(separator: ";").first?.trimmingBlanks.lowercased()
        guard mediaType == "application/json" || (request.method == .patch && mediaType == "application/merge-patch+json") else {
            throw AdminProblem(.unsupportedMediaType, "unsupported_media_type", "Content-Type must be application/json")
        }
        let bytes: [UInt8]
        do {
            bytes = Array(try await request.body.collect(upTo: maxSize).readableBytesView)
        } catch {
            throw AdminProblem(.contentTooLarge, "payload_too_large", "the body is larger than \(maxSize) bytes (http.maxBodySize)")
        }
        do throws(RequestJSONRefusal) {
            return AdminRequestBody(object: try requestJSONObject(bytes))
        } catch .malformed(let detail) {
            throw AdminProblem.invalid("the body is not a JSON object: \(detail)")
        } catch {
            throw AdminProblem.invalid("the body's strings must not contain NUL (\\u0000)")
        }
    }

    private init(object: JSONObject) { self.object = object }

    /// A string member; absent (or null) is nil.
    mutating func string(_ name: String, maxLength: Int = 1024) throws(AdminProblem) -> String? {
        guard let value = take(name) else { return nil }
        guard case .string(let text) = value else { throw .invalid("\(name) must be a string", field: name) }
        guard text.utf8.count <= maxLength else { throw .invalid("\(name) is longer than \(maxLength) bytes", field: name) }
        return text
    }

    mutating func requiredString(_ name: String, maxLength: Int = 1024) throws(AdminProblem) -> String {
        guard let text = try string(name, maxLength: maxLength) else { throw .invalid("the body has no \(name)", field: name) }
        return text
    }

    mutating func bool(_ name: String) throws(AdminProblem) -> Bool? {
        guard let value = take(name) else { return nil }
        guard case .bool(let flag) = value else { throw .invalid("\(name) must be true or false", field: name) }
        return flag
    }

    mutating func int(_ name: String) throws(AdminProblem) -> Int? {
        guard let value = take(name) else { return nil }
        guard let number = value.intValue, let int = Int(exactly: number) else { throw .invalid("\(name) must be an integer", field: name) }
        return int
    }

    /// An array of strings, at most `maxCount` of them.
    mutating func strings(_ name: String, maxCount: Int = 64, maxLength: Int = 2048) throws(AdminProblem) -> [String]? {
        guard let value = take(name) else { return nil }
        guard case .array(let items) = value, items.count <= maxCount else {
            throw .invalid("\(name) must be an array of at most \(maxCount) strings", field: name)
        }
        var strings: [String] = []
        for item in items {
            guard case .string(let text) = item, text.utf8.count <= maxLength else {
                throw .invalid("\(name) must hold strings of at most \(maxLength) bytes", field: name)
            }
            strings.append(text)
        }
        return strings
    }

    /// Every member, for a body whose members are settings by name (each then checked by the setting's own rules);
    /// null members included.
    mutating func all() -> [(String, JSONValue)] {
        read.formUnion(object.keys)
        return object.map { ($0.key, $0.value) }
    }

    /// Refuses the members no one read.
    func finish() throws(AdminProblem) {
        if let unknown = object.keys.sorted().first(where: { !read.contains($0) }) {
            throw .invalid("unknown member '\(unknown.prefix(64))'", field: String(unknown.prefix(64)))
        }
    }

    private mutating func take(_ name: String) -> JSONValue? {
        read.insert(name)
        guard let value = object[name], value != .null else { return nil }
        return value
    }
}
