// The paths of Keyward's pages, in one place, so a part's pages can send a browser to another part's without
// naming that part's page type.
enum PageURLs {
    static func login(_ realm: String) -> String { "/realms/\(realm)/login" }
    static func providerSignIn(_ realm: String, alias: String) -> String { "/realms/\(realm)/v1/auth/\(alias)" }
    static func account(_ realm: String) -> String { "/realms/\(realm)/account" }
    static func pushWait(_ realm: String) -> String { "/realms/\(realm)/login/push" }
    static func enroll(_ realm: String) -> String { "/realms/\(realm)/account/enroll" }
    static func passkeyStep(_ realm: String) -> String { "/realms/\(realm)/login/passkey" }
}
