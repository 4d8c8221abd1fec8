// The device's own passkeys on Apple platforms (AuthenticationServices); compiled only where that SDK exists.
#if canImport(AuthenticationServices) && (os(iOS) || os(macOS) || os(visionOS))
import AuthenticationServices
import Foundation
import KeywardJOSE
import KeywardWire

/// The platform's passkeys (iCloud Keychain, or a nearby phone) through `ASAuthorizationPlatformPublicKeyCredentialProvider`.
/// The app must list the realm's RP ID under `webcredentials:` in its Associated Domains entitlement, and the
/// realm's host must serve the matching `/.well-known/apple-app-site-association` (Keyward does, from
/// `keyward apps`). The platform writes the client data itself, with the RP ID's origin.
///
/// Built only where AuthenticationServices exists (iOS 16, macOS 13, visionOS); the Linux build has the
/// ``SoftwarePasskeyAuthenticator`` instead.
@available(iOS 16.0, macOS 13.0, *)
public final class PlatformPasskeyAuthenticator: NSObject, PasskeyAuthenticator, @unchecked Sendable {
    // The anchor is touched only on the main actor (`perform`); the class holds nothing else that changes.
    private let anchor: ASPresentationAnchor

    @MainActor
    public init(anchor: ASPresentationAnchor) {
        self.anchor = anchor
    }

    public func create(_ options: PublicKeyCredentialCreationOptionsJSON, origin: String) async throws -> RegistrationResponseJSON {
        let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: options.rp.id)
        let request = provider.createCredentialRegistrationRequest(
            challenge: Data(try Base64URL.decode(options.challenge)), name: options.user.name, userID: Data(try Base64URL.decode(options.user.id))
        )
        request.userVerificationPreference = .init(rawValue: options.authenticatorSelection.userVerification)
        guard let registration = try await perform(request).credential as? ASAuthorizationPlatformPublicKeyCredentialRegistration,
            let attestationObject = registration.rawAttestationObject
        else { throw KeywardKitError.unexpectedResponse("the platform answered the passkey request with no registration") }
        let id = Base64URL.encode(registration.credentialID)
        return RegistrationResponseJSON(id: id, response: .init(
            clientDataJSON: Base64URL.encode(registration.rawClientDataJSON), attestationObject: Base64URL.encode(attestationObject), transports: ["internal", "hybrid"]
        ), authenticatorAttachment: "platform")
    }

    public func get(_ options: PublicKeyCredentialRequestOptionsJSON, origin: String) async throws -> AuthenticationResponseJSON {
        let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: options.rpId)
        let request = provider.createCredentialAssertionRequest(challenge: Data(try Base64URL.decode(options.challenge)))
        request.allowedCredentials = try options.allowCredentials.map {
            ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: Data(try Base64URL.decode($0.id)))
        }
        request.userVerificationPreference = .init(rawValue: options.userVerification)
        guard let assertion = try await perform(request).credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion else {
            throw KeywardKitError.unexpectedResponse("the platform answered the passkey request with no assertion")
        }
        return AuthenticationResponseJSON(id: Base64URL.encode(assertion.credentialID), response: .init(
            clientDataJSON: Base64URL.encode(assertion.rawClientDataJSON), authenticatorData: Base64URL.encode(assertion.rawAuthenticatorData),
            signature: Base64URL.encode(assertion.signature), userHandle: Base64URL.encode(assertion.userID)
        ), authenticatorAttachment: "platform")
    }

    /// Runs one authorization request on the main actor and waits for its answer.
    @MainActor
    private func perform(_ request: ASAuthorizationRequest) async throws -> ASAuthorization {
        let delegate = ControllerDelegate(anchor: anchor)
        let controller = ASAuthorizationController(authorizationRequests: [request])
        controller.delegate = delegate
        controller.presentationContextProvider = delegate
        // The controller holds its delegate weakly: both stay alive until the answer comes.
        defer { withExtendedLifetime((delegate, controller)) {} }
        return try await withCheckedThrowingContinuation { continuation in
            delegate.continuation = continuation
            controller.performRequests()
        }
    }
}

/// The controller's delegate for one request: resumes the waiting call once.
@available(iOS 16.0, macOS 13.0, *)
@MainActor
private final class ControllerDelegate: NSObject, ASAuthorizationControllerDelegate, ASAuthorizationControllerPresentationContextProviding {
    let anchor: ASPresentationAnchor
    var continuation: CheckedContinuation<ASAuthorization, any Error>?

    init(anchor: ASPresentationAnchor) {
        self.anchor = anchor
    }

    func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor { anchor }

    func authorizationController(controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization) {
        continuation?.resume(returning: authorization)
        continuation = nil
    }

    func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error) {
        continuation?.resume(throwing: error)
        continuation = nil
    }
}
#endif
