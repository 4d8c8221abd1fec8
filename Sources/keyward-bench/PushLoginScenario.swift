// The push-MFA login benchmark: browser and phone round trips from push to approval, closed or open loop.
import Foundation
import KeywardJOSE
import KeywardKit
import Synchronization

/// Full push-MFA login round trips, each as a browser and a phone would do it: the browser asks for a push
/// (Resend on the waiting page: challenge created, push sent) and opens the challenge's SSE stream; the phone
/// lists its pending challenges and approves with the number shown; the round trip ends when the browser's stream
/// reports APPROVED. One user with one enrolled device per concurrent login.
struct PushLoginScenario: Sendable {
    let baseURL: String
    let port: Int
    /// The CLI on the started server's database, which creates the users.
    let cli: KeywardCLI
    let concurrency: Int
    let threads: WorkerThreads
    let log: @Sendable (String) -> Void

    /// One virtual user: a password-verified browser session and an enrolled phone.
    struct Participant: Sendable {
        let username: String
        let cookie: String
        let csrf: String
        let device: PushMFAClient
        let accessToken: String
    }

    /// How round trips are started: back to back per user (closed loop: measures capacity), or at a fixed rate
    /// whatever the server's pace (open loop: measures latency at that load).
    enum Pace: Sendable {
        case backToBack(perUser: Int)
        case fixedRate(perSecond: Double, total: Int)
    }

    /// Sets up the users, then runs one measurement per pace with the same users.
    func run(paces: [Pace]) async throws -> [ScenarioResult] {
        log("push login: setting up \(concurrency) users with enrolled devices (number match)")
        try admin(["push-mfa", "settings", "--realm", "demo", "userVerification=number-match"])
        var participants: [Participant] = []
        for index in 0..<concurrency {
            participants.append(try await participant(index))
            if (index + 1) % 25 == 0 { log("push login: \(index + 1)/\(concurrency) ready") }
        }
        return paces.map { measure(participants, pace: $0) }
    }

    static func paces(roundTrips: Int, concurrency: Int, rate: Double?) -> [Pace] {
        var paces: [Pace] = [.backToBack(perUser: max(1, roundTrips / concurrency))]
        if let rate { paces.append(.fixedRate(perSecond: rate, total: roundTrips)) }
        return paces
    }

    /// One thread per user. At a fixed rate, round trip i is due at start + i / rate and its latency counts from
    /// then, so time spent waiting for a free user (the server falling behind) is part of the figure.
    private func measure(_ participants: [Participant], pace: Pace) -> ScenarioResult {
        let name: String
        switch pace {
        case .backToBack(let perUser):
            log("push login: \(perUser * participants.count) round trips, \(participants.count) logins at a time")
            name = "push login x\(participants.count)"
        case .fixedRate(let rate, let total):
            log("push login: \(total) round trips started at \(Int(rate))/s, at most \(participants.count) at a time")
            name = "push login \(Int(rate))/s, <=\(participants.count)"
        }
        let clock = ContinuousClock()
        let nextIndex = Atomic<Int>(0)
        let started = clock.now
        let workers = participants.map { participant -> @Sendable () -> LoadRunner.Outcome in
            { [self] in
                var outcome = LoadRunner.Outcome()
                do {
                    let browser = try RawHTTPConnection(port: port)
                    let phone = try RawHTTPConnection(port: port)
                    while let due = Self.nextDue(pace, finished: outcome.latencies.count, counter: nextIndex, started: started, clock: clock) {
                        if due > clock.now { Thread.sleep(forTimeInterval: (due - clock.now).seconds) }
                        do {
                            try roundTrip(participant, browser: browser, phone: phone)
                        } catch {
                            outcome.fail(error)
                        }
                        outcome.latencies.append(clock.now - due)
                    }
                } catch {
                    outcome.fail(error)
                }
                return outcome
            }
        }
        return ScenarioResult(name: name, outcome: threads.run(workers))
    }

    /// When this worker's next round trip is due, or nil when its share is done.
    private static func nextDue(
        _ pace: Pace, finished: Int, counter: borrowing Atomic<Int>, started: ContinuousClock.Instant,
        clock: ContinuousClock
    ) -> ContinuousClock.Instant? {
        switch pace {
        case .backToBack(let perUser):
            return finished < perUser ? clock.now : nil
        case .fixedRate(let rate, let total):
            let index = counter.wrappingAdd(1, ordering: .relaxed).oldValue
            guard index < total else { return nil }
            return started + .nanoseconds(Int64(Double(index) / rate * 1e9))
        }
    }

    /// Resend → SSE PENDING → pending list → approve with the number → SSE APPROVED.
    private func roundTrip(_ user: Participant, browser: RawHTTPConnection, phone: RawHTTPConnection) throws {
        let page = try browser.send(RawHTTPConnection.request(
            method: "POST", path: "/realms/demo/login/push", port: port,
            headers: [("Cookie", user.cookie), ("Content-Type", "application/x-www-form-urlencoded")],
            body: "csrf=\(user.csrf)&refresh=true"
        ))
        guard page.status == 200, let number = RawHTTPConnection.between(page.body, #"aria-describedby="instruction">"#, "<"),
            let eventsPath = RawHTTPConnection.between(page.body, #"data-events-url=""#, "\""), let cid = RawHTTPConnection.between(page.body, #"name="challengeId" value=""#, "\"")
        else { throw BenchError("waiting page: \(page.status) \(String(decoding: page.body.prefix(200), as: UTF8.self))") }

        // The page's connection is idle now: the browser's EventSource takes it, as a keep-alive connection.
        let stream = browser
        try stream.write(RawHTTPConnection.request(method: "GET", path: eventsPath, port: port, headers: [("Accept", "text/event-stream")]))
        try stream.readUntil("\"PENDING\"")

        let pendingURL = baseURL + "/realms/demo/push-mfa/login/pending"
        let pending = try phone.send(RawHTTPConnection.request(
            method: "GET", path: "/realms/demo/push-mfa/login/pending?userId=\(user.device.state.userId)", port: port,
            headers: try deviceHeaders(user, method: "GET", url: pendingURL)
        ))
        guard pending.status == 200, String(decoding: pending.body, as: UTF8.self).contains(cid) else {
            throw BenchError("pending: \(pending.status) \(String(decoding: pending.body, as: UTF8.self).prefix(200))")
        }
        let respondPath = "/realms/demo/push-mfa/login/challenges/\(cid)/respond"
        let now = Date().timeIntervalSince1970.rounded(.down)
        let answer = try JWS.sign(header: ["typ": "JWT"], claims: [
            "cid": .string(cid), "credId": .string(user.device.state.credentialId), "deviceId": .string(user.device.state.deviceId),
            "action": "approve", "userVerification": .string(number), "exp": .number(now + 120),
        ], key: user.device.key)
        let approved = try phone.send(RawHTTPConnection.request(
            method: "POST", path: respondPath, port: port,
            headers: try deviceHeaders(user, method: "POST", url: baseURL + respondPath) + [("Content-Type", "application/json")],
            body: "{\"token\":\"\(answer)\"}"
        ))
        guard approved.status == 200 else { throw BenchError("respond: \(approved.status) \(String(decoding: approved.body, as: UTF8.self))") }
        try stream.readUntil("\"APPROVED\"")
        try stream.readToEndOfChunkedBody()
    }

    private func deviceHeaders(_ user: Participant, method: String, url: String) throws -> [(String, String)] {
        let proof = try DPoPProof.make(
            key: user.device.key, method: method, url: url, issuedAt: Date(), accessToken: user.accessToken,
            extraClaims: ["sub": .string(user.device.state.userId), "deviceId": .string(user.device.state.deviceId)]
        )
        return [("Authorization", "DPoP " + user.accessToken), ("DPoP", proof)]
    }

    /// A user, its password-verified browser session (cookie + CSRF) and its phone, set up through the real API.
    private func participant(_ index: Int) async throws -> Participant {
        let username = "bench-\(KeywardCLI.runTag)-\(index)"
        try admin(["users", "create", "--realm", "demo", username], password: "bench-password")
        let link = try admin(["enrollment-link", "--realm", "demo", "--username", username]).trimmingCharacters(in: .whitespacesAndNewlines)
        var options = PushMFAClient.EnrollmentOptions()
        options.pushProviderType = "log"
        // An in-memory key: the bench's phones live as long as the run.
        let device = try await PushMFAClient.enroll(
            link: try EnrollmentLink.parse(link), issuer: baseURL + "/realms/demo", clientId: "push-device-client",
            clientSecret: "device-client-secret", key: try SigningKey.generate(.es256), options: options
        )
        let accessToken = try await device.accessToken()

        let connection = try RawHTTPConnection(port: port)
        let login = try connection.send(RawHTTPConnection.request(method: "GET", path: "/realms/demo/login", port: port, headers: []))
        guard let anonymous = login.cookie, let csrf = RawHTTPConnection.between(login.body, #"name="csrf" value=""#, "\"") else {
            throw BenchError("login page without cookie or CSRF field")
        }
        let signedIn = try connection.send(RawHTTPConnection.request(
            method: "POST", path: "/realms/demo/login", port: port,
            headers: [("Cookie", anonymous), ("Content-Type", "application/x-www-form-urlencoded")],
            body: "csrf=\(csrf)&username=\(username)&password=bench-password"
        ))
        guard signedIn.status == 303, let cookie = signedIn.cookie else { throw BenchError("password login failed: \(signedIn.status)") }
        let waiting = try connection.send(RawHTTPConnection.request(method: "GET", path: "/realms/demo/login/push", port: port, headers: [("Cookie", cookie)]))
        guard waiting.status == 200, let sessionCSRF = RawHTTPConnection.between(waiting.body, #"name="csrf" value=""#, "\"") else {
            throw BenchError("waiting page: \(waiting.status)")
        }
        return Participant(username: username, cookie: cookie, csrf: sessionCSRF, device: device, accessToken: accessToken)
    }

    @discardableResult
    private func admin(_ arguments: [String], password: String? = nil) throws -> String {
        var environment = ["KEYWARD_ACCOUNTS_BCRYPT_COST": "4"]
        if let password { environment["KEYWARD_NEW_PASSWORD"] = password }
        return try cli.run(arguments, environment: environment)
    }
}
