// The broker's hand-off API: an app takes what the relay left for its session key.
import Foundation
import HTTPTypes
import Hummingbird
import KeywardJOSE
import KeywardWire

/// `POST /realms/{realm}/v1/broker/handoff/take` `{code, nonce}` with a DPoP proof by the session key, and
/// `POST /realms/{realm}/v1/broker/handoff` `{nonce, jkt, blob, expires_in?}` by a relay client's access token. Thin:
/// proofs and tokens through the DPoP gate, the rest in `HandoffService`.
struct HandoffRoutes: Sendable {
    let service: HandoffService
    let clientRegistry: ClientService
    /// The take's proof of possession.
    let gate: DPoPResourceGuard
    /// The relay client's token: DPoP-bound with its proof, or Bearer for a client registered with --allow-bearer.
    let relayClientGate: DPoPResourceGuard
    let realmResolution: RealmResolution
    let clients: ClientNetworks
    let publicURL: String

    /// A code is 22 characters of base64url; a nonce is the app's, within `RelayRequest`'s bounds. Anything longer
    /// is refused before it is hashed.
    static let maxTakeSize = 1024
    /// A blob of `HandoffService.maxBlobSize`, with room for its JSON escapes.
    static let maxPutSize = 160 * 1024

    func register(on router: Router<KeywardRequestContext>) {
        let api = router.group("/realms/:realm/v1/broker").add(middleware: realmResolution)
        api.post("handoff/take") { request, context in try await take(request, context) }
        api.group().add(middleware: DPoPAuthentication(gate: relayClientGate, publicURL: publicURL))
            .post("handoff") { request, context in try await put(request, context) }
    }

    private func put(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let realm = try context.realm.name
        let caller = try context.caller(DPoPResourceGuard.Caller.self)
        guard let clientId = caller.claims["client_id"]?.stringValue, let client = try await clientRegistry.client(realm: realm, clientId: clientId) else {
            throw APIError(.forbidden, .unauthorizedClient, "the access token names no client of this realm")
        }
        let body = try await JSONRequestBody.object(request, maxSize: Self.maxPutSize)
        guard case .string(let nonce)? = body["nonce"], !nonce.isEmpty, nonce.utf8.count <= 256 else {
            throw APIError(.badRequest, .invalidRequest, "nonce must be the nonce the app sent to the relay (a string of 1-256 bytes)")
        }
        guard case .string(let jkt)? = body["jkt"], Self.isThumbprint(jkt) else {
            throw APIError(.badRequest, .invalidRequest, "jkt must be the RFC 7638 SHA-256 thumbprint of the app's session key (43 base64url characters)")
        }
        guard case .string(let blob)? = body["blob"], !blob.isEmpty, blob.utf8.count <= HandoffService.maxBlobSize else {
            throw APIError(.badRequest, .invalidRequest, "blob must be a string of 1-\(HandoffService.maxBlobSize) bytes")
        }
        var lifetime: TimeInterval?
        if let given = body["expires_in"] {
            guard case .number(let seconds) = given, seconds == seconds.rounded(), seconds >= 1, seconds <= HandoffService.maxLifetime else {
                throw APIError(.badRequest, .invalidRequest, "expires_in must be a whole number of seconds from 1 to \(Int(HandoffService.maxLifetime))")
            }
            lifetime = seconds
        }
        let stored = try await service.putBlob(realm: realm, client: client, nonce: nonce, jkt: jkt, blob: blob, lifetime: lifetime)
        return JSONResponse.make(
            HandoffPutResponse(code: stored.code, expiresIn: Int(stored.lifetime)), status: .created, headers: [.cacheControl: "no-store"]
        )
    }

    private static func isThumbprint(_ text: String) -> Bool {
        text.utf8.count == 43 && Base64URL.isAlphabet(text)
    }

    private func take(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let realm = try context.realm
        let body = try await JSONRequestBody.object(request, maxSize: Self.maxTakeSize)
        guard case .string(let code)? = body["code"], !code.isEmpty, code.utf8.count <= 64 else {
            throw APIError(.badRequest, .invalidRequest, "code must be the hand-off code from the return URL (a string of 1-64 bytes)")
        }
        guard case .string(let nonce)? = body["nonce"], !nonce.isEmpty, nonce.utf8.count <= 256 else {
            throw APIError(.badRequest, .invalidRequest, "nonce must be the nonce the app sent to the relay (a string of 1-256 bytes)")
        }
        let proof: DPoPVerifier.Verified
        do throws(DPoPResourceGuard.Refusal) {
            proof = try await gate.proofOfPossession(.init(
                realm: realm, method: request.method.rawValue, url: publicURL + request.uri.path, authorization: [],
                dpopProofs: request.headers.dpopProofs
            ))
        } catch {
            guard error.reason != .unavailable else { throw HandoffService.unavailable }
            throw APIError(.badRequest, .invalidDPoPProof, error.message)
        }
        let handoff = try await service.take(
            realm: realm.name, code: code, nonce: nonce, jkt: proof.thumbprint, address: clients.client(request, context)
        )
        return JSONResponse.make(HandoffTakeResponse(kind: handoff.kind.rawValue, value: handoff.blob, clientId: handoff.clientId), headers: [.cacheControl: "no-store"])
    }
}
