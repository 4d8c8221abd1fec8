// Finding out through Graph whom a Facebook user token is for, and that it was issued to Keyward's app.
import Crypto
import Foundation
import KeywardJOSE

/// Facebook Login has no id_token: after the code exchange Keyward holds a user access token and must find out
/// whom it is for and whether it was issued to Keyward's app at all (a token of another app would sign its user
/// in here: the "token substitution" Facebook's docs warn about). So: Graph `debug_token`, asked with the app
/// access token (`app_id|app_secret`), must say `is_valid`, our `app_id` and a `user_id`; then `/me` with
/// `appsecret_proof` (hex HMAC-SHA256 of the token under the app secret, so a leaked token alone cannot call
/// Graph as Keyward) gives the profile, whose `id` must be that user. The e-mail Graph returns has no verified
/// flag and is never treated as verified.
struct FacebookIdentityCheck: Sendable {
    let http: ProviderTokenClient

    func identity(accessToken: String, provider: IdentityProvider, appSecret: String) async throws(SignInFailure) -> ProviderIdentity {
        guard let endpoints = provider.endpoints, let me = endpoints.userinfo else {
            throw SignInFailure(.providerMisconfigured, "facebook provider '\(provider.alias)' has no Graph endpoints")
        }
        let userId = try await debugToken(accessToken, endpoint: endpoints.facebookDebugToken, provider: provider, appSecret: appSecret)
        let proof = HexDigit.lowercase(Array(HMAC<SHA256>.authenticationCode(for: Array(accessToken.utf8), using: SymmetricKey(data: Array(appSecret.utf8)))))
        let (status, profile) = try await http.getJSON(
            me + "?" + String.formEncoded([("fields", "id,name,email"), ("access_token", accessToken), ("appsecret_proof", proof)]), purpose: "Graph /me"
        )
        guard status == .ok, let profile else {
            throw SignInFailure(.accessTokenInvalid, "Graph /me refused the user token: \(ProviderTokenClient.errorText(profile, status: status))")
        }
        guard profile.string("id") == userId else {
            throw SignInFailure(.accessTokenInvalid, "Graph /me names another user than debug_token")
        }
        return ProviderIdentity(
            subject: userId, email: profile.string("email").map { String($0.prefix(320)) }, emailVerified: false,
            name: profile.string("name").map { String($0.prefix(200)) }
        )
    }

    /// The app-scoped user id the token is for, once debug_token vouches that it is a valid token of this app.
    private func debugToken(_ token: String, endpoint: String, provider: IdentityProvider, appSecret: String) async throws(SignInFailure) -> String {
        let (status, answer) = try await http.getJSON(
            endpoint + "?" + String.formEncoded([("input_token", token), ("access_token", provider.clientId + "|" + appSecret)]), purpose: "Graph debug_token"
        )
        guard status == .ok, let data = answer?["data"]?.objectValue else {
            // Refused as a whole: the app token (our id and secret) is wrong, which is the operator's to fix.
            throw SignInFailure(.providerMisconfigured, "Graph debug_token refused Keyward's app token: \(ProviderTokenClient.errorText(answer, status: status))")
        }
        guard data["is_valid"]?.boolValue == true else {
            throw SignInFailure(.accessTokenInvalid, "Graph debug_token says the user token is not valid")
        }
        // Graph sends app ids as strings; compared as text, exactly.
        let appId = data.string("app_id") ?? data["app_id"]?.numberValue.flatMap { Int64(exactly: $0) }.map(String.init)
        guard appId == provider.clientId else {
            throw SignInFailure(.accessTokenWrongApp, "the user token was issued to Facebook app \(appId.map { String($0.prefix(64)) } ?? "(none)"), not \(provider.clientId)")
        }
        let userId = data.string("user_id") ?? data["user_id"]?.numberValue.flatMap { Int64(exactly: $0) }.map(String.init)
        guard let userId, (1...255).contains(userId.utf8.count) else {
            throw SignInFailure(.accessTokenInvalid, "Graph debug_token names no user for the token")
        }
        return userId
    }
}
