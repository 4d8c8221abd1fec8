// Keyward's HTTP contract (App/openapi.yaml, compiled in), as the YAML it is written in and as JSON.
import KeywardJOSE
import Yams

/// The OpenAPI 3.1 document of every route. The YAML source is the truth (it keeps its comments); the JSON
/// form is derived from it once, when first served.
enum OpenAPIDocument {
    static let yaml: [UInt8] = PackageResources.openapi_yaml

    /// The document as a JSON value. Throws only if the compiled-in YAML is broken, which OpenAPIDocumentTests
    /// catches before a build ships.
    static func parsed() throws -> JSONValue {
        guard let root = try Yams.compose(yaml: String(decoding: yaml, as: UTF8.self)) else {
            throw ConversionError(path: "/", problem: "the document is empty")
        }
        return try json(root, path: "")
    }

    static let json: Result<[UInt8], any Error> = Result { StrictJSON.serialize(try parsed()) }

    struct ConversionError: Error, CustomStringConvertible {
        let path: String
        let problem: String
        var description: String { "openapi.yaml at \(path.isEmpty ? "/" : path): \(problem)" }
    }

    /// YAML's tags decide JSON's types: a quoted "200" stays a string, a bare 200 is a number.
    private static func json(_ node: Node, path: String) throws -> JSONValue {
        switch node {
        case .scalar(let scalar):
            switch Tag.Name(rawValue: node.tag.rawValue) {
            case .null: return .null
            case .bool:
                guard let value = node.bool else { throw ConversionError(path: path, problem: "'\(scalar.string)' is not a boolean") }
                return .bool(value)
            case .int, .float:
                guard let value = node.float else { throw ConversionError(path: path, problem: "'\(scalar.string)' is not a number") }
                return .number(value)
            case .str:
                return .string(scalar.string)
            default:
                throw ConversionError(path: path, problem: "'\(scalar.string)' has tag \(node.tag) with no JSON equivalent; quote it")
            }
        case .sequence(let sequence):
            return .array(try sequence.enumerated().map { try json($1, path: "\(path)/\($0)") })
        case .mapping(let mapping):
            var object = JSONObject()
            for (key, value) in mapping {
                guard case .scalar(let name) = key else { throw ConversionError(path: path, problem: "a key that is not a scalar") }
                guard object[name.string] == nil else { throw ConversionError(path: path, problem: "'\(name.string)' appears twice") }
                object[name.string] = try json(value, path: "\(path)/\(name.string)")
            }
            return .object(object)
        case .alias:
            throw ConversionError(path: path, problem: "aliases are not used in this document; write the value or a $ref")
        }
    }
}
