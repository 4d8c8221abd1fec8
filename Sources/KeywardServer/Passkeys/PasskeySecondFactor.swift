// A passkey as the login flow's second step, the account page's passkeys, and the passkeys counted as ways in.
import Foundation

/// A passkey as the second step after a password or a provider (`SecondFactor`): the step when the realm offers
/// passkeys and the user has one that still signs in; first among the factors when the realm prefers passkeys.
/// It also counts the user's passkeys as ways into the account (`SignInMethods`).
struct PasskeySecondFactor: SecondFactor, SignInMethods {
    let service: PasskeyService

    /// RFC 8176: a proof of possession of a hardware-protected key.
    static let amr = "hwk"

    var amr: String { Self.amr }

    /// Whether `session` waits for a second step a passkey may take: not when a passkey was its first factor (a
    /// realm that asks for a second step after a passkey asks for another factor).
    static func isOpen(for session: BrowserSession) -> Bool {
        session.stage == .passwordVerified && !session.amr.contains(amr)
    }

    func step(realm: String, userId: String, newUser: Bool) async throws -> SecondFactorStep {
        guard !newUser, try await service.settings.settings(realm: realm).mode != .off else { return .skip }
        let usable = try await service.passkeys(realm: realm, userId: userId).contains { $0.possiblyClonedAt == nil }
        return usable ? .verify(next: PageURLs.passkeyStep(realm)) : .skip
    }

    /// Nothing is held between the options and the answer: the challenge lives in the browser.
    func abandon(_ session: BrowserSession) async {}

    func precedence(realm: String) async throws -> Int {
        try await service.settings.settings(realm: realm).mode == .preferred ? 1 : -1
    }

    func accountSection(realm: String, user: User, session: BrowserSession) async throws -> [String: Any] {
        let settings = try await service.settings.settings(realm: realm)
        guard settings.mode != .off else { return [:] }
        let passkeys = try await service.passkeys(realm: realm, userId: user.id)
        let waysIn = try await service.users.waysIn(realm: realm, user: user)
        let usable = passkeys.filter { $0.possiblyClonedAt == nil }
        // As `removeUnlessLastWayIn` decides: a usable passkey with no other way beside it stays.
        func isLastWayIn(_ passkey: Passkey) -> Bool { waysIn == 0 && passkey.possiblyClonedAt == nil && usable.count == 1 }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        let rows: [[String: Any]] = passkeys.map { passkey in
            var row: [String: Any] = [
                "name": passkey.name, "kind": passkey.kind, "created": formatter.string(from: passkey.createdAt),
                "lastUsed": passkey.lastUsedAt.map(formatter.string(from:)) ?? "never", "csrf": session.csrfToken,
                "renameAction": PageURLs.account(realm) + "/passkeys/\(passkey.credentialId)/rename",
                "removeAction": PageURLs.account(realm) + "/passkeys/\(passkey.credentialId)/remove",
            ]
            if passkey.possiblyClonedAt != nil { row["suspended"] = true }
            if !isLastWayIn(passkey) { row["canRemove"] = true }
            return row
        }
        return [
            "passkeysOn": true, "passkeys": rows, "hasPasskeys": !rows.isEmpty, "canAddPasskey": session.signedInRecently(now: service.clock.now()),
            "passkeySignInAgainURL": PageURLs.login(realm) + "?reauth=1&return_to=" + PageURLs.account(realm),
            "passkeyOptionsURL": "/realms/\(realm)/webauthn/registration/options", "passkeyRegisterURL": "/realms/\(realm)/webauthn/registration",
        ]
    }

    /// The passkeys that sign in: none while the realm has passkeys off.
    func count(realm: String, userId: String) async throws -> Int {
        guard try await service.settings.settings(realm: realm).mode != .off else { return 0 }
        return try await service.passkeys(realm: realm, userId: userId).filter { $0.possiblyClonedAt == nil }.count
    }
}

/// The sign-in page's passkey button, and with `preferred` the browser's autofill of passkeys (conditional mediation).
struct PasskeySignInSection: SignInPageSection {
    let service: PasskeyService

    func signInSection(realm: String, csrf: String) async throws -> [String: Any] {
        let mode = try await service.settings.settings(realm: realm).mode
        guard mode != .off else { return [:] }
        return [
            "passkeys": [
                "optionsURL": "/realms/\(realm)/webauthn/authentication/options", "url": "/realms/\(realm)/webauthn/authentication", "csrf": csrf,
                "conditional": mode == .preferred,
            ] as [String: Any],
        ]
    }
}
