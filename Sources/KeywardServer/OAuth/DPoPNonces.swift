// Stateless server-issued DPoP nonces every node agrees on, derived from the master key.
import Crypto
import Foundation
import KeywardJOSE

/// Server-issued DPoP nonces (RFC 9449 §8), stateless so every node behind a load balancer agrees:
/// a nonce is the time step plus a truncated HMAC of it under a key derived from the master key.
/// The current and the previous step are accepted, so a nonce lives between one and two steps.
struct DPoPNonces: Sendable {
    private let key: SymmetricKey
    private let step: TimeInterval

    init(masterKey: MasterKey, step: TimeInterval = 60) {
        self.key = masterKey.derivedKey(purpose: "keyward/dpop-nonce/v1")
        self.step = step
    }

    func current(now: Date) -> String { nonce(forStep: stepIndex(now)) }

    func isValid(_ nonce: String, now: Date) -> Bool {
        let index = stepIndex(now)
        let candidate = Array(nonce.utf8)
        return [index, index - 1].contains { ConstantTime.equal(Array(self.nonce(forStep: $0).utf8), candidate) }
    }

    private func stepIndex(_ now: Date) -> Int64 { Int64((now.timeIntervalSince1970 / step).rounded(.down)) }

    private func nonce(forStep index: Int64) -> String {
        let counter = withUnsafeBytes(of: index.bigEndian) { Array($0) }
        let mac = HMAC<SHA256>.authenticationCode(for: counter, using: key)
        return Base64URL.encode(counter + Array(mac).prefix(16))
    }
}
