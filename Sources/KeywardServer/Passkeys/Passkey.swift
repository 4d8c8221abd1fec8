// A registered passkey, and what its store does.
import Foundation

/// A passkey as Keyward keeps it: whose it is, its key and counter, what the authenticator said of it.
public struct Passkey: Sendable, Equatable {
    public var realm: String
    /// base64url of the credential id.
    public var credentialId: String
    public var userId: String
    /// base64url of the COSE_Key.
    public var publicKey: String
    /// COSE algorithm: -7, -8 or -257.
    public var algorithm: Int
    public var signCount: UInt32
    /// May be synced to other devices (BE, fixed for the credential's life).
    public var backupEligible: Bool
    /// Synced now (BS, as last seen).
    public var backedUp: Bool
    /// The last ceremony verified the person (UV).
    public var userVerified: Bool
    public var transports: [String]
    /// The authenticator model's AAGUID, as a UUID string (all zeros when it gave none).
    public var aaguid: String
    public var attestationFormat: String
    public var attestationTrusted: Bool
    /// The person's name for it: the authenticator's, then what they chose.
    public var name: String
    public var createdAt: Date
    public var lastUsedAt: Date?
    /// When a sign-in showed a counter that did not grow (§6.1.1): the credential may have been copied, and it no
    /// longer signs in until its owner removes it.
    public var possiblyClonedAt: Date?

    /// How the account page describes it.
    public var kind: String { backupEligible ? "synced" : "this device only" }
}

protocol PasskeyStore: Sendable {
    /// false when the credential id is registered already in the realm (to anyone).
    func insert(_ passkey: Passkey) async throws -> Bool
    func passkey(realm: String, credentialId: String) async throws -> Passkey?
    func passkeys(realm: String, userId: String) async throws -> [Passkey]
    /// Records a use: the counter moves from `expectedSignCount` to `signCount` only if nobody moved it first.
    /// false when another use did.
    func recordUse(realm: String, credentialId: String, expectedSignCount: UInt32, signCount: UInt32, backedUp: Bool, userVerified: Bool, at: Date) async throws -> Bool
    /// Marks the passkey as possibly cloned (its counter went back).
    func markPossiblyCloned(realm: String, credentialId: String, at: Date) async throws
    func rename(realm: String, userId: String, credentialId: String, name: String) async throws -> Bool
    func delete(realm: String, userId: String, credentialId: String) async throws -> Bool
    func deleteAll(realm: String, userId: String) async throws -> Int
}
