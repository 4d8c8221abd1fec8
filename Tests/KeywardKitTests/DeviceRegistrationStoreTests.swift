// Tests: the device registration state file keeps every field, is private, keeps apps apart, refuses corruption.
import Foundation
import KeywardJOSE
import KeywardKit
import XCTest

final class DeviceRegistrationStoreTests: XCTestCase {
    private var directory: URL!

    override func setUp() {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyward-registration-\(UUID())")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: directory)
    }

    static func sample(_ appId: String = "com.example.kit") -> DeviceRegistrationState {
        var state = DeviceRegistrationState(
            appId: appId, issuer: "https://id.example.com/realms/demo", deviceId: "0f7c2d9e-8d0b-4a53-9a57-6c1d2f1c9b10",
            keyName: "device-0f7c2d9e8d0b4a539a576c1d2f1c9b10"
        )
        state.phase = .registering
        state.pendingKeyName = state.keyName + "-next"
        state.status = "registered"
        state.registeredAt = Date(timeIntervalSince1970: 1_900_000_000)
        state.keyRotatedAt = Date(timeIntervalSince1970: 1_900_000_600)
        state.clockOffsetMs = -3_599_500
        return state
    }

    func testEveryFieldSurvivesASaveAndALoad() throws {
        let store = FileDeviceRegistrationStore(directory: directory)
        XCTAssertNil(try store.state(appId: "com.example.kit"))
        let state = Self.sample()
        try store.save(state)
        XCTAssertEqual(try store.state(appId: "com.example.kit"), state)
        // A new store on the same directory (the next process) reads the same.
        XCTAssertEqual(try FileDeviceRegistrationStore(directory: directory).state(appId: "com.example.kit"), state)

        var registered = state
        try registered.move(to: .registered)
        registered.pendingKeyName = nil
        try store.save(registered)
        XCTAssertEqual(try store.state(appId: "com.example.kit"), registered)
    }

    func testTheAppAttestKeyIdSurvivesASaveAndALoad() throws {
        let store = FileDeviceRegistrationStore(directory: directory)
        var state = Self.sample()
        try state.move(to: .registered)
        state.pendingKeyName = nil
        state.appAttestKeyId = "bGmHRNrjR+yzaL3cKDZdWIE/2n0hLTl7wxb4HNmdXa8="
        try store.save(state)
        XCTAssertEqual(try FileDeviceRegistrationStore(directory: directory).state(appId: "com.example.kit"), state)
        let object = try StrictJSON.parseObject(Array(try Data(contentsOf: directory.appendingPathComponent("registration-com.example.kit.json"))))
        XCTAssertEqual(object.string("app_attest_key_id"), "bGmHRNrjR+yzaL3cKDZdWIE/2n0hLTl7wxb4HNmdXa8=")
    }

    /// A state file written before assertions were signed has no `app_attest_key_id`: the device signs with its key.
    func testAnOlderStateFileWithoutTheAppAttestKeyIdReads() throws {
        let older = """
            {
              "app_id" : "com.example.kit",
              "clock_offset_ms" : 0,
              "device_id" : "0f7c2d9e-8d0b-4a53-9a57-6c1d2f1c9b10",
              "issuer" : "https://id.example.com/realms/demo",
              "key_name" : "device-0f7c2d9e8d0b4a539a576c1d2f1c9b10",
              "phase" : "registered",
              "registered_at" : "2030-03-17T17:46:40Z",
              "status" : "registered"
            }
            """
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(older.utf8).write(to: directory.appendingPathComponent("registration-com.example.kit.json"))
        let state = try XCTUnwrap(try FileDeviceRegistrationStore(directory: directory).state(appId: "com.example.kit"))
        XCTAssertNil(state.appAttestKeyId)
        XCTAssertEqual(state.phase, .registered)
        XCTAssertEqual(state.registeredAt, Date(timeIntervalSince1970: 1_900_000_000))
        XCTAssertNil(state.keyRotatedAt)
    }

    func testTheFileIsPrivateAndNamesTheFieldsAsTheIssueDoes() throws {
        try FileDeviceRegistrationStore(directory: directory).save(Self.sample())
        let url = directory.appendingPathComponent("registration-com.example.kit.json")
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int, 0o600)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: directory.path)[.posixPermissions] as? Int, 0o700)
        let object = try StrictJSON.parseObject(Array(try Data(contentsOf: url)))
        XCTAssertEqual(Set(object.keys), [
            "app_id", "issuer", "phase", "device_id", "key_name", "pending_key_name", "status", "registered_at", "key_rotated_at", "clock_offset_ms",
        ])
        XCTAssertEqual(object.string("phase"), "registering")
        XCTAssertEqual(object.string("registered_at"), "2030-03-17T17:46:40Z")
        XCTAssertEqual(object.int("clock_offset_ms"), -3_599_500)
        // Nothing but the state file is left behind by the atomic write.
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), ["registration-com.example.kit.json"])
    }

    func testAppsAreKeptApart() throws {
        let store = FileDeviceRegistrationStore(directory: directory)
        let first = Self.sample("com.example.one")
        var second = Self.sample("com.example.two")
        second.deviceId = "another"
        try store.save(first)
        try store.save(second)
        XCTAssertEqual(try store.state(appId: "com.example.one"), first)
        XCTAssertEqual(try store.state(appId: "com.example.two"), second)

        // An app id too long for a file name gets a digest for a name, and still round-trips.
        let long = String(repeating: "a.", count: 120) + "app"
        try store.save(Self.sample(long))
        XCTAssertEqual(try store.state(appId: long)?.appId, long)
    }

    func testBadAppIdsAndCorruptFilesAreRefusedByName() throws {
        let store = FileDeviceRegistrationStore(directory: directory)
        for appId in ["", "../escape", "a/b", "with space", String(repeating: "a", count: 256)] {
            XCTAssertThrowsError(try store.state(appId: appId), appId) { error in
                XCTAssertEqual(error as? KeywardKitError, .invalidAppId(appId))
            }
        }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent("registration-com.example.kit.json")
        for content in ["{", "[]", #"{"app_id":"com.example.kit"}"#] {
            try Data(content.utf8).write(to: url)
            XCTAssertThrowsError(try store.state(appId: "com.example.kit"), content) { error in
                XCTAssertEqual(error as? KeywardKitError, .corruptStateFile(url.path))
            }
        }
        // A valid state of another app under this app's name is not this app's state.
        try store.save(Self.sample("com.example.other"))
        try FileManager.default.removeItem(at: url)
        try FileManager.default.moveItem(at: directory.appendingPathComponent("registration-com.example.other.json"), to: url)
        XCTAssertThrowsError(try store.state(appId: "com.example.kit")) { error in
            XCTAssertEqual(error as? KeywardKitError, .corruptStateFile(url.path))
        }
    }
}
