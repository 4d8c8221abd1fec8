// Tests: at_hash is the left half of the algorithm's hash, as Python's hashlib computes it.
import KeywardJOSE
import XCTest

final class TokenHashTests: XCTestCase {
    /// Expected values from Python: base64url(hashlib.shaN(token).digest()[:N/16]) without padding.
    func testTheLeftHalfOfEachAlgorithmsHash() {
        let token = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.sig"
        for algorithm in [JWSAlgorithm.es256, .rs256, .ps256] {
            XCTAssertEqual(TokenHash.leftHalf(of: token, algorithm: algorithm), "95rus5Vrzd_d0P86htMgAA", "\(algorithm)")
        }
        for algorithm in [JWSAlgorithm.es384, .rs384] {
            XCTAssertEqual(TokenHash.leftHalf(of: token, algorithm: algorithm), "uWoLTPdx0Dpq_hePBCn1V-ya2YK0xtfy", "\(algorithm)")
        }
        for algorithm in [JWSAlgorithm.es512, .rs512, .edDSA] {
            XCTAssertEqual(TokenHash.leftHalf(of: token, algorithm: algorithm), "y1ufNo0X7ogfTvdtt1o1yXYeJgpPmTw7xNoU7KyX3Vg", "\(algorithm)")
        }
    }
}
