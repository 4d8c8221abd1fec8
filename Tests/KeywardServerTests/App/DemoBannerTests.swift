// What `keyward serve --demo` prints: the pages to open, the phone to try, and how to run keyward-device.
import KeywardServer
import XCTest

final class DemoBannerTests: XCTestCase {
    func testDemoBannerNamesThePagesAndThePhone() {
        let lines = DemoBanner.lines(base: "http://127.0.0.1:8080", device: "keyward-device")
        let text = lines.joined(separator: "\n")
        XCTAssertTrue(text.contains("sign in:    http://127.0.0.1:8080/realms/demo/login   (user test, password test)"), text)
        XCTAssertTrue(text.contains("account:    http://127.0.0.1:8080/realms/demo/account"), text)
        XCTAssertTrue(text.contains("export KEYWARD_CLIENT_SECRET=device-client-secret"), text)
        XCTAssertTrue(text.contains("keyward-device enroll --issuer http://127.0.0.1:8080/realms/demo '<enrollment link>'"), text)
        XCTAssertTrue(text.contains("keyward-device approve <cid>"), text)
        for endpoint in ["/.well-known/openid-configuration", "/protocol/openid-connect/certs", "/protocol/openid-connect/token", "/v1/whoami"] {
            XCTAssertTrue(text.contains("http://127.0.0.1:8080/realms/demo" + endpoint), endpoint)
        }
    }

    func testDeviceCommandFollowsWhereKeywardRuns() {
        let nothing: (String) -> Bool = { _ in false }
        let everything: (String) -> Bool = { _ in true }
        XCTAssertEqual(DemoBanner.deviceCommand(executablePath: "/src/keyward/.build/x86_64-unknown-linux-gnu/release/keyward", isExecutable: nothing), "swift run -c release keyward-device")
        XCTAssertEqual(DemoBanner.deviceCommand(executablePath: "/src/keyward/.build/debug/keyward", isExecutable: nothing), "swift run keyward-device")
        XCTAssertEqual(DemoBanner.deviceCommand(executablePath: "/usr/local/bin/keyward", searchPath: "/usr/bin:/usr/local/bin", isExecutable: everything), "keyward-device")
        XCTAssertEqual(DemoBanner.deviceCommand(executablePath: "/opt/keyward/keyward", searchPath: "/usr/bin", isExecutable: everything), "/opt/keyward/keyward-device")
        XCTAssertEqual(DemoBanner.deviceCommand(executablePath: "/opt/keyward/keyward", searchPath: "/usr/bin", isExecutable: nothing), "keyward-device")
    }
}
