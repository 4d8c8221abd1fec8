// Test support: a realm's device API on loopback, written from the README's contract, with scriptable answers.
import Crypto
import Foundation
import KeywardJOSE
import Synchronization

/// The device API of a realm on a loopback listener, written from the README's contract rather than from KeywardKit:
/// challenges it issued and spends once, registrations whose proof it verifies with swift-crypto, signed requests
/// whose message it rebuilds itself and checks against the registered key (time window, replay), and key rotation.
/// `script` puts canned answers (a 503, a 400) in front of an endpoint's own. The real server is in EndToEndTests.
final class FakeDeviceRealm: Sendable {
    struct Device: Sendable {
        var publicKey: [UInt8]
        var rotatedAt: String?
    }

    static let realmPath = "/realms/demo/v1/device/"
    private let core: Core
    let http: LoopbackHTTPServer

    init(serverTime: Int64) throws {
        let core = Core(serverTime: serverTime)
        self.core = core
        http = try LoopbackHTTPServer { core.answer($0) }
    }

    var issuer: String { http.baseURL + "/realms/demo" }
    var requests: [LoopbackHTTPServer.Request] { http.requests }
    /// The requests to one endpoint (`challenge`, `register`, `status`, `rotate-key`).
    func requests(to endpoint: String) -> [LoopbackHTTPServer.Request] {
        requests.filter { $0.path.hasPrefix(FakeDeviceRealm.realmPath + endpoint) }
    }

    func device(_ id: String) -> Device? { core.state.withLock { $0.devices[id] } }
    func setServerTime(_ time: Int64) { core.state.withLock { $0.serverTime = time } }
    /// Switches the device to `point` behind the client's back (a rotation whose answer never arrived).
    func replaceKey(deviceId: String, with point: [UInt8]) { core.state.withLock { $0.devices[deviceId]?.publicKey = point } }

    /// The next `count` requests to `endpoint` are carried out, but answered 503 (a proxy that gave up).
    func loseAnswers(_ endpoint: String, count: Int = 1) {
        core.state.withLock { $0.lostAnswers[endpoint, default: 0] += count }
    }

    /// Answers given, in order, before `endpoint` behaves as itself.
    func script(_ endpoint: String, _ answers: LoopbackHTTPServer.Answer...) {
        core.state.withLock { $0.scripted[endpoint, default: []].append(contentsOf: answers) }
    }

    func stop() { http.stop() }

    static func refusal(_ status: Int, _ code: String, serverTimestamp: Int64? = nil) -> LoopbackHTTPServer.Answer {
        var body: JSONObject = ["error": .string(code), "message": .string("refused by the fake realm")]
        if let serverTimestamp { body["server_timestamp"] = .number(Double(serverTimestamp)) }
        return .init(status: status, body: Data(StrictJSON.serialize(body)))
    }
}

private final class Core: Sendable {
    struct State {
        var issued: Set<String> = []
        var spent: Set<String> = []
        var devices: [String: FakeDeviceRealm.Device] = [:]
        var seenMessages: Set<[UInt8]> = []
        var scripted: [String: [LoopbackHTTPServer.Answer]] = [:]
        var lostAnswers: [String: Int] = [:]
        var serverTime: Int64
    }

    let state: Mutex<State>

    init(serverTime: Int64) {
        state = Mutex(State(serverTime: serverTime))
    }

    func answer(_ request: LoopbackHTTPServer.Request) -> LoopbackHTTPServer.Answer {
        let target = request.path
        guard target.hasPrefix(FakeDeviceRealm.realmPath) else { return FakeDeviceRealm.refusal(404, "not_found") }
        let endpoint = String(target.dropFirst(FakeDeviceRealm.realmPath.count).prefix { $0 != "?" })
        if let canned = state.withLock({ $0.scripted[endpoint]?.isEmpty == false ? $0.scripted[endpoint]!.removeFirst() : nil }) {
            return canned
        }
        let answer: LoopbackHTTPServer.Answer
        switch (request.method, endpoint) {
        case ("POST", "challenge"): answer = challenge()
        case ("POST", "register"): answer = register(request)
        case ("GET", "status"), ("POST", "status"): answer = status(request)
        case ("POST", "rotate-key"): answer = rotate(request)
        default: answer = FakeDeviceRealm.refusal(404, "not_found")
        }
        let lost = state.withLock { state in
            guard let count = state.lostAnswers[endpoint], count > 0 else { return false }
            state.lostAnswers[endpoint] = count - 1
            return true
        }
        return lost ? FakeDeviceRealm.refusal(503, "unavailable") : answer
    }

    private func challenge() -> LoopbackHTTPServer.Answer {
        let challenge = Base64URL.encode(Array(SHA256.hash(data: Array(UUID().uuidString.utf8))))
        state.withLock { _ = $0.issued.insert(challenge) }
        return json(200, ["challenge": .string(challenge), "expires_at": "2030-03-17T17:46:40Z", "ttl_seconds": 90])
    }

    private func register(_ request: LoopbackHTTPServer.Request) -> LoopbackHTTPServer.Answer {
        guard let body = try? StrictJSON.parseObject(Array(request.body)), let challenge = body.string("challenge"),
            let keyText = body.string("public_key"), let point = Data(base64Encoded: keyText).map(Array.init),
            let proofText = body.string("proof"), let proof = Data(base64Encoded: proofText), let deviceId = body.string("device_id")
        else { return FakeDeviceRealm.refusal(400, "invalid_request") }
        guard Self.verify(proof, by: point, over: Array(challenge.utf8)) else { return FakeDeviceRealm.refusal(400, "INVALID_PROOF") }
        return state.withLock { state in
            guard state.issued.contains(challenge), state.spent.insert(challenge).inserted else { return FakeDeviceRealm.refusal(400, "INVALID_CHALLENGE") }
            if let existing = state.devices[deviceId] {
                guard existing.publicKey == point else { return FakeDeviceRealm.refusal(409, "DEVICE_ID_TAKEN") }
                return json(200, Self.registration(deviceId, code: "ALREADY_REGISTERED"))
            }
            state.devices[deviceId] = FakeDeviceRealm.Device(publicKey: point)
            return json(201, Self.registration(deviceId, code: nil))
        }
    }

    private static func registration(_ deviceId: String, code: String?) -> JSONObject {
        var answer: JSONObject = ["device_id": .string(deviceId), "status": "registered", "registered_at": "2030-03-17T17:45:10Z"]
        if let code { answer["code"] = .string(code) }
        return answer
    }

    private func status(_ request: LoopbackHTTPServer.Request) -> LoopbackHTTPServer.Answer {
        switch authenticate(request) {
        case .failure(let refused): return refused.answer
        case .success(let deviceId): return json(200, statusBody(deviceId))
        }
    }

    private func rotate(_ request: LoopbackHTTPServer.Request) -> LoopbackHTTPServer.Answer {
        let deviceId: String
        switch authenticate(request) {
        case .failure(let refused): return refused.answer
        case .success(let id): deviceId = id
        }
        guard let body = try? StrictJSON.parseObject(Array(request.body)), let challenge = body.string("challenge"),
            let point = body.string("new_public_key").flatMap({ Data(base64Encoded: $0) }).map(Array.init),
            let proof = body.string("proof").flatMap({ Data(base64Encoded: $0) })
        else { return FakeDeviceRealm.refusal(400, "invalid_request") }
        guard Self.verify(proof, by: point, over: Array(challenge.utf8)) else { return FakeDeviceRealm.refusal(400, "INVALID_PROOF") }
        return state.withLock { state in
            guard state.issued.contains(challenge), state.spent.insert(challenge).inserted else { return FakeDeviceRealm.refusal(400, "INVALID_CHALLENGE") }
            state.devices[deviceId] = FakeDeviceRealm.Device(publicKey: point, rotatedAt: "2030-03-17T17:50:00Z")
            return json(200, Self.statusBody(deviceId, rotatedAt: "2030-03-17T17:50:00Z"))
        }
    }

    private func statusBody(_ deviceId: String) -> JSONObject {
        Self.statusBody(deviceId, rotatedAt: state.withLock { $0.devices[deviceId]?.rotatedAt })
    }

    private static func statusBody(_ deviceId: String, rotatedAt: String?) -> JSONObject {
        var body: JSONObject = [
            "app_id": "com.example.kit", "device_id": .string(deviceId), "platform": "ios", "status": "registered",
            "registered_at": "2030-03-17T17:45:10Z",
        ]
        if let rotatedAt { body["key_rotated_at"] = .string(rotatedAt) }
        return body
    }

    /// The README's checks, in its order: the window, the device, its key's signature over the rebuilt message, once.
    private func authenticate(_ request: LoopbackHTTPServer.Request) -> Result<String, Refused> {
        let headers = request.headers
        guard let appId = headers["x-app-id"], !appId.isEmpty, let deviceId = headers["x-device-id"], let timestamp = headers["x-keyward-timestamp"],
            let nonce = headers["x-keyward-nonce"], headers["x-keyward-sig-version"] == "1",
            let signature = headers["x-keyward-signature"].flatMap({ Data(base64Encoded: $0) }), let time = Int64(timestamp)
        else { return .failure(Refused(FakeDeviceRealm.refusal(401, "INVALID_SIGNATURE"))) }
        return state.withLock { state in
            guard abs(time - state.serverTime) <= 300 else {
                return .failure(Refused(FakeDeviceRealm.refusal(401, "CLOCK_SKEW", serverTimestamp: state.serverTime)))
            }
            guard let device = state.devices[deviceId] else { return .failure(Refused(FakeDeviceRealm.refusal(401, "NOT_REGISTERED"))) }
            let digest = SHA256.hash(data: Array(request.body)).map { String(format: "%02x", $0) }.joined()
            let message = Array("\(request.method)\n\(request.path)\n\(timestamp)\n\(nonce)\n\(digest)".utf8)
            guard Self.verify(signature, by: device.publicKey, over: message) else {
                return .failure(Refused(FakeDeviceRealm.refusal(401, "INVALID_SIGNATURE")))
            }
            guard state.seenMessages.insert(message).inserted else { return .failure(Refused(FakeDeviceRealm.refusal(401, "NONCE_REPLAY"))) }
            return .success(deviceId)
        }
    }

    struct Refused: Error {
        let answer: LoopbackHTTPServer.Answer
        init(_ answer: LoopbackHTTPServer.Answer) { self.answer = answer }
    }

    /// A DER ECDSA P-256 / SHA-256 signature, as the README says the device sends.
    static func verify(_ signature: Data, by point: [UInt8], over message: [UInt8]) -> Bool {
        guard let key = try? P256.Signing.PublicKey(x963Representation: point),
            let parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature)
        else { return false }
        return key.isValidSignature(parsed, for: message)
    }
}

private func json(_ status: Int, _ object: JSONObject) -> LoopbackHTTPServer.Answer {
    .init(status: status, body: Data(StrictJSON.serialize(object)))
}
