// Access tokens for Google APIs (FCM, Play Integrity) from a service account, cached until near expiry.
import AsyncHTTPClient
import Foundation
import KeywardJOSE
import NIOHTTP1

/// Why no access token could be had; the sender logs it. Never carries the token itself.
enum GoogleAccessTokenError: Error, CustomStringConvertible {
    case signing(String)
    case transport(String)
    case rejected(status: Int, body: String)
    case malformedResponse(String)

    var description: String {
        switch self {
        case .signing(let reason): "cannot sign the token assertion: \(reason)"
        case .transport(let reason): "token endpoint unreachable: \(reason)"
        case .rejected(let status, let body): "token endpoint answered HTTP \(status): \(body)"
        case .malformedResponse(let reason): "token endpoint answer unusable: \(reason)"
        }
    }
}

/// OAuth 2.0 access tokens for a Google API (FCM, Play Integrity) from a service account (RFC 7523 JWT bearer
/// grant), cached until shortly before they expire. Being an actor with one shared refresh task means a burst of
/// logins makes one token request, not one each.
actor GoogleAccessTokenSource {
    static let firebaseMessaging = "https://www.googleapis.com/auth/firebase.messaging"
    static let playIntegrity = "https://www.googleapis.com/auth/playintegrity"
    static let assertionLifetime: TimeInterval = 3600
    /// Refresh this long before expiry so a token never dies between our check and FCM's.
    static let refreshMargin: TimeInterval = 60
    /// Used when the token endpoint leaves `expires_in` out (Google always sends 3599/3600).
    static let defaultLifetime: TimeInterval = 3600

    private struct AccessToken: Sendable {
        let value: String
        let refreshAfter: Date
    }

    private let account: GoogleServiceAccount
    private let scope: String
    private let httpClient: HTTPClient
    private let clock: CurrentDate
    private var cached: AccessToken?
    private var refresh: Task<AccessToken, any Error>?

    init(account: GoogleServiceAccount, scope: String, httpClient: HTTPClient, clock: @escaping CurrentDate) {
        self.account = account
        self.scope = scope
        self.httpClient = httpClient
        self.clock = clock
    }

    func token() async throws(GoogleAccessTokenError) -> String {
        if let cached, clock() < cached.refreshAfter {
            return cached.value
        }
        if let refresh {
            return try await Self.value(of: refresh).value
        }
        let task = Task { try await self.fetch() }
        refresh = task
        defer { refresh = nil }
        let fresh = try await Self.value(of: task)
        cached = fresh
        return fresh.value
    }

    /// FCM said 401: forget the token so the next push fetches a new one (unless another caller already did).
    func invalidate(_ token: String) {
        if cached?.value == token {
            cached = nil
        }
    }

    private static func value(of task: Task<AccessToken, any Error>) async throws(GoogleAccessTokenError) -> AccessToken {
        do {
            return try await task.value
        } catch let error as GoogleAccessTokenError {
            throw error
        } catch {
            throw .transport(String(describing: error))
        }
    }

    private nonisolated func fetch() async throws -> AccessToken {
        let issuedAt = clock()
        let assertion = try makeAssertion(issuedAt: issuedAt)
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        headers.add(name: "Accept", value: "application/json")
        let body = Array(String.formEncoded([
            ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
            ("assertion", assertion),
        ]).utf8)
        let response: OutboundHTTPResponse
        do {
            response = try await OutboundHTTP.post(httpClient, url: account.tokenURI, headers: headers, body: body)
        } catch {
            throw GoogleAccessTokenError.transport(String(describing: error))
        }
        guard response.isSuccess else {
            throw GoogleAccessTokenError.rejected(status: response.status, body: response.bodyExcerpt())
        }
        let object: JSONObject
        do {
            object = try StrictJSON.parseObject(response.body)
        } catch {
            throw GoogleAccessTokenError.malformedResponse("not a JSON object")
        }
        guard let value = object.string("access_token"), !value.isEmpty else {
            throw GoogleAccessTokenError.malformedResponse("no access_token")
        }
        var lifetime = Self.defaultLifetime
        if let expiresIn = object["expires_in"] {
            guard let seconds = expiresIn.numberValue, seconds > 0 else {
                throw GoogleAccessTokenError.malformedResponse("expires_in is not a positive number")
            }
            lifetime = seconds
        }
        // Time the lifetime from when we asked, not when the answer came: errs on the early side.
        return AccessToken(value: value, refreshAfter: issuedAt.addingTimeInterval(lifetime - Self.refreshMargin))
    }

    private nonisolated func makeAssertion(issuedAt: Date) throws(GoogleAccessTokenError) -> String {
        let iat = Int(issuedAt.timeIntervalSince1970.rounded(.down))
        var header: JSONObject = ["typ": "JWT"]
        if let kid = account.privateKeyId {
            header["kid"] = .string(kid)
        }
        let claims: JSONObject = [
            "iss": .string(account.clientEmail),
            "sub": .string(account.clientEmail),
            "aud": .string(account.tokenURI),
            "scope": .string(scope),
            "iat": .number(Double(iat)),
            "exp": .number(Double(iat) + Self.assertionLifetime),
        ]
        do {
            return try JWS.sign(header: header, claims: claims, key: account.signingKey)
        } catch {
            throw .signing(error.message)
        }
    }
}
