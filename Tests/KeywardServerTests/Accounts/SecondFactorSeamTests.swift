// Tests: the login flow with a scripted second factor plugged in, and user removal running each part's steps.
import Foundation
@testable import KeywardServer
import Synchronization
import XCTest

/// The one login flow with a second factor plugged in through `SecondFactor`, driven here by a factor of the test's
/// own — no push MFA: what the factor answers decides the session's stage and the next page, the flow abandons a
/// step a restarted sign-in left behind, and records the factor's `amr` once its step succeeds. `UserRemoval` runs
/// the other parts' steps around the deletion.
final class SecondFactorSeamTests: XCTestCase {
    /// Answers `answer` and remembers what it was asked.
    final class ScriptedFactor: SecondFactor, UserRemovalStep, @unchecked Sendable {
        let answer: SecondFactorStep
        let asked = Mutex<[(userId: String, newUser: Bool)]>([])
        let abandoned = Mutex<[String?]>([])
        let removing = Mutex<[(userId: String, identities: Int, userStillThere: Bool)]>([])
        let removedAfterwards = Mutex(0)
        let users: UserService?

        init(_ answer: SecondFactorStep, users: UserService? = nil) {
            self.answer = answer
            self.users = users
        }

        var amr: String { "otp" }

        func step(realm: String, userId: String, newUser: Bool) async throws -> SecondFactorStep {
            asked.withLock { $0.append((userId, newUser)) }
            return answer
        }

        func abandon(_ session: BrowserSession) async {
            abandoned.withLock { $0.append(session.challengeId) }
        }

        func accountSection(realm: String, user: User, session: BrowserSession) async throws -> [String: Any] { [:] }

        func removing(realm: String, user: User, identities: [ExternalIdentity]) async throws -> (@Sendable () async -> Void)? {
            let stillThere = try await users?.user(realm: realm, id: user.id) != nil
            removing.withLock { $0.append((user.id, identities.count, stillThere)) }
            return { self.removedAfterwards.withLock { $0 += 1 } }
        }
    }

    func testTheFactorsAnswerDecidesTheStageAndTheNextPage() async throws {
        try await TestServer.forEachEngine { server, _ in
            let runtime = server.runtime
            let user = try await runtime.accounts.users.createUser(realm: "demo", username: "seam", password: "seam-password-1")
            let cases: [(SecondFactorStep, BrowserSession.Stage, String)] = [
                (.skip, .authenticated, "/realms/demo/account"),
                (.verify(next: "/realms/demo/login/otp"), .passwordVerified, "/realms/demo/login/otp"),
                (.enroll(next: "/realms/demo/account/otp"), .enrollmentRequired, "/realms/demo/account/otp"),
            ]
            for (answer, stage, next) in cases {
                let factor = ScriptedFactor(answer)
                let completion = SignInCompletion(sessions: runtime.accounts.browserSessions, secondFactor: factor, audit: runtime.audit)
                let done = try await completion.complete(
                    user: user, factor: .password, realm: "demo", current: nil, returnTo: nil, clientId: nil, userAgent: nil, newUser: answer == .skip
                )
                XCTAssertEqual(done.next, next, "\(answer)")
                let session = try await XCTUnwrapAsync(try await runtime.accounts.browserSessions.session(cookie: done.cookie, realm: "demo"))
                XCTAssertEqual(session.stage, stage, "\(answer)")
                XCTAssertEqual(session.amr, ["pwd"])
                XCTAssertEqual(factor.asked.withLock { $0.map(\.userId) }, [user.id])
                XCTAssertEqual(factor.asked.withLock { $0.map(\.newUser) }, [answer == .skip], "newUser is handed to the factor")
                XCTAssertTrue(factor.abandoned.withLock { $0.isEmpty }, "a new session abandons nothing")
            }
        }
    }

    func testARestartedSignInAbandonsTheStepUnderWayAndTheFactorsAmrIsRecorded() async throws {
        try await TestServer.forEachEngine { server, _ in
            let runtime = server.runtime
            let sessions = runtime.accounts.browserSessions
            let user = try await runtime.accounts.users.createUser(realm: "demo", username: "seam", password: "seam-password-1")
            let factor = ScriptedFactor(.verify(next: "/realms/demo/login/otp"))
            let completion = SignInCompletion(sessions: sessions, secondFactor: factor, audit: runtime.audit)
            let first = try await completion.complete(
                user: user, factor: .password, realm: "demo", current: nil, returnTo: "/realms/demo/somewhere", clientId: nil, userAgent: nil
            )
            var underWay = try await XCTUnwrapAsync(try await sessions.session(cookie: first.cookie, realm: "demo"))
            (underWay.challengeId, underWay.challengeSecret) = ("step-1", "secret-1")
            try await sessions.save(underWay)

            let again = try await completion.complete(
                user: user, factor: .provider(alias: "corp", credentialEntered: false), realm: "demo", current: underWay, returnTo: nil,
                clientId: nil, userAgent: nil
            )
            XCTAssertEqual(factor.abandoned.withLock { $0 }, ["step-1"], "the step the old session had under way is abandoned")
            var rotated = try await XCTUnwrapAsync(try await sessions.session(cookie: again.cookie, realm: "demo"))
            XCTAssertNotEqual(rotated.idHash, underWay.idHash, "the session moves to a new id")
            XCTAssertNil(rotated.challengeId)
            XCTAssertNil(rotated.challengeSecret)
            XCTAssertEqual(rotated.amr, ["fed"], "the new first factor replaces the old")
            XCTAssertNil(rotated.authenticatedAt, "a provider answering from its own session proves no presence")
            XCTAssertEqual(rotated.returnTo, "/realms/demo/somewhere", "where the sign-in was going is kept")
            XCTAssertEqual(rotated.stage, .passwordVerified)

            LoginFlow.secondFactorVerified(&rotated, amr: factor.amr)
            XCTAssertEqual(rotated.stage, .authenticated)
            XCTAssertEqual(rotated.amr, ["fed", "otp"])
            LoginFlow.secondFactorVerified(&rotated, amr: factor.amr)
            XCTAssertEqual(rotated.amr, ["fed", "otp"], "recorded once")

            var lost = rotated
            lost.stage = .passwordVerified
            XCTAssertEqual(LoginFlow.continueAfterFirstFactor(&lost, step: .skip), "/realms/demo/somewhere")
            XCTAssertEqual(lost.stage, .authenticated)
        }
    }

    func testUserRemovalRunsEachPartsStepBeforeAndAfterTheUserGoes() async throws {
        try await TestServer.forEachEngine { server, _ in
            let users = server.runtime.accounts.users
            let user = try await users.createUser(realm: "demo", username: "leaving", password: "leaving-password-1")
            try await users.linkProvider(
                realm: "demo", userId: user.id, issuer: "https://corp.example.test", subject: "l-1",
                details: ExternalIdentity.ProviderDetails(alias: "corp", email: nil, emailVerified: false, name: nil), trustEmail: false
            )
            let steps = [ScriptedFactor(.skip, users: users), ScriptedFactor(.skip, users: users)]
            try await UserRemoval(users: users) { steps }.delete(realm: "demo", username: "leaving")
            for step in steps {
                let seen = step.removing.withLock { $0 }
                XCTAssertEqual(seen.map(\.userId), [user.id])
                XCTAssertEqual(seen.map(\.identities), [1], "the identities are read before they go")
                XCTAssertEqual(seen.map(\.userStillThere), [true], "each step runs before the user is deleted")
                XCTAssertEqual(step.removedAfterwards.withLock { $0 }, 1, "and its afterwards once the user has gone")
            }
            let gone = try await users.user(realm: "demo", id: user.id)
            XCTAssertNil(gone)
        }
    }

    /// The running server's wiring: every declared part is built, in the declared order, and each plug-in is where
    /// it belongs, in the order the parts were assembled (push phones go before the Apple tokens are revoked).
    func testTheRuntimeBuildsEveryDeclaredPartAndPlugsThemInOrder() async throws {
        try await TestServer.forEachEngine { server, _ in
            let runtime = server.runtime
            XCTAssertEqual(runtime.parts.map { "\(type(of: $0))" }, KeywardRuntime.partTypes.map { "\($0)" })
            let plugins = runtime.accounts.plugins
            XCTAssertEqual(plugins.removalSteps.map { "\(type(of: $0))" }, ["PushSecondFactor", "AppleTokenRevocation", "PasskeyRemoval"])
            XCTAssertEqual(plugins.unlinkSteps.map { "\(type(of: $0))" }, ["AppleTokenRevocation"])
            XCTAssertEqual(plugins.secondFactor.amr, "mfa", "push approval is the second factor")
            XCTAssertEqual(
                runtime.oauth.grants.all.map { "\(type(of: $0))" }, ["JWTBearerGrant", "AuthorizationCodeGrant", "RefreshTokenGrant", "DelegationGrant"]
            )
            XCTAssertEqual(runtime.oauth.grants.all.map(\.assertionType), [nil, nil, nil, "keyward-delegation+jwt"], "the delegation's jwt-bearer is told apart by typ")
            XCTAssertEqual(plugins.continuations.map { "\(type(of: $0))" }, ["PendingAuthorizations"])
            XCTAssertTrue(runtime.openID.relays.relay is BrokerRelay, "the broker's relay runs on the authorization pages")
            XCTAssertTrue(runtime.oauth.endpoints.serves(.authorization))
        }
    }

    /// A factor plugged in after the flow was built still decides: what the flow holds reads the plugged factor at
    /// each call, so no part built early can keep a sign-in from its second factor.
    func testTheFlowReadsTheFactorPluggedInAtEachCall() async throws {
        let plugins = AccountPlugins()
        let held = plugins.secondFactor
        let before = try await held.step(realm: "demo", userId: "u", newUser: false)
        XCTAssertEqual(before, .skip, "nothing plugged in: no second factor")
        plugins.plug(secondFactor: ScriptedFactor(.verify(next: "/realms/demo/login/otp")))
        let after = try await held.step(realm: "demo", userId: "u", newUser: false)
        XCTAssertEqual(after, .verify(next: "/realms/demo/login/otp"))
        XCTAssertEqual(held.amr, "otp")
    }
}
