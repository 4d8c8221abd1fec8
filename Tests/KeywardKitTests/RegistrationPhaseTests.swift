// Tests: the device registration state machine allows exactly the moves its table lists and refuses the rest.
import KeywardKit
import XCTest

/// The registration state machine, move by move: the path to `registered`, the ways back, rotation, a lost key,
/// and every other move refused with `invalidStateTransition`.
final class RegistrationPhaseTests: XCTestCase {
    static let allowed: Set<[RegistrationPhase]> = [
        [.unregistered, .challengeReceived],
        [.challengeReceived, .keyReady],
        [.keyReady, .registering],
        [.registering, .registered],
        // A failed or interrupted attempt starts over.
        [.challengeReceived, .unregistered],
        [.keyReady, .unregistered],
        [.registering, .unregistered],
        // Rotation, the key's loss, and the way out of it.
        [.registered, .registering],
        [.registered, .keyInvalid],
        [.keyInvalid, .unregistered],
    ]

    func testEveryMoveIsAllowedOrRefusedAsTheTableSays() throws {
        XCTAssertEqual(RegistrationPhase.allCases.count, 6)
        for from in RegistrationPhase.allCases {
            for to in RegistrationPhase.allCases {
                let expected = Self.allowed.contains([from, to])
                XCTAssertEqual(from.canMove(to: to), expected, "\(from) → \(to)")
                var state = DeviceRegistrationState(appId: "com.example.kit", issuer: "https://id.example.com/realms/demo", deviceId: "d", keyName: "k")
                state.phase = from
                if expected {
                    XCTAssertNoThrow(try state.move(to: to), "\(from) → \(to)")
                    XCTAssertEqual(state.phase, to)
                } else {
                    XCTAssertThrowsError(try state.move(to: to), "\(from) → \(to)") { error in
                        XCTAssertEqual(error as? KeywardKitError, .invalidStateTransition(from: from, to: to))
                    }
                    XCTAssertEqual(state.phase, from, "a refused move leaves the phase as it was")
                }
            }
        }
    }

    func testARegistrationCannotSkipAPhase() {
        XCTAssertThrowsError(try RegistrationPhase.unregistered.moving(to: .registered))
        XCTAssertThrowsError(try RegistrationPhase.challengeReceived.moving(to: .registering))
        XCTAssertThrowsError(try RegistrationPhase.keyInvalid.moving(to: .registered))
        XCTAssertEqual(
            KeywardKitError.invalidStateTransition(from: .unregistered, to: .registered).description,
            "device registration cannot move from unregistered to registered"
        )
    }

    func testPhaseNamesAreTheStateMachinesWireNames() {
        XCTAssertEqual(RegistrationPhase.allCases.map(\.rawValue), ["unregistered", "challengeReceived", "keyReady", "registering", "registered", "keyInvalid"])
    }
}
