// A passkey authenticator in software: P-256 keys in a file, a counter, the user-verified flag it is told to set.
import Crypto
import Foundation
import KeywardCBOR
import KeywardJOSE
import KeywardWire

/// A passkey authenticator in software, **for tests and demos only**: its keys are a file on disk, and it "verifies
/// the person" by setting a flag. A server that requires attestation refuses it (its statement is `none`). Apps use
/// the platform's authenticator (``PlatformPasskeyAuthenticator``).
///
/// Each passkey is a P-256 key (ES256) with a signature counter that grows with each use, kept in `file` (mode 0600)
/// after every ceremony.
public actor SoftwarePasskeyAuthenticator: PasskeyAuthenticator {
    /// One stored passkey.
    public struct Credential: Codable, Sendable, Equatable {
        public var id: String
        public var rpId: String
        /// base64url of the user handle the relying party gave.
        public var userHandle: String
        public var userName: String
        /// P-256 private key, raw, base64url.
        public var privateKey: String
        public var signCount: UInt32
    }

    public let file: URL
    /// Whether ceremonies report the person verified (UV); a test of a realm that requires it turns it off.
    public var userVerified: Bool
    private var credentials: [Credential]

    public init(file: URL, userVerified: Bool = true) throws {
        self.file = file
        self.userVerified = userVerified
        if let data = try? Data(contentsOf: file) {
            guard let stored = try? JSONDecoder().decode([Credential].self, from: data) else { throw KeywardKitError.corruptStateFile(file.path) }
            credentials = stored
        } else {
            credentials = []
        }
    }

    public var stored: [Credential] { credentials }

    public func setUserVerified(_ value: Bool) { userVerified = value }

    public func create(_ options: PublicKeyCredentialCreationOptionsJSON, origin: String) async throws -> RegistrationResponseJSON {
        guard options.pubKeyCredParams.contains(where: { $0.alg == -7 }) else {
            throw KeywardKitError.invalidOption("passkey", "the relying party does not accept ES256, the only algorithm this authenticator has")
        }
        let excluded = Set(options.excludeCredentials.map(\.id))
        if credentials.contains(where: { excluded.contains($0.id) }) {
            throw KeywardKitError.invalidOption("passkey", "this authenticator holds a passkey of this account already")
        }
        let key = P256.Signing.PrivateKey()
        let id = Base64URL.encode(SecureRandom.bytes(16))
        let point = Array(key.publicKey.x963Representation)
        let coseKey = CBORValue.map([
            CBORMapEntry(.integer(1), .integer(2)), CBORMapEntry(.integer(3), .integer(-7)), CBORMapEntry(.integer(-1), .integer(1)),
            CBORMapEntry(.integer(-2), .bytes(Array(point[1..<33]))), CBORMapEntry(.integer(-3), .bytes(Array(point[33..<65]))),
        ])
        let idBytes = try Base64URL.decode(id)
        let authData = Self.head(rpID: options.rp.id, flags: 0x41 | (userVerified ? 0x04 : 0), signCount: 0)
            + [UInt8](repeating: 0, count: 16) + [UInt8(idBytes.count >> 8), UInt8(idBytes.count & 0xFF)] + idBytes + coseKey.encoded
        let object = CBORValue.map([
            CBORMapEntry(.text("fmt"), .text("none")), CBORMapEntry(.text("attStmt"), .map([])), CBORMapEntry(.text("authData"), .bytes(authData)),
        ])
        let clientData = Self.clientData(type: "webauthn.create", challenge: options.challenge, origin: origin)
        credentials.append(Credential(
            id: id, rpId: options.rp.id, userHandle: options.user.id, userName: options.user.name, privateKey: Base64URL.encode(key.rawRepresentation),
            signCount: 0
        ))
        try save()
        return RegistrationResponseJSON(
            id: id, response: .init(clientDataJSON: Base64URL.encode(clientData), attestationObject: Base64URL.encode(object.encoded), transports: ["internal"])
        )
    }

    public func get(_ options: PublicKeyCredentialRequestOptionsJSON, origin: String) async throws -> AuthenticationResponseJSON {
        let allowed = Set(options.allowCredentials.map(\.id))
        guard let index = credentials.firstIndex(where: { $0.rpId == options.rpId && (allowed.isEmpty || allowed.contains($0.id)) }) else {
            throw KeywardKitError.invalidOption("passkey", "no passkey for \(options.rpId)\(allowed.isEmpty ? "" : " among the ones the relying party named") in \(file.path)")
        }
        credentials[index].signCount += 1
        let credential = credentials[index]
        let authData = Self.head(rpID: options.rpId, flags: 0x01 | (userVerified ? 0x04 : 0), signCount: credential.signCount)
        let clientData = Self.clientData(type: "webauthn.get", challenge: options.challenge, origin: origin)
        let key = try P256.Signing.PrivateKey(rawRepresentation: try Base64URL.decode(credential.privateKey))
        let signature = try key.signature(for: authData + Array(SHA256.hash(data: clientData)))
        try save()
        return AuthenticationResponseJSON(id: credential.id, response: .init(
            clientDataJSON: Base64URL.encode(clientData), authenticatorData: Base64URL.encode(authData),
            signature: Base64URL.encode(signature.derRepresentation), userHandle: credential.userHandle
        ))
    }

    /// rpIdHash ‖ flags ‖ signCount (§6.1).
    static func head(rpID: String, flags: UInt8, signCount: UInt32) -> [UInt8] {
        Array(SHA256.hash(data: Array(rpID.utf8))) + [flags] + withUnsafeBytes(of: signCount.bigEndian, Array.init)
    }

    /// `{"type", "challenge", "origin", "crossOrigin": false}` (§5.8.1).
    static func clientData(type: String, challenge: String, origin: String) -> [UInt8] {
        StrictJSON.serialize(["type": .string(type), "challenge": .string(challenge), "origin": .string(origin), "crossOrigin": .bool(false)])
    }

    /// Written with mode 0600 from the start (never a moment at the umask's mode) and renamed into place.
    private func save() throws {
        try PrivateFile.createDirectory(file.deletingLastPathComponent())
        try PrivateFile.write(try JSONEncoder().encode(credentials), to: file)
    }
}
