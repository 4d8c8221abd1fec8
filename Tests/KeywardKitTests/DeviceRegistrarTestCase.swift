// Test support: the registrar tests' shared fake realm, state directory, fixed clock and recorded retry sleeps.
import Crypto
import Foundation
import KeywardJOSE
import KeywardKit
import Synchronization
import XCTest

/// What the registrar tests share: a `FakeDeviceRealm` on loopback, a state directory, a fixed clock, and a retry
/// policy whose sleeps are recorded instead of slept.
class DeviceRegistrarTestCase: XCTestCase {
    static let appId = "com.example.kit"
    static let serverTime: Int64 = 1_900_000_000
    let now = Date(timeIntervalSince1970: TimeInterval(DeviceRegistrarTestCase.serverTime))
    var realm: FakeDeviceRealm!
    var directory: URL!
    let sleeps = Recorder<Duration>()

    override func setUp() async throws {
        realm = try FakeDeviceRealm(serverTime: Self.serverTime)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyward-registrar-\(UUID())")
    }

    override func tearDown() async throws {
        realm.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    var keyStore: FileKeyStore { FileKeyStore(directory: directory) }
    var stateStore: FileDeviceRegistrationStore { FileDeviceRegistrationStore(directory: directory) }

    func registrar(
        issuer: String? = nil, attester: any Attester = NoAttestation(), attestationTimeout: Duration = .seconds(30),
        stateStore: (any DeviceRegistrationStore)? = nil, clock: Date? = nil
    ) -> DeviceRegistrar {
        let sleeps = sleeps
        let time = clock ?? now
        return DeviceRegistrar(
            issuer: issuer ?? realm.issuer, platform: .ios, keyStore: keyStore, stateStore: stateStore ?? self.stateStore, attester: attester,
            options: .init(retry: RetryPolicy(jitter: { 0.25 }, sleep: { sleeps.append($0) }), attestationTimeout: attestationTimeout),
            clock: { time }
        )
    }

    /// The JSON body of a recorded request.
    func body(_ request: LoopbackHTTPServer.Request) throws -> JSONObject {
        try StrictJSON.parseObject(Array(request.body))
    }

    /// The uncompressed point of the key stored under `name`.
    func publicPoint(_ name: String) throws -> [UInt8] {
        let key = try XCTUnwrap(try keyStore.key(named: name), "no key \(name)")
        guard case .ec(_, let x, let y) = key.publicJWK.material else { throw XCTSkip("not an EC key") }
        return [0x04] + x + y
    }

    func assertRefused(_ error: any Error, status: Int, code: String, file: StaticString = #filePath, line: UInt = #line) {
        guard case .server(let actualStatus, let actualCode, _)? = error as? KeywardKitError else {
            return XCTFail("not a server refusal: \(error)", file: file, line: line)
        }
        XCTAssertEqual(actualStatus, status, file: file, line: line)
        XCTAssertEqual(actualCode, code, file: file, line: line)
    }
}

/// A thread-safe list for what a `@Sendable` closure sees.
final class Recorder<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])
    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
}

/// A file store that records the phase of every save. Given a `phase` to die at, it fails that save and every later
/// one without writing: the file keeps what was saved before, as if the process had died at that moment.
final class RecordingStateStore: DeviceRegistrationStore {
    struct Died: Error {}

    let underlying: FileDeviceRegistrationStore
    let phase: RegistrationPhase?
    private let dead = Mutex(false)
    let saved = Recorder<RegistrationPhase>()

    init(_ underlying: FileDeviceRegistrationStore, diesBeforeSaving phase: RegistrationPhase? = nil) {
        self.underlying = underlying
        self.phase = phase
    }

    func state(appId: String) throws -> DeviceRegistrationState? {
        try underlying.state(appId: appId)
    }

    func save(_ state: DeviceRegistrationState) throws {
        let dies = dead.withLock { dead in
            if state.phase == phase { dead = true }
            return dead
        }
        if dies { throw Died() }
        try underlying.save(state)
        saved.append(state.phase)
    }
}
