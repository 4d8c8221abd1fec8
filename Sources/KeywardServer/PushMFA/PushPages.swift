// The browser side of push MFA: the login's waiting page and the enrollment page with its QR code.
import Foundation
import HTTPTypes
import Hummingbird
import KeywardQR

/// The browser side of push MFA: the waiting page of the login's push step (docs/PUSH-MFA-PROTOCOL.md §6.1) and the enrollment
/// page with Keyward's own QR code (§6.2). Thin: session and form in, service call, page out.
struct PushPages: Sendable {
    let renderer: PageRenderer
    let browser: BrowserRequests
    let users: UserService
    let pushMFA: PushMFAService
    let throttle: LoginThrottle
    let clock: any KeywardClock

    func register(on router: some RouterMethods<KeywardRequestContext>) {
        router.get("/realms/:realm/login/push") { request, context in try await wait(request, context, form: nil) }
        router.post("/realms/:realm/login/push") { request, context in
            try await withForm(request, context) { form, session in try await wait(request, context, form: form, session: session) }
        }
        router.get("/realms/:realm/account/enroll") { request, context in try await enroll(request, context, form: nil) }
        router.post("/realms/:realm/account/devices/:id/remove") { request, context in try await removeDevice(request, context) }
        router.post("/realms/:realm/account/enroll") { request, context in
            try await withForm(request, context) { form, session in try await enroll(request, context, form: form, session: session) }
        }
    }


    /// Checks the posted form's CSRF token against the browser's session and hands both on.
    private func withForm(
        _ request: Request, _ context: KeywardRequestContext, _ body: ([String: String], BrowserSession) async throws -> Response
    ) async throws -> Response {
        let realm = try context.realm.name
        guard let session = try await browser.session(request, realm: realm) else { return renderer.redirect(to: PageURLs.login(realm) + "?notice=expired") }
        guard let form = try await browser.form(request), BrowserSessionService.csrfMatches(form["csrf"], session) else {
            return renderer.formExpired(realm: realm, backToAccount: false)
        }
        return try await body(form, session)
    }

    // MARK: - Account page: removing a phone

    private func removeDevice(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let realm = try context.realm.name
        guard let (session, userId) = try await browser.signedIn(request, realm: realm) else { return renderer.redirect(to: PageURLs.login(realm)) }
        guard let form = try await browser.form(request), BrowserSessionService.csrfMatches(form["csrf"], session) else {
            return renderer.formExpired(realm: realm, backToAccount: false)
        }
        // Taking a second factor away changes how the account is reached: only soon after a sign-in.
        guard session.signedInRecently(now: clock.now()) else { return renderer.signInAgain(realm) }
        do {
            try await pushMFA.removeDevice(realm: realm, userId: userId, credentialId: context.parameters.get("id") ?? "")
        } catch StoreError.notFound {
            return renderer.page("message", title: "Not found", realm: realm, context: [
                "heading": "Device not found", "text": "That device is not one of yours, or it was removed already.", "isError": true,
                "link": ["href": PageURLs.account(realm), "label": "Back to your account"],
            ], status: .notFound)
        }
        return renderer.redirect(to: PageURLs.account(realm) + "?notice=removed")
    }

    // MARK: - Login push step

    /// `session` is the one a form post was checked against; a GET reads it here.
    private func wait(_ request: Request, _ context: KeywardRequestContext, form: [String: String]?, session posted: BrowserSession? = nil) async throws -> Response {
        let realmRecord = try context.realm
        let realm = realmRecord.name
        let current = if let posted { posted } else { try await browser.session(request, realm: realm) }
        guard var session = current, session.stage == .passwordVerified,
            let userId = session.userId, let user = try await users.user(realm: realm, id: userId)
        else { return renderer.redirect(to: PageURLs.login(realm) + "?notice=expired") }
        // Another factor the person holds (a passkey) is offered beside the phone, which may be out of reach.
        let alternatives: [[String: String]] = try await browser.plugins.otherSteps(realm: realm, userId: userId, besides: PageURLs.pushWait(realm), after: session.amr)
            .compactMap { $0 == PageURLs.passkeyStep(realm) ? ["href": $0, "label": "Use a passkey instead"] : nil }

        if form?["cancel"] != nil {
            if let id = session.challengeId { try await pushMFA.cancelLogin(challengeId: id, sessionId: session.idHash) }
            try await browser.sessions.end(session)
            return renderer.redirect(to: PageURLs.login(realm) + "?notice=cancelled", headers: browser.clearCookie)
        }
        if form?["refresh"] != nil || form?["retry"] != nil || session.challengeId == nil {
            let languages = AcceptLanguage.preferences(request.headers[.acceptLanguage])
            switch try await pushMFA.startLogin(realm: realmRecord, user: user, clientId: session.clientId, sessionId: session.idHash, languages: languages) {
            case .created(let challenge, let secret, let sameDeviceLink, let confirmToken):
                session.challengeId = challenge.id
                session.challengeSecret = secret
                try await browser.sessions.save(session)
                let devices = try await pushMFA.waitingDevices(realm: realm, userId: userId, challenge: challenge)
                return waitingPage(
                    request, realmRecord, session, challenge, demoToken: confirmToken, sameDeviceLink: sameDeviceLink, alternatives: alternatives, devices: devices
                )
            case .noDevice:
                // The device was removed after the password step: the realm's rule decides, as it did there.
                let step = PushSecondFactor.withoutDevice(realm: realm, settings: try await pushMFA.settings(realm: realm))
                let next = LoginFlow.continueAfterFirstFactor(&session, step: step)
                try await browser.sessions.save(session)
                return renderer.redirect(to: next)
            case .noApprovingDevice(let required):
                let level = required == .hardwareKey ? "a key the phone's hardware attested" : "an attested installation of the app"
                return outcome(
                    realm, session, heading: "No device can approve this sign-in",
                    text: "This realm accepts approvals only from its app on a phone with \(level), and none of your devices qualifies. Open the app on such a phone and turn on sign-in approvals there, or ask your administrator.",
                    retry: false, status: .forbidden
                )
            case .tooManyPending:
                return outcome(realm, session, heading: "Approval already pending", text: "You already have a pending push approval from another sign-in. Answer or cancel it on your phone, or wait until it expires, then try again.", retry: true, status: .tooManyRequests)
            case .waitRequired(let seconds):
                return outcome(realm, session, heading: "Please wait", text: "Too many push requests in a row. To protect your account, the next one can be sent shortly.", retry: true, waitSeconds: seconds, status: .tooManyRequests)
            }
        }
        guard let challenge = try await session.challengeId.asyncMap({ try await pushMFA.challenge(id: $0) }) ?? nil else {
            return outcome(realm, session, heading: "Approval expired", text: "The push approval is no longer valid. Send a new one to continue.", retry: true)
        }
        switch challenge.status {
        case .pending:
            let aid = realmRecord.demo ? try await pushMFA.confirmLinks(for: challenge) : nil
            let devices = try await pushMFA.waitingDevices(realm: realm, userId: userId, challenge: challenge)
            return waitingPage(
                request, realmRecord, session, challenge, demoToken: aid?.confirmToken, sameDeviceLink: aid?.sameDeviceLink, alternatives: alternatives,
                devices: devices
            )
        case .approved:
            await pushMFA.discardChallenge(id: challenge.id)
            LoginFlow.secondFactorVerified(&session, amr: PushSecondFactor.amr)
            session.challengeId = nil
            session.challengeSecret = nil
            try await browser.sessions.save(session)
            return renderer.redirect(to: session.returnTo ?? PageURLs.account(realm))
        case .denied:
            await pushMFA.discardChallenge(id: challenge.id)
            try await throttle.recordFailure(realm: realm, username: user.username)
            try await browser.sessions.end(session)
            return outcome(realm, nil, heading: "Login denied", text: "The login was denied on your phone. If that was not you, your password may be known to someone else: change it.", retry: false, status: .forbidden, headers: browser.clearCookie)
        case .expired:
            return outcome(realm, session, heading: "Approval expired", text: "Your phone did not answer in time.", retry: true)
        case .userLockedOut:
            try await browser.sessions.end(session)
            return outcome(realm, nil, heading: "Account locked", text: "This account was locked from the phone. Contact your administrator to unlock it.", retry: false, status: .forbidden, headers: browser.clearCookie)
        }
    }

    /// The page's form is submitted when the phone answers, and its redirect continues where the sign-in was going.
    private func waitingPage(
        _ request: Request, _ realm: Realm, _ session: BrowserSession, _ challenge: PushChallenge, demoToken: String?, sameDeviceLink: String?,
        alternatives: [[String: String]], devices: [String]
    ) -> Response {
        var page: [String: Any] = [
            "alternatives": alternatives, "devices": devices, "hasDevices": !devices.isEmpty,
            "action": PageURLs.pushWait(realm.name), "csrf": session.csrfToken, "challengeId": challenge.id,
            "eventsURL": "/realms/\(realm.name)/push-mfa/login/challenges/\(challenge.id)/events?secret=\(session.challengeSecret ?? "")",
            "hasVerification": challenge.userVerification != .none,
        ]
        switch challenge.userVerification {
        case .numberMatch(let expected, _): page["numberMatch"] = ["value": expected]
        case .pin(let pin): page["pin"] = ["value": pin]
        case .none: break
        }
        // Demo realms show the confirm token, as the original's waiting page does for command-line clients.
        if realm.demo, let demoToken, let sameDeviceLink {
            page["demo"] = ["confirmToken": demoToken, "sameDeviceLink": sameDeviceLink]
        }
        return renderer.page(
            "push-wait", title: "Approve on your phone", realm: realm.name, context: page, refreshSeconds: 5,
            formTargets: browser.formTargets(request, realm: realm.name, returnTo: session.returnTo)
        )
    }

    private func outcome(
        _ realm: String, _ session: BrowserSession?, heading: String, text: String, retry: Bool, waitSeconds: Int? = nil,
        status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]
    ) -> Response {
        var page: [String: Any] = ["heading": heading, "text": text, "isError": status.code >= 400, "loginURL": PageURLs.login(realm), "action": PageURLs.pushWait(realm)]
        if retry, let session { page["retry"] = true; page["csrf"] = session.csrfToken }
        if let waitSeconds { page["waitSeconds"] = waitSeconds }
        return renderer.page("push-outcome", title: heading, realm: realm, context: page, status: status, headers: headers)
    }

    // MARK: - Enrollment

    private func enroll(_ request: Request, _ context: KeywardRequestContext, form: [String: String]?, session posted: BrowserSession? = nil) async throws -> Response {
        let realm = try context.realm.name
        let current = if let posted { posted } else { try await browser.session(request, realm: realm) }
        guard var session = current, session.stage == .authenticated || session.stage == .enrollmentRequired,
            let userId = session.userId, let user = try await users.user(realm: realm, id: userId)
        else { return renderer.redirect(to: PageURLs.login(realm) + "?return_to=" + PageURLs.enroll(realm)) }

        let existing = try await session.enrollmentId.asyncMap { try await pushMFA.challenge(id: $0) } ?? nil
        if let existing, existing.status == .approved, form?["refresh"] == nil {
            // The phone completed it: continue where the login was going.
            session.enrollmentId = nil
            session.enrollmentSecret = nil
            let wasRequired = session.stage == .enrollmentRequired
            session.stage = .authenticated
            try await browser.sessions.save(session)
            return renderer.redirect(to: wasRequired ? (session.returnTo ?? PageURLs.account(realm)) : PageURLs.account(realm))
        }
        // Another phone for a signed-in account is another way to approve its sign-ins: only soon after a sign-in, as
        // linking a provider. (A sign-in that must enroll its first phone has just given its first factor.)
        if session.stage == .authenticated, !session.signedInRecently(now: clock.now()) {
            return renderer.signInAgain(realm, then: PageURLs.enroll(realm))
        }
        var error: String?
        if form?["confirm"] != nil { error = "No Push MFA credential found yet. Scan the code with your phone first." }
        var start: EnrollmentStart?
        if form?["refresh"] != nil || existing == nil || existing?.status != .pending {
            start = try await pushMFA.startEnrollment(realm: realm, user: user)
            session.enrollmentId = start!.challenge.id
            session.enrollmentSecret = start!.watchSecret
            try await browser.sessions.save(session)
        }
        let link: String
        let challenge: PushChallenge
        if let start {
            link = start.link
            challenge = start.challenge
        } else {
            // Same challenge, freshly signed link (the page was reloaded).
            let reissued = try await pushMFA.enrollmentLink(for: existing!, user: user)
            link = reissued
            challenge = existing!
        }
        let qr = try QRCode(text: link, errorCorrection: .medium)
        // At least 4 px per module and about 300 px across, so a phone reads even a dense token link off a screen;
        // the stylesheet shrinks it only to fit a narrow window.
        let moduleSize = max(4, Int((300.0 / Double(qr.size + 8)).rounded(.up)))
        var page: [String: Any] = [
            "qrSVG": qr.svg(moduleSize: moduleSize, label: "Enrollment QR code"), "link": link, "csrf": session.csrfToken, "action": PageURLs.enroll(realm),
            "eventsURL": "/realms/\(realm)/push-mfa/enroll/challenges/\(challenge.id)/events?secret=\(session.enrollmentSecret ?? "")",
            "ttlMinutes": max(1, Int(challenge.expiresAt.timeIntervalSince(challenge.createdAt) / 60)),
            "required": session.stage == .enrollmentRequired, "canSkip": session.stage == .authenticated, "accountURL": PageURLs.account(realm),
        ]
        if let error { page["error"] = error }
        // A required enrollment continues where the sign-in was going when its form is submitted.
        let targets = session.stage == .enrollmentRequired ? browser.formTargets(request, realm: realm, returnTo: session.returnTo) : []
        return renderer.page("enroll", title: "Add a device", realm: realm, context: page, refreshSeconds: 10, formTargets: targets)
    }
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}
