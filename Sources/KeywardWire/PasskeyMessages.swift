// The passkey endpoints' wire messages in the JSON forms of Web Authentication Level 3 (§5.1.8, §5.4, §5.5),
// shared by the server, the pages' script (through `PublicKeyCredential.parse…FromJSON`) and KeywardKit.
// Byte strings are base64url without padding, as those forms write them.

/// `{type: "public-key", alg}`: an algorithm the relying party accepts (COSE identifiers: -7 ES256, -8 EdDSA,
/// -257 RS256).
public struct PublicKeyCredentialParametersJSON: Codable, Sendable, Equatable {
    public var type: String
    public var alg: Int

    public init(alg: Int) {
        self.type = "public-key"
        self.alg = alg
    }
}

/// A credential named in `excludeCredentials` or `allowCredentials`.
public struct PublicKeyCredentialDescriptorJSON: Codable, Sendable, Equatable {
    public var type: String
    public var id: String
    public var transports: [String]?

    public init(id: String, transports: [String]? = nil) {
        self.type = "public-key"
        self.id = id
        self.transports = transports
    }
}

/// The relying party, as options name it.
public struct PublicKeyCredentialRpEntityJSON: Codable, Sendable, Equatable {
    public var id: String
    public var name: String

    public init(id: String, name: String) {
        self.id = id
        self.name = name
    }
}

/// The account a new passkey is for: `id` is the user handle (random bytes, never the username), `name` what the
/// person picks the passkey by.
public struct PublicKeyCredentialUserEntityJSON: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    public var displayName: String

    public init(id: String, name: String, displayName: String) {
        self.id = id
        self.name = name
        self.displayName = displayName
    }
}

public struct AuthenticatorSelectionCriteriaJSON: Codable, Sendable, Equatable {
    /// `required`, `preferred` or `discouraged`.
    public var residentKey: String
    public var requireResidentKey: Bool
    /// `required`, `preferred` or `discouraged`.
    public var userVerification: String

    public init(residentKey: String, userVerification: String) {
        self.residentKey = residentKey
        self.requireResidentKey = residentKey == "required"
        self.userVerification = userVerification
    }
}

/// `PublicKeyCredentialCreationOptionsJSON`: what `POST …/webauthn/registration/options` answers.
public struct PublicKeyCredentialCreationOptionsJSON: Codable, Sendable, Equatable {
    public var rp: PublicKeyCredentialRpEntityJSON
    public var user: PublicKeyCredentialUserEntityJSON
    public var challenge: String
    public var pubKeyCredParams: [PublicKeyCredentialParametersJSON]
    /// Milliseconds.
    public var timeout: Int
    public var excludeCredentials: [PublicKeyCredentialDescriptorJSON]
    public var authenticatorSelection: AuthenticatorSelectionCriteriaJSON
    /// `none` or `direct`.
    public var attestation: String

    public init(
        rp: PublicKeyCredentialRpEntityJSON, user: PublicKeyCredentialUserEntityJSON, challenge: String,
        pubKeyCredParams: [PublicKeyCredentialParametersJSON], timeout: Int, excludeCredentials: [PublicKeyCredentialDescriptorJSON],
        authenticatorSelection: AuthenticatorSelectionCriteriaJSON, attestation: String
    ) {
        self.rp = rp
        self.user = user
        self.challenge = challenge
        self.pubKeyCredParams = pubKeyCredParams
        self.timeout = timeout
        self.excludeCredentials = excludeCredentials
        self.authenticatorSelection = authenticatorSelection
        self.attestation = attestation
    }
}

/// `PublicKeyCredentialRequestOptionsJSON`: what `POST …/webauthn/authentication/options` answers. An empty
/// `allowCredentials` asks for a discoverable credential (a sign-in without a username).
public struct PublicKeyCredentialRequestOptionsJSON: Codable, Sendable, Equatable {
    public var challenge: String
    /// Milliseconds.
    public var timeout: Int
    public var rpId: String
    public var allowCredentials: [PublicKeyCredentialDescriptorJSON]
    /// `required`, `preferred` or `discouraged`.
    public var userVerification: String

    public init(challenge: String, timeout: Int, rpId: String, allowCredentials: [PublicKeyCredentialDescriptorJSON], userVerification: String) {
        self.challenge = challenge
        self.timeout = timeout
        self.rpId = rpId
        self.allowCredentials = allowCredentials
        self.userVerification = userVerification
    }
}

/// `AuthenticatorAttestationResponseJSON`, the part of a registration Keyward reads.
public struct AuthenticatorAttestationResponseJSON: Codable, Sendable, Equatable {
    public var clientDataJSON: String
    public var attestationObject: String
    public var transports: [String]?

    public init(clientDataJSON: String, attestationObject: String, transports: [String]? = nil) {
        self.clientDataJSON = clientDataJSON
        self.attestationObject = attestationObject
        self.transports = transports
    }
}

/// `RegistrationResponseJSON`: what `PublicKeyCredential.toJSON()` gives after `navigator.credentials.create`.
public struct RegistrationResponseJSON: Codable, Sendable, Equatable {
    public var id: String
    public var rawId: String
    public var type: String
    public var response: AuthenticatorAttestationResponseJSON
    public var authenticatorAttachment: String?

    public init(id: String, response: AuthenticatorAttestationResponseJSON, authenticatorAttachment: String? = nil) {
        self.id = id
        self.rawId = id
        self.type = "public-key"
        self.response = response
        self.authenticatorAttachment = authenticatorAttachment
    }
}

/// `AuthenticatorAssertionResponseJSON`.
public struct AuthenticatorAssertionResponseJSON: Codable, Sendable, Equatable {
    public var clientDataJSON: String
    public var authenticatorData: String
    public var signature: String
    /// The user handle the credential was made for; a discoverable credential always returns it.
    public var userHandle: String?

    public init(clientDataJSON: String, authenticatorData: String, signature: String, userHandle: String?) {
        self.clientDataJSON = clientDataJSON
        self.authenticatorData = authenticatorData
        self.signature = signature
        self.userHandle = userHandle
    }
}

/// `AuthenticationResponseJSON`: what `PublicKeyCredential.toJSON()` gives after `navigator.credentials.get`.
public struct AuthenticationResponseJSON: Codable, Sendable, Equatable {
    public var id: String
    public var rawId: String
    public var type: String
    public var response: AuthenticatorAssertionResponseJSON
    public var authenticatorAttachment: String?

    public init(id: String, response: AuthenticatorAssertionResponseJSON, authenticatorAttachment: String? = nil) {
        self.id = id
        self.rawId = id
        self.type = "public-key"
        self.response = response
        self.authenticatorAttachment = authenticatorAttachment
    }
}

/// The answer to `POST …/webauthn/registration`: the new passkey.
public struct RegisteredPasskey: Codable, Sendable, Equatable {
    /// The credential id, base64url.
    public var id: String
    public var name: String
    /// The passkey may be synced to the person's other devices (backup eligible).
    public var synced: Bool
    /// The attestation format it came with: `none`, `packed` or `apple`.
    public var attestation: String

    public init(id: String, name: String, synced: Bool, attestation: String) {
        self.id = id
        self.name = name
        self.synced = synced
        self.attestation = attestation
    }
}

/// The answer to `POST …/webauthn/authentication`: where the browser goes next (the app that asked, the account
/// page, or the sign-in's second step), and how the person signed in (RFC 8176 `amr`). The session cookie comes with it.
public struct PasskeySignInResponse: Codable, Sendable, Equatable {
    public var next: String
    public var amr: [String]

    public init(next: String, amr: [String]) {
        self.next = next
        self.amr = amr
    }
}
