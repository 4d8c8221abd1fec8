// The single-core ES256, RS256 and ES384 sign and verify rates each bench run compares its scenarios with.
import Foundation
import KeywardJOSE

/// Single-core signature throughput measured in the same run as the HTTP scenarios: ES256, the ceiling any
/// DPoP-protected request (one or two verifications) is compared with, RS256 with RSA-2048, what a host
/// token's verification costs (the sign rate is for reference: a host's auth provider signs, not Keyward), and
/// ES384, the curve of Apple's App Attest intermediate and root (two P-384 verifications per attestation).
struct CryptoCeiling: Codable {
    let es256VerifyPerSecond: Double
    let es256SignPerSecond: Double
    let rs256VerifyPerSecond: Double
    let rs256SignPerSecond: Double
    let es384VerifyPerSecond: Double
    let es384SignPerSecond: Double

    static func measure(seconds: Double) -> CryptoCeiling {
        let message = Array(repeating: UInt8(ascii: "a"), count: 300)
        let es256 = rates(key: try! SigningKey.generate(.es256), message: message, seconds: seconds)
        let rs256 = rates(key: try! SigningKey.generate(.rs256), message: message, seconds: seconds)
        let es384 = rates(key: try! SigningKey.generate(.es384), message: message, seconds: seconds)
        return CryptoCeiling(
            es256VerifyPerSecond: es256.verify, es256SignPerSecond: es256.sign, rs256VerifyPerSecond: rs256.verify, rs256SignPerSecond: rs256.sign,
            es384VerifyPerSecond: es384.verify, es384SignPerSecond: es384.sign
        )
    }

    private static func rates(key: SigningKey, message: [UInt8], seconds: Double) -> (verify: Double, sign: Double) {
        let signature = try! key.sign(message)
        let publicKey = key.publicJWK
        let verifies = rate(seconds: seconds) { precondition(publicKey.verify(signature: signature, over: message, algorithm: key.algorithm)) }
        let signs = rate(seconds: seconds) { _ = try! key.sign(message) }
        return (verifies, signs)
    }

    /// Operations per second of `operation` run back to back on this thread for at least `seconds`.
    static func rate(seconds: Double, _ operation: () -> Void) -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        var count = 0
        while true {
            for _ in 0..<100 { operation() }
            count += 100
            let elapsed = (clock.now - start).seconds
            if elapsed >= seconds { return Double(count) / elapsed }
        }
    }

    /// The same for an async operation, awaited one at a time (one core, as long as it does not fan out).
    static func rate(seconds: Double, _ operation: () async throws -> Void) async rethrows -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        var count = 0
        while true {
            for _ in 0..<100 { try await operation() }
            count += 100
            let elapsed = (clock.now - start).seconds
            if elapsed >= seconds { return Double(count) / elapsed }
        }
    }
}
