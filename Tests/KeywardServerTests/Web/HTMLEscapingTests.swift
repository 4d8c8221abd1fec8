// Tests: page values are HTML-escaped by Unicode scalar, so a combining mark cannot smuggle a quote through.
import Foundation
import KeywardJOSE
@testable import KeywardServer
import XCTest

/// Values rendered into pages are escaped by Unicode scalar: a combining mark after `"`, `<`, `&` or `'` makes
/// one grapheme of the two, and an escaper that looks at graphemes lets the quote through unescaped.
final class HTMLEscapingTests: XCTestCase {
    static let combiningAcute = "\u{301}"
    static let hostileLabel = "Phone\"\u{301} onfocus=alert(1) x=\"\u{301} <\u{301}b>&\u{301}amp;'\u{301}"

    func testEscaperReplacesEachSpecialScalarEvenWithACombiningMarkAfterIt() {
        let escaped = HTMLText.escaped(Self.hostileLabel)
        XCTAssertEqual(
            escaped,
            "Phone&quot;\u{301} onfocus=alert(1) x=&quot;\u{301} &lt;\u{301}b&gt;&amp;\u{301}amp;&#39;\u{301}"
        )
        for special in ["\"", "<", ">", "'"] {
            XCTAssertFalse(escaped.unicodeScalars.contains(special.unicodeScalars.first!), "raw \(special) left in \(escaped)")
        }
    }


    /// A device label is shown in the account page's table and in its Remove button's `aria-label`.
    func testDeviceLabelWithCombiningMarksCannotLeaveItsAttribute() async throws {
        try await TestServer.forEachEngine { server, client in
            // Signed in before the device is enrolled, so no push step stands between the browser and its account page.
            let browser = TestBrowser(client)
            _ = try await browser.signIn()
            let user = try await server.demoUser()
            let device = try TestDevice(server: server, userId: user.id)
            let enrollment = try await server.startEnrollment(user)
            let enrolled = try await device.enroll(client, enrollmentToken: enrollment.enrollmentToken, overrides: ["deviceLabel": .string(Self.hostileLabel)])
            XCTAssertEqual(enrolled.status, .ok, enrolled.body)
            let account = try await browser.get("/realms/demo/account")
            XCTAssertEqual(account.status, .ok)
            let bytes = Array(account.html.utf8)
            let acute = Array(Self.combiningAcute.utf8)
            for special in ["\"", "<", "&", "'"] {
                XCTAssertFalse(bytes.contains(subsequence: Array(special.utf8) + acute), "raw \(special) + U+0301 in the account page")
            }
            XCTAssertTrue(bytes.contains(subsequence: Array("aria-label=\"Remove Phone&quot;\u{301} onfocus=alert(1) x=&quot;\u{301}".utf8)))
        }
    }

    /// Every registered template renders through the scalar escaper, not the template engine's own.
    func testEveryTemplateEscapesByScalar() throws {
        let renderer = try PageRenderer()
        for (name, _) in PageTemplates.all {
            let html = renderer.library.render(Self.everyKey(Self.hostileLabel), withTemplate: name) ?? ""
            XCTAssertFalse(Array(html.utf8).contains(subsequence: Array("\"\u{301}".utf8)), "template \(name)")
        }
    }

    /// A context where every name a template might read holds `value` (sections see a true value).
    static func everyKey(_ value: String) -> [String: Any] {
        var context: [String: Any] = [:]
        for (_, source) in PageTemplates.all {
            var rest = Substring(source)
            while let open = rest.range(of: "{{") {
                rest = rest[open.upperBound...]
                guard let close = rest.range(of: "}}") else { break }
                let name = rest[..<close.lowerBound].trimmingCharacters(in: CharacterSet(charactersIn: "#^/{}&! "))
                if !name.isEmpty, !["body", "qrSVG"].contains(name) { context[name] = value }
                rest = rest[close.upperBound...]
            }
        }
        return context
    }
}

extension Array where Element: Equatable {
    func contains(subsequence: [Element]) -> Bool {
        guard !subsequence.isEmpty, subsequence.count <= count else { return subsequence.isEmpty }
        return (0...(count - subsequence.count)).contains { start in Array(self[start..<(start + subsequence.count)]) == subsequence }
    }
}
