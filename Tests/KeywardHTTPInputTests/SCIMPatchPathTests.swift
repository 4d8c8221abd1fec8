// Tests: SCIM PATCH paths (RFC 7644 §3.5.2) — the attribute, the value filter and the sub-attribute, the paths Entra ID
// sends, and every refusal an invalidPath error.
import KeywardHTTPInput
import KeywardJOSE
import Testing

@Suite("SCIM PATCH paths are read as RFC 7644 §3.5.2 writes them")
struct SCIMPatchPathTests {
    private let enterpriseUser = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"

    @Test func aValueFilterOnGroupMembersAsEntraSendsIt() throws {
        let path = try SCIMPatchPath.parse(#"members[value eq "2819c223-7f76-453a-919d-413861904646"]"#)
        #expect(path.attribute == SCIMAttributePath(attribute: "members"))
        #expect(path.valueFilter == .compare(SCIMAttributePath(attribute: "value"), .eq, .string("2819c223-7f76-453a-919d-413861904646")))
        #expect(path.subAttribute == nil)
    }

    @Test func aSubAttributeOfTheSelectedValues() throws {
        let email = try SCIMPatchPath.parse(#"emails[type eq "work"].value"#)
        #expect(email.attribute == SCIMAttributePath(attribute: "emails"))
        #expect(email.valueFilter == .compare(SCIMAttributePath(attribute: "type"), .eq, .string("work")))
        #expect(email.subAttribute == "value")

        let street = try SCIMPatchPath.parse(#"addresses[type eq "work"].streetAddress"#)
        #expect(street == SCIMPatchPath(attribute: SCIMAttributePath(attribute: "addresses"), valueFilter: .compare(SCIMAttributePath(attribute: "type"), .eq, .string("work")), subAttribute: "streetAddress"))
    }

    @Test func aSubAttributeOfAComplexAttribute() throws {
        let path = try SCIMPatchPath.parse("name.familyName")
        #expect(path == SCIMPatchPath(attribute: SCIMAttributePath(attribute: "name", subAttribute: "familyName")))
        #expect(path.valueFilter == nil)
    }

    @Test func anExtensionAttributeByItsSchemaURNAsEntraSendsIt() throws {
        let manager = try SCIMPatchPath.parse("urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager")
        #expect(manager.attribute.schema == enterpriseUser)
        #expect(manager.attribute.attribute == "manager")
        #expect(manager.attribute.subAttribute == nil)
        let number = try SCIMPatchPath.parse("urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber")
        #expect(number.attribute == SCIMAttributePath(schema: enterpriseUser, attribute: "employeeNumber"))
        let given = try SCIMPatchPath.parse("urn:ietf:params:scim:schemas:core:2.0:User:name.givenName")
        #expect(given.attribute == SCIMAttributePath(schema: "urn:ietf:params:scim:schemas:core:2.0:User", attribute: "name", subAttribute: "givenName"))
    }

    @Test func namesCompareWithoutCaseAndRenderAsWritten() throws {
        let path = try SCIMPatchPath.parse(#"EMAILS[TYPE EQ "work"].VALUE"#)
        #expect(path == (try SCIMPatchPath.parse(#"emails[type eq "work"].value"#)))
        #expect(path.description == #"EMAILS[TYPE eq "work"].VALUE"#)
        #expect(path != (try SCIMPatchPath.parse(#"emails[type eq "WORK"].value"#)))
    }

    @Test(
        "the canonical text parses back to the same path",
        arguments: [
            "members", "name.familyName", #"members[value eq "2819c223-7f76-453a-919d-413861904646"]"#, #"emails[type eq "work"].value"#,
            "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager", #"addresses[type eq "work" and primary eq true].streetAddress"#,
            #"emails[not (type eq "work") or value ew ".org" and primary pr]"#, "urn:example:params:ext:1.0:Thing:tags[value sw \"a\"].display",
            "members.$ref", #"members[$ref eq "https://example.com/v2/Users/1"]"#,
        ]
    )
    func roundTrip(_ text: String) throws {
        let path = try SCIMPatchPath.parse(text)
        #expect(path.description == text)
        #expect(try SCIMPatchPath.parse(path.description) == path)
    }

    @Test func theFilterPicksTheValuesToChange() throws {
        let group: JSONObject = [
            "displayName": "Group",
            "members": [["value": "2819c223-7f76-453a-919d-413861904646"], ["value": "902c246b-6245-4190-8e05-00816be7344a"]],
        ]
        let path = try SCIMPatchPath.parse(#"members[value eq "902C246B-6245-4190-8E05-00816BE7344A"]"#)
        let members = try #require(group["members"]?.arrayValue)
        #expect(try #require(path.valueFilter).matchingIndices(in: members, of: path.attribute) == [1])
        #expect(try #require(path.valueFilter).matchingIndices(in: members, of: path.attribute, caseExact: { _ in true }) == [])
    }

    /// Each refusal: the text, words the message must hold, and the byte offset it names.
    static let refused: [(String, String, Int)] = [
        ("", "empty path at 0", 0),
        (" name", "expected an attribute name, found ' ' at 0", 0),
        ("name ", "expected the end, found ' ' at 4", 4),
        ("1name", "attribute name '1name' must start with a letter at 0", 0),
        ("name.", "empty attribute name at 5", 5),
        ("name.given.more", "more than one sub-attribute", 0),
        ("name.givenName[type pr]", "not to the sub-attribute 'name.givenName' at 14", 14),
        (#"emails[type eq "work""#, "'[' without its ']' at 6", 6),
        (#"emails[type eq "work"]value"#, "expected the end, found 'value' at 22", 22),
        (#"emails[type eq "work"].value.display"#, "expected one sub-attribute name after '].', found 'value.display' at 23", 23),
        (#"emails[type eq "work"]."#, "empty attribute name at 23", 23),
        (#"emails[type eq "work"]]"#, "unbalanced ']' at 22", 22),
        (#"emails[type zz "work"]"#, "unknown operator 'zz' at 12", 12),
        (#"emails[type eq work]"#, "expected a value after 'eq', found 'work'", 15),
        (#"emails[ims[type pr]]"#, "a value filter cannot contain another value filter at 10", 10),
        (#"emails[]"#, "expected an attribute name, '(' or 'not', found ']' at 7", 7),
        ("emails[type gt null]", "'gt' cannot compare with null at 15", 15),
        ("urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:", "expected an attribute name after the schema URN", 59),
        ("urn:manager", "'urn' is not a schema URN", 0),
        ("name\tx", "expected the end, found U+0009 at 4", 4),
        ("(name)", "expected an attribute name, found '(' at 0", 0),
    ]

    @Test("each refusal is an invalidPath error naming the problem and its offset", arguments: refused)
    func eachRefusal(_ text: String, _ words: String, _ offset: Int) {
        do {
            let path = try SCIMPatchPath.parse(text)
            Issue.record("\(text) was accepted as \(path)")
        } catch {
            #expect(error.kind == .invalidPath)
            #expect(error.message.contains(words), "\(text): \(error.message) does not say \(words)")
            #expect(error.offset == offset, "\(text): \(error.message)")
            #expect(error.message.hasSuffix(" at \(offset)"), "\(text): \(error.message) does not end with its offset")
        }
    }

    @Test func theLimitsHoldForTheValueFilter() {
        let deep = "emails[" + String(repeating: "(", count: 16) + "type pr" + String(repeating: ")", count: 16) + "]"
        #expect(throws: SCIMFilterError(kind: .invalidPath, message: "filter nested deeper than 16 at 22", offset: 22)) { try SCIMPatchPath.parse(deep) }
        let long = "a" + String(repeating: "b", count: 4096)
        #expect(throws: SCIMFilterError(kind: .invalidPath, message: "path is 4097 bytes, longer than 4096 at 4096", offset: 4096)) { try SCIMPatchPath.parse(long) }
    }
}
