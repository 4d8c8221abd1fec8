// A refresh-token family: the sign-in an app holds, its rotation count, and the store that keeps families.
import Crypto
import Foundation
import KeywardJOSE

/// What an app holds after an authorization code: a sign-in of one user at one client, from one browser session,
/// refreshed by rotating tokens. Each refresh spends its token's generation in Core's single-use records and hands
/// out the next one; presenting a spent one again revokes the whole family (RFC 9700 §4.14.2).
struct RefreshFamily: Sendable, Equatable {
    /// The authorization code's id: a reused code finds the family it started.
    var id: String
    var realm: String
    var clientId: String
    var userId: String
    var sessionId: String
    var scope: String
    /// The proof key every refresh must be signed by, when the family is DPoP-bound (RFC 9449 §5).
    var jkt: String?
    var authTime: Date
    var amr: [String]
    var acr: String
    /// The generation of the newest token handed out, as far as the family's uses are written: never ahead of the
    /// real one, so a presented token below it was spent. Which token is spent is decided by the single-use records.
    var generation: Int64
    var createdAt: Date
    var lastUsedAt: Date
    var expiresAt: Date
    var revokedAt: Date?

    /// How long an app stays signed in without signing in again, however often it refreshes.
    static let lifetime: TimeInterval = 30 * 86400

    func isLive(now: Date) -> Bool { revokedAt == nil && expiresAt > now }
}

protocol RefreshFamilyStore: Sendable {
    /// Inserts a new family; false when one with its id exists already (a reuse of its code revoked it first).
    func insert(_ family: RefreshFamily) async throws -> Bool
    func family(realm: String, id: String) async throws -> RefreshFamily?
    /// Writes that the families were refreshed: their newest generation (never moved back) and last use.
    func recordUses(_ uses: [RefreshFamilyUse]) async throws
    /// Revokes the family, writing it revoked when it does not exist yet (a code reused before its first redemption
    /// stored the family); returns whether this call revoked it (false: it was revoked already).
    func revoke(_ family: RefreshFamily, now: Date) async throws -> Bool
    /// The user's live families, newest first.
    func liveFamilies(realm: String, userId: String, now: Date) async throws -> [RefreshFamily]
    /// Revokes the user's live family `id`; returns whether there was one.
    func revoke(realm: String, userId: String, id: String, now: Date) async throws -> Bool
    /// Revokes every live family of the user; returns how many.
    func revokeAll(realm: String, userId: String, now: Date) async throws -> Int
    /// Revokes every live family of the user that came from these browser sessions; returns how many.
    func revokeAll(realm: String, userId: String, sessionIds: [String], now: Date) async throws -> Int
    /// Revokes every live family of the realm bound to the key `jkt` (a removed device's); returns how many.
    func revokeAll(realm: String, jkt: String, now: Date) async throws -> Int
    /// Binds the realm's live families bound to the key `from` to the key `to` (a registered device rotated it);
    /// returns how many.
    func rebind(realm: String, from: String, to: String) async throws -> Int
    /// Deletes families past their expiry, revoked or not; returns how many.
    func deleteExpired(now: Date) async throws -> Int
}

/// One refresh of a family: the generation it handed out, and when.
struct RefreshFamilyUse: Sendable, Equatable {
    let familyId: String
    let generation: Int64
    let at: Date
}

/// The refresh token of one generation of a family: the family's id, the generation and an HMAC over both under a
/// key derived from the master key, base64url. Nothing else is stored for it: the family row says what it grants.
struct RefreshToken: Sendable, Equatable {
    static let keyPurpose = "keyward refresh token v1"
    private static let idLength = 16
    private static let macLength = 32

    let familyId: String
    let generation: Int64

    func encoded(realm: String, key: SymmetricKey) -> String {
        var bytes = (try? Base64URL.decode(familyId)) ?? []
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: generation).bigEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: Self.mac(bytes, realm: realm, key: key))
        return Base64URL.encode(bytes)
    }

    /// The token's family and generation, when its MAC is this server's for `realm`.
    init?(_ text: String, realm: String, key: SymmetricKey) {
        guard text.utf8.count <= 128, let bytes = try? Base64URL.decode(text), bytes.count == Self.idLength + 4 + Self.macLength else { return nil }
        let body = Array(bytes.prefix(Self.idLength + 4))
        guard HMAC<SHA256>.isValidAuthenticationCode(bytes.suffix(Self.macLength), authenticating: Self.macInput(body, realm: realm), using: key)
        else { return nil }
        familyId = Base64URL.encode(body.prefix(Self.idLength))
        generation = Int64(body.suffix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
    }

    init(familyId: String, generation: Int64) {
        self.familyId = familyId
        self.generation = generation
    }

    private static func macInput(_ body: [UInt8], realm: String) -> [UInt8] { Array(realm.utf8) + [0] + body }

    private static func mac(_ body: [UInt8], realm: String, key: SymmetricKey) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: macInput(body, realm: realm), using: key))
    }
}
