// What makes and uses passkeys for PasskeyClient: the platform's authenticator on Apple devices, or one in software.
import Foundation
import KeywardWire

/// Creates passkeys and signs with them, given the relying party's options in WebAuthn Level 3's JSON forms.
/// ``PlatformPasskeyAuthenticator`` is the device's own (iCloud Keychain, a security key) on Apple platforms;
/// ``SoftwarePasskeyAuthenticator`` keeps keys in a file, for tests, demos and `keyward-device`.
public protocol PasskeyAuthenticator: Sendable {
    /// `origin`: the origin the ceremony runs for (the realm's public origin for a web page; an app's own origin is
    /// written by the platform).
    func create(_ options: PublicKeyCredentialCreationOptionsJSON, origin: String) async throws -> RegistrationResponseJSON
    func get(_ options: PublicKeyCredentialRequestOptionsJSON, origin: String) async throws -> AuthenticationResponseJSON
}
