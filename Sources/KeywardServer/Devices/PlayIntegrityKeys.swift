import Foundation
import KeywardAttestation
import KeywardJOSE

/// An Android app's Play Integrity response keys, as Play Console gives them (classic requests decrypted and
/// verified locally): the AES-256 decryption key and the EC P-256 verification key, both base64. Kept sealed under
/// the master key in the app's row.
public struct PlayIntegrityKeys: Sendable, Equatable {
    public let decryptionKey: String
    public let verificationKey: String

    /// Checks both keys by building the decoder they make, so a wrong file is refused when the app is added.
    public init(decryptionKey: String, verificationKey: String) throws(DeviceAppError) {
        (self.decryptionKey, self.verificationKey) = (
            decryptionKey.trimmingCharacters(in: .whitespacesAndNewlines), verificationKey.trimmingCharacters(in: .whitespacesAndNewlines)
        )
        do throws(AttestationFailure) {
            _ = try decoder()
        } catch {
            throw DeviceAppError("Play Integrity keys: \(error.detail)")
        }
    }

    func decoder() throws(AttestationFailure) -> PlayIntegrityLocalDecoder {
        try PlayIntegrityLocalDecoder(decryptionKey: decryptionKey, verificationKey: verificationKey)
    }

    func sealed(for app: DeviceApp, with masterKey: MasterKey) throws -> [UInt8] {
        try masterKey.seal(StrictJSON.serialize(["decryption": .string(decryptionKey), "verification": .string(verificationKey)]), context: app.sealingContext)
    }

    static func opened(for app: DeviceApp, with masterKey: MasterKey) throws -> PlayIntegrityKeys? {
        guard let sealed = app.sealedPlayIntegrityKeys else { return nil }
        let object = try StrictJSON.parseObject(try masterKey.open(sealed, context: app.sealingContext))
        guard let decryption = object["decryption"]?.stringValue, let verification = object["verification"]?.stringValue else {
            throw StoreError.unavailable("unreadable Play Integrity keys for app '\(app.appId)'")
        }
        return try PlayIntegrityKeys(decryptionKey: decryption, verificationKey: verification)
    }
}
