// Test support: login push messages as the push-MFA part builds them, with a real signed confirm token.
import Foundation
import KeywardJOSE
@testable import KeywardServer

/// Login pushes as the push-MFA part builds them, with a real signed confirm token.
enum PushTestMessages {
    static let realm = "demo"
    static let challengeId = "7d0c3f6e-2d4b-4a59-9a43-3b4a1f0f9c11"
    static let credentialId = "cred-1"

    static func confirmToken(challengeId: String = challengeId, exp: Int64?) throws -> String {
        var claims: JSONObject = [
            "credId": .string(credentialId), "cid": .string(challengeId), "typ": 1, "ver": 1,
            "iss": "https://keyward.test/realms/demo", "iat": .number(1_800_000_000),
        ]
        if let exp { claims["exp"] = .number(Double(exp)) }
        return try JWS.sign(header: ["typ": "JWT", "kid": "realm-key"], claims: claims, key: SigningKey.generate(.es256))
    }

    static func message(
        pushProviderId: String, confirmToken: String, challengeId: String = challengeId, clientId: String? = "test-app",
        demo: Bool = false
    ) -> PushMessage {
        PushMessage(
            realm: realm, userId: "user-42", username: "test", credentialId: credentialId, challengeId: challengeId,
            clientId: clientId, pushProviderId: pushProviderId, confirmToken: confirmToken, demo: demo)
    }
}
