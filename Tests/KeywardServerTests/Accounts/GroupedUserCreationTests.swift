// Tests: users created by concurrent requests (a directory provisioning a realm) are written in groups, and each
// request gets the answer it would have had alone: its user and profile stored, or a refusal of its own.
import Foundation
@testable import KeywardServer
import XCTest

final class GroupedUserCreationTests: XCTestCase {
    private static let rounds = 10
    private static let perRound = 24

    /// Each round: `perRound` creations at once, most with profiles (a transaction each alone) and every third
    /// without, one of them a name taken already and one for a realm that does not exist. Every audit event is written meanwhile by the audit log's own
    /// group writer, so a grouped transaction and single statements wait on each other's write lock as in a server.
    func testConcurrentCreationsAreAllStoredAndARefusedOneFailsOnlyItself() async throws {
        try await TestServer.forEachEngine { server, _ in
            let users = server.runtime.accounts.users
            _ = try await users.createUser(realm: "demo", username: "taken", password: nil)
            func profile(_ name: String) -> UserProfile {
                var profile = UserProfile()
                guard !name.hasSuffix("-0"), !name.hasSuffix("3"), !name.hasSuffix("6"), !name.hasSuffix("9") else { return profile }
                profile.externalId = "ext-\(name)"
                profile.displayName = "User \(name)"
                profile.emails = [.init(value: "\(name)@example.com", type: "work", primary: true)]
                return profile
            }
            for round in 0..<Self.rounds {
                let outcomes = await withTaskGroup(of: (Int, Result<User, any Error>).self) { group in
                    for index in 0..<Self.perRound {
                        let name = index == 5 ? "taken" : "grouped-\(round)-\(index)"
                        let realm = index == 11 ? "no-such-realm" : "demo"
                        group.addTask {
                            (index, await Result.of { try await users.createUser(realm: realm, username: name, password: nil, profile: profile(name)) })
                        }
                    }
                    return await group.reduce(into: [Int: Result<User, any Error>]()) { $0[$1.0] = $1.1 }
                }
                XCTAssertEqual(outcomes.count, Self.perRound)
                guard case .failure(let taken) = outcomes[5], case UserError.exists("taken") = taken else {
                    return XCTFail("round \(round): the taken name must be refused as taken, got \(String(describing: outcomes[5]))")
                }
                guard case .failure(let missing) = outcomes[11], case StoreError.notFound = missing else {
                    return XCTFail("round \(round): the missing realm must be refused, got \(String(describing: outcomes[11]))")
                }
                for index in 0..<Self.perRound where index != 5 && index != 11 {
                    let name = "grouped-\(round)-\(index)"
                    guard case .success(let created) = outcomes[index] else {
                        return XCTFail("round \(round): \(name) was refused: \(String(describing: outcomes[index]))")
                    }
                    let stored = try await users.user(realm: "demo", username: name)
                    XCTAssertEqual(stored?.id, created.id)
                    let profiles = try await users.profiles(realm: "demo", userIds: [created.id])
                    XCTAssertEqual(profiles[created.id] ?? UserProfile(), profile(name), "\(name)'s profile is stored with it")
                    let byAddress = try await users.search(realm: "demo", match: .anyEmail(.compare(.emailValue, .equal, .text("\(name)@EXAMPLE.com"))), offset: 0, limit: 2)
                    XCTAssertEqual(byAddress.users.map(\.id), profile(name).emails.isEmpty ? [] : [created.id], "\(name) is found by its address")
                }
            }
            let names = try await users.listUsers(realm: "demo").map(\.username)
            XCTAssertEqual(names.filter { $0.hasPrefix("grouped-") }.count, Self.rounds * (Self.perRound - 2))
        }
    }
}

extension GroupedUserCreationTests {
    /// A profile with more addresses than one statement may bind (1,000 rows): stored whole, alone and beside
    /// others in a group, and found by its last address.
    func testAProfileWithThousandsOfAddressesIsStoredWhole() async throws {
        try await TestServer.forEachEngine { server, _ in
            let users = server.runtime.accounts.users
            func profile(_ name: String) -> UserProfile {
                var profile = UserProfile()
                profile.emails = (0..<2_500).map { .init(value: "\(name)-\($0)@example.com", type: "other", primary: $0 == 7) }
                return profile
            }
            let names = ["many-a", "many-b", "many-c"]
            let created = try await withThrowingTaskGroup(of: User.self) { group in
                for name in names { group.addTask { try await users.createUser(realm: "demo", username: name, password: nil, profile: profile(name)) } }
                return try await group.reduce(into: [User]()) { $0.append($1) }
            }
            XCTAssertEqual(created.count, names.count)
            for user in created {
                let stored = try await users.profiles(realm: "demo", userIds: [user.id])
                XCTAssertEqual(stored[user.id], profile(user.username))
                let last = try await users.search(
                    realm: "demo", match: .anyEmail(.compare(.emailValue, .equal, .text("\(user.username)-2499@example.com"))), offset: 0, limit: 2
                )
                XCTAssertEqual(last.users.map(\.id), [user.id])
                let total = try await users.search(realm: "demo", match: .anyEmail(.compare(.emailValue, .startsWith, .text("\(user.username)-"))), offset: 0, limit: 2)
                XCTAssertEqual(total.total, 1)
            }
        }
    }
}

private extension Result where Failure == any Error {
    static func of(_ body: () async throws -> Success) async -> Self {
        do {
            return .success(try await body())
        } catch {
            return .failure(error)
        }
    }
}
