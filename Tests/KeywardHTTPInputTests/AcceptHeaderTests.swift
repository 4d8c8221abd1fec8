// Tests: an Accept header means HTML only when it prefers text/html explicitly over everything else.
import KeywardHTTPInput
import XCTest

final class AcceptHeaderTests: XCTestCase {
    func testOnlyAnExplicitHigherPreferenceForHTMLMeansHTML() {
        let html = [
            "text/html",
            "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",  // what browsers send for a page
            "application/json;q=0.5, text/html",
            "TEXT/HTML ; q=1, */* ; q=0.1",
        ]
        let json: [String?] = [
            nil, "", "*/*", "application/json", "application/json, text/html", "text/html;q=0.5, application/json",
            "text/html;q=0.8, */*;q=0.8", "text/html;q=0", "application/*, text/html;q=0.9", "text/event-stream",
            "text/html;q=banana, application/json", String(repeating: "text/html,", count: 200),
        ]
        for header in html { XCTAssertTrue(AcceptHeader.prefersHTML(header), header) }
        for header in json { XCTAssertFalse(AcceptHeader.prefersHTML(header), header ?? "no header") }
    }
}
