// The OpenAPI document against the router: every route has an entry, every entry a route, every $ref resolves.
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KeywardJOSE
@testable import KeywardServer
import XCTest

final class OpenAPIDocumentTests: XCTestCase {
    private static let methods: Set<String> = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

    func testEveryRouteHasAnEntryAndEveryEntryARoute() async throws {
        try await TestServer.forEachEngine(engines: [.sqlite]) { server, _ in
            let routed = Set(server.runtime.makeRouter().routes.map { Self.operation(method: $0.method.rawValue, routerPath: "\($0.path)") })
            let documented = try Self.documentedOperations()
            XCTAssertEqual(routed.subtracting(documented).sorted(), [], "routes with no entry in App/openapi.yaml")
            XCTAssertEqual(documented.subtracting(routed).sorted(), [], "entries in App/openapi.yaml with no route")
            XCTAssertGreaterThan(routed.count, 20)
        }
    }

    func testEveryOperationHasAnIdResponsesAndTheRealmParameter() throws {
        let paths = try XCTUnwrap(try OpenAPIDocument.parsed().objectValue?["paths"]?.objectValue)
        var operationIds: [String] = []
        for (path, item) in paths {
            for (method, operation) in try XCTUnwrap(item.objectValue) where Self.methods.contains(method) {
                let operation = try XCTUnwrap(operation.objectValue, "\(method) \(path)")
                operationIds.append(try XCTUnwrap(operation["operationId"]?.stringValue, "\(method) \(path) has no operationId"))
                let responses = try XCTUnwrap(operation["responses"]?.objectValue, "\(method) \(path) has no responses")
                XCTAssertTrue(responses.keys.contains { $0.hasPrefix("2") || $0 == "302" || $0 == "303" }, "\(method) \(path) documents no success")
                XCTAssertNil(responses["default"], "\(method) \(path): list each status, not a catch-all")
                if path.contains("{realm}") {
                    let parameters = operation["parameters"]?.arrayValue ?? []
                    XCTAssertTrue(parameters.contains { $0.objectValue?["$ref"]?.stringValue == "#/components/parameters/Realm" }, "\(method) \(path)")
                }
            }
        }
        XCTAssertEqual(operationIds.count, Set(operationIds).count, "operationIds must be unique")
    }

    func testEveryReferenceResolves() throws {
        let document = try OpenAPIDocument.parsed()
        var references: [String] = []
        Self.collectReferences(document, into: &references)
        XCTAssertGreaterThan(references.count, 50)
        for reference in Set(references) {
            XCTAssertTrue(reference.hasPrefix("#/"), reference)
            var node: JSONValue? = document
            for part in reference.dropFirst(2).split(separator: "/") { node = node?.objectValue?[String(part)] }
            XCTAssertNotNil(node, "\(reference) points at nothing")
        }
    }

    func testTheDocumentIsServedAsJSONAndYAML() async throws {
        try await TestServer.forEachEngine(engines: [.sqlite]) { _, client in
            try await client.execute(uri: "/openapi.json", method: .get) { response in
                XCTAssertEqual(response.status, .ok)
                XCTAssertEqual(response.headers[.contentType], "application/json")
                let document = try StrictJSON.parseObject(Array(response.body.readableBytesView))
                XCTAssertEqual(document["openapi"]?.stringValue, "3.1.0")
                XCTAssertEqual(document, try OpenAPIDocument.parsed().objectValue)
                // A status code stays a string key.
                let responses = document["paths"]?.objectValue?["/healthz"]?.objectValue?["get"]?.objectValue?["responses"]?.objectValue
                XCTAssertNotNil(responses?["200"])
                let handle = document["paths"]?.objectValue?["/realms/{realm}/push-mfa/enroll/request-token/{handle}"]?.objectValue?["get"]?
                    .objectValue?["parameters"]?.arrayValue?.last?.objectValue?["schema"]?.objectValue
                XCTAssertEqual(handle?["format"], .string("uuid"))
            }
            try await client.execute(uri: "/openapi.yaml", method: .get) { response in
                XCTAssertEqual(response.status, .ok)
                XCTAssertEqual(response.headers[.contentType], "application/yaml; charset=utf-8")
                XCTAssertEqual(Array(response.body.readableBytesView), OpenAPIDocument.yaml)
            }
        }
    }

    // MARK: - Helpers

    /// "GET /realms/{realm}/login" from Hummingbird's "/realms/:realm/login".
    private static func operation(method: String, routerPath: String) -> String {
        let path = routerPath.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            segment.hasPrefix(":") ? "{\(segment.dropFirst())}" : String(segment)
        }.joined(separator: "/")
        return "\(method.uppercased()) \(path.hasPrefix("/") ? path : "/" + path)"
    }

    private static func documentedOperations() throws -> Set<String> {
        let paths = try XCTUnwrap(try OpenAPIDocument.parsed().objectValue?["paths"]?.objectValue)
        var operations: Set<String> = []
        for (path, item) in paths {
            for method in try XCTUnwrap(item.objectValue).keys where methods.contains(method) {
                operations.insert("\(method.uppercased()) \(path)")
            }
        }
        return operations
    }

    private static func collectReferences(_ value: JSONValue, into references: inout [String]) {
        switch value {
        case .object(let object):
            for (key, member) in object {
                if key == "$ref", let reference = member.stringValue { references.append(reference) } else { collectReferences(member, into: &references) }
            }
        case .array(let array):
            for member in array { collectReferences(member, into: &references) }
        default:
            break
        }
    }
}
