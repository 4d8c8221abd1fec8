// The broker relay's query, read and checked before anything else is looked at (issue 29).
import KeywardJOSE

/// `GET /realms/{realm}/auth/relay?client_id=…&nonce=…&publicKey=…&return=…` (issue 29): the app's session key as a
/// public JWK in base64url JSON (P-256 or Ed25519, nothing private), the nonce the app will check beside the code, and
/// the return address, compared with the client's registered ones by the broker (`RedirectURI.matches`).
public struct RelayRequest: Sendable, Equatable {
    public let clientId: String
    public let nonce: String
    public let sessionKey: JWK
    public let returnURL: String

    /// A refusal's text, for the page: nothing about the request is trusted yet.
    public struct Refusal: Error, Equatable {
        public let text: String
    }

    public static let maxNonceLength = 128
    public static let minNonceLength = 16
    public static let maxKeyLength = 512
    public static let maxReturnLength = 2048

    public init(_ parameters: [String: String]) throws(Refusal) {
        guard let clientId = parameters["client_id"], !clientId.isEmpty, clientId.utf8.count <= 128 else {
            throw Refusal(text: parameters["client_id"] == nil ? "The request names no app (client_id is missing)." : "The request's client_id is not valid.")
        }
        guard let returnURL = parameters["return"], !returnURL.isEmpty, returnURL.utf8.count <= Self.maxReturnLength else {
            throw Refusal(text: parameters["return"] == nil ? "The request names no return address (return is missing)." : "The request's return address is too long.")
        }
        guard let nonce = parameters["nonce"], (Self.minNonceLength...Self.maxNonceLength).contains(nonce.utf8.count),
            nonce.utf8.allSatisfy(FormBody.isUnreserved)
        else {
            throw Refusal(text: "The request's nonce must be \(Self.minNonceLength)-\(Self.maxNonceLength) letters, digits, '-', '.', '_' or '~'.")
        }
        guard let encoded = parameters["publicKey"], !encoded.isEmpty else { throw Refusal(text: "The request carries no session key (publicKey is missing).") }
        (self.clientId, self.returnURL, self.nonce) = (clientId, returnURL, nonce)
        sessionKey = try Self.sessionKey(encoded)
    }

    /// The key: base64url of a JSON object, a public P-256 or Ed25519 JWK. Its `kid`, `alg` and `use` are dropped, so
    /// the delegation names the key by its required members only.
    public static func sessionKey(_ encoded: String) throws(Refusal) -> JWK {
        guard encoded.utf8.count <= maxKeyLength else { throw Refusal(text: "The session key (publicKey) is longer than \(maxKeyLength) characters.") }
        let json: JSONObject
        do {
            json = try StrictJSON.parseObject(try Base64URL.decode(encoded))
        } catch {
            throw Refusal(text: "The session key (publicKey) is not base64url-encoded JSON.")
        }
        let key: JWK
        do throws(JOSEError) {
            key = try JWK(json: json)
        } catch {
            throw Refusal(text: "The session key (publicKey) is not a usable public key: \(error.message).")
        }
        switch key.material {
        case .ec(curve: "P-256", _, _), .okp(curve: "Ed25519", _):
            do throws(JOSEError) {
                return try JWK(material: key.material)
            } catch {
                throw Refusal(text: "The session key (publicKey) is not a usable public key: \(error.message).")
            }
        default:
            throw Refusal(text: "The session key (publicKey) must be a P-256 or Ed25519 key.")
        }
    }
}
