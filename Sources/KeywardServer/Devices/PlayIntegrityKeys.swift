// An Android app's Play Integrity response keys from Play Console, checked and kept sealed.
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

    /// The keys from Play Console's two files, for `keyward apps add` and the apps file alike: both files or
    /// neither (nil). Each path comes with the name the operator gave it under, for the error that names it.
    public static func read(
        decryption: (path: String, setting: String)?, verification: (path: String, setting: String)?
    ) throws(DeviceAppError) -> PlayIntegrityKeys? {
        func contents(_ file: (path: String, setting: String)) throws(DeviceAppError) -> String {
            guard let data = FileManager.default.contents(atPath: file.path) else { throw DeviceAppError("\(file.setting): cannot read \(file.path)") }
            return String(decoding: data, as: UTF8.self)
        }
        // A file that cannot be read is named first: the more particular mistake.
        let decryptionKey = try decryption.map(contents)
        let verificationKey = try verification.map(contents)
        switch (decryptionKey, verificationKey) {
        case (nil, nil): return nil
        case (let decryptionKey?, let verificationKey?): return try PlayIntegrityKeys(decryptionKey: decryptionKey, verificationKey: verificationKey)
        default:
            let given = decryption?.setting ?? verification?.setting ?? ""
            throw DeviceAppError("\(given) was given alone: Play Integrity needs both key files, the decryption and the verification key")
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
