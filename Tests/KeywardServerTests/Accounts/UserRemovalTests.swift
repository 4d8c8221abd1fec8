// Tests: deleting a user removes their push devices along with the user row.
import Foundation
@testable import KeywardServer
import XCTest

/// Deleting a user (`keyward users delete`, or the user from the account page) removes what is theirs: push
/// devices included, not only the user row.
final class UserRemovalTests: XCTestCase {
    func testDeletingAUserRemovesItsPushDevices() async throws {
        try await TestServer.forEachEngine { server, client in
            _ = try await server.enrolledDevice(client)
            let user = try await server.demoUser()
            let service = server.runtime.pushMFA.service
            let before = try await service.devices(realm: "demo", userId: user.id)
            XCTAssertEqual(before.count, 1)
            _ = try await server.runtime.deleteUser(realm: "demo", username: user.username)
            let after = try await service.devices(realm: "demo", userId: user.id)
            XCTAssertTrue(after.isEmpty, "a deleted user's push device was left behind")
        }
    }
}
