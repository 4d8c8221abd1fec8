import Foundation
import KeywardJOSE

/// Single-core ES256 throughput measured in the same run as the HTTP scenarios: the ceiling any
/// DPoP-protected request (one or two verifications) is compared with.
struct CryptoCeiling: Codable {
    let es256VerifyPerSecond: Double
    let es256SignPerSecond: Double

    static func measure(seconds: Double) -> CryptoCeiling {
        let key = try! SigningKey.generate(.es256)
        let message = Array(repeating: UInt8(ascii: "a"), count: 300)
        let signature = try! key.sign(message)
        let publicKey = key.publicJWK
        let verifies = rate(seconds: seconds) { precondition(publicKey.verify(signature: signature, over: message, algorithm: .es256)) }
        let signs = rate(seconds: seconds) { _ = try! key.sign(message) }
        return CryptoCeiling(es256VerifyPerSecond: verifies, es256SignPerSecond: signs)
    }

    private static func rate(seconds: Double, _ operation: () -> Void) -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        var count = 0
        while true {
            for _ in 0..<100 { operation() }
            count += 100
            let elapsed = clock.now - start
            let elapsedSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            if elapsedSeconds >= seconds { return Double(count) / elapsedSeconds }
        }
    }
}
