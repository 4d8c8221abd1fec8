// Tests: the parts' folders form no cycle, Core, Storage and Web name no part, and Accounts names nothing of push MFA.
import Foundation
import XCTest

/// docs/ARCHITECTURE.md §2.2 and §4, checked on the sources: a part's folder names types of the parts it depends on,
/// never of a part that depends on it; Core, Storage and Web, which every part builds on, name no part; Accounts, which
/// owns the login flow, names nothing of the second factor push MFA plugs in. A type "belongs" to the folder that
/// declares it at the top level; comments and string literals are not read.
final class PartBoundaryTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/KeywardServer")

    /// The parts, by folder; IdentityProviders is a part of its own inside Accounts' folder.
    static let parts = ["OAuth", "Accounts", "IdentityProviders", "PushMFA", "HostTokens", "Devices", "Admin", "SCIM"]

    static func folder(of file: URL) -> String {
        let components = file.path.dropFirst(root.path.count + 1).split(separator: "/").map(String.init)
        if components.count > 2, components[0] == "Accounts", components[1] == "IdentityProviders" { return "IdentityProviders" }
        return components[0]
    }

    /// Source text without comments and string literals.
    static func code(_ text: String) -> String {
        var stripped = text.replacingOccurrences(of: #"(?s)\"\"\".*?\"\"\""#, with: "\"\"", options: .regularExpression)
        stripped = stripped.replacingOccurrences(of: #"(?s)/\*.*?\*/"#, with: "", options: .regularExpression)
        stripped = stripped.replacingOccurrences(of: #"//[^\n]*"#, with: "", options: .regularExpression)
        return stripped.replacingOccurrences(of: #""(?:[^"\\\n]|\\.)*""#, with: "\"\"", options: .regularExpression)
    }

    /// Every folder's references to the top-level types of other folders.
    static func references() throws -> [String: [String: Set<String>]] {
        let files = try XCTUnwrap(FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)).compactMap { $0 as? URL }
            .filter { $0.pathExtension == "swift" }
        var owners: [String: Set<String>] = [:]
        var texts: [(folder: String, code: String)] = []
        let declaration = try NSRegularExpression(pattern: #"^(?:public |final |indirect )*(?:struct|class|enum|protocol|actor|typealias) +([A-Z]\w*)"#, options: .anchorsMatchLines)
        for file in files {
            let code = Self.code(try String(contentsOf: file, encoding: .utf8))
            let folder = Self.folder(of: file)
            texts.append((folder, code))
            for match in declaration.matches(in: code, range: NSRange(code.startIndex..., in: code)) {
                owners[String(code[Range(match.range(at: 1), in: code)!]), default: []].insert(folder)
            }
        }
        let owner = owners.compactMapValues { $0.count == 1 ? $0.first : nil }
        let word = try NSRegularExpression(pattern: #"\b[A-Z]\w+\b"#)
        var references: [String: [String: Set<String>]] = [:]
        for (folder, code) in texts {
            for match in word.matches(in: code, range: NSRange(code.startIndex..., in: code)) {
                let name = String(code[Range(match.range, in: code)!])
                if let other = owner[name], other != folder { references[folder, default: [:]][other, default: []].insert(name) }
            }
        }
        return references
    }

    func testThePartsFormNoCycleAndTheSharedFoldersNameNoPart() throws {
        let references = try Self.references()
        XCTAssertFalse(references.isEmpty)
        // Depth-first search for a cycle through the parts.
        func cycle(from start: String) -> [String]? {
            var path: [String] = []
            func visit(_ part: String) -> [String]? {
                if let index = path.firstIndex(of: part) { return Array(path[index...]) + [part] }
                path.append(part)
                defer { path.removeLast() }
                for next in (references[part] ?? [:]).keys.sorted() where Self.parts.contains(next) {
                    if let found = visit(next) { return found }
                }
                return nil
            }
            return visit(start)
        }
        for part in Self.parts {
            if let found = cycle(from: part) {
                let names = zip(found, found.dropFirst()).map { "\($0) → \($1) (\(references[$0]?[$1]?.sorted().prefix(3).joined(separator: ", ") ?? ""))" }
                XCTFail("a cycle between parts: \(names.joined(separator: "; "))")
                break
            }
        }
        for shared in ["Core", "Storage", "Web"] {
            let named = (references[shared] ?? [:]).filter { Self.parts.contains($0.key) }
            XCTAssertTrue(named.isEmpty, "\(shared)/ names part types: \(named.mapValues { $0.sorted() })")
        }
        XCTAssertNil(references["Accounts"]?["PushMFA"], "Accounts names push MFA: \(references["Accounts"]?["PushMFA"]?.sorted() ?? [])")
    }
}
