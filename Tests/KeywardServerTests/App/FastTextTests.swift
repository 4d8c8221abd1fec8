// Tests: the byte-wise comma split of a header agrees with splitting its characters and trimming them.
@testable import KeywardServer
import XCTest

final class FastTextTests: XCTestCase {
    /// The byte-wise split of a header into DPoP proofs agrees with splitting its Characters and trimming them.
    func testCommaSeparatedItemsAreTheTrimmedItemsEmptyOnesKept() {
        let samples = [
            "", "x", "a,b", " a , b ", "a,,b", ",", "\ta\t,\t", "eyJ.eyJ.sig, eyJ.eyJ.sig2", "  ", "ü ,🙂", "a ,b\t,c",
        ]
        for sample in samples {
            let expected = sample.split(separator: ",", omittingEmptySubsequences: false).map { String($0.trimmingBlanks) }
            XCTAssertEqual(sample.commaSeparatedItems, expected, sample)
        }
        XCTAssertEqual(" a ,, b\t".commaSeparatedItems, ["a", "", "b"])
        XCTAssertEqual("".commaSeparatedItems, [""])
    }
}
