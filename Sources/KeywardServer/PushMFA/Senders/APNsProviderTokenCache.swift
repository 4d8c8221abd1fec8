// The APNs provider token, minted once and reused for 50 minutes.
import Foundation
import KeywardJOSE

/// The APNs provider authentication token: an ES256 JWT {alg, kid} {iss: team id, iat}. Apple rejects tokens older
/// than an hour and answers TooManyProviderTokenUpdates to refreshing more than once per 20 minutes, so one token
/// is reused for 50 minutes. Minting happens inside the actor, so concurrent pushes never mint twice.
actor APNsProviderTokenCache {
    static let reuseInterval: TimeInterval = 50 * 60

    private let key: SigningKey
    private let teamId: String
    private let keyId: String
    private let clock: CurrentDate
    private var current: (token: String, issuedAt: Date)?

    init(key: SigningKey, teamId: String, keyId: String, clock: @escaping CurrentDate) {
        self.key = key
        self.teamId = teamId
        self.keyId = keyId
        self.clock = clock
    }

    func token() throws(JOSEError) -> String {
        let now = clock()
        if let current, now.timeIntervalSince(current.issuedAt) < Self.reuseInterval {
            return current.token
        }
        let iat = Int(now.timeIntervalSince1970.rounded(.down))
        let token = try JWS.sign(
            header: ["kid": .string(keyId)],
            claims: ["iss": .string(teamId), "iat": .number(Double(iat))],
            key: key)
        current = (token, now)
        return token
    }

    /// APNs called the token expired or invalid: mint a new one next time (unless that already happened).
    func invalidate(_ token: String) {
        if current?.token == token {
            current = nil
        }
    }
}
