// Tests: a search's total is the number of matches whatever the page asked for, whether the page told it or a count did,
// and the page's users come with their profiles.
@testable import KeywardServer
import XCTest

final class UserSearchPagingTests: XCTestCase {
    func testTheTotalIsTheMatchesOnEveryPage() async throws {
        try await TestServer.forEachEngine { server, _ in
            let users = server.runtime.accounts.users
            var created: [String] = []
            var profiles: [String: UserProfile] = [:]
            for index in 0..<5 {
                var profile = UserProfile()
                if index % 2 == 0 { profile.externalId = "ext-\(index)" }
                let id = try await users.createUser(realm: "demo", username: "paged-\(index)", password: nil, profile: profile).id
                created.append(id)
                if !profile.isEmpty { profiles[id] = profile }
            }
            _ = try await users.createUser(realm: "demo", username: "other", password: nil)
            let ids = created.sorted() // pages are in id order
            let paged = UserMatch.compare(.username, .startsWith, .text("PAGED-"))
            // (offset, limit) → the ids of the page; the total is 5 on each.
            let pages: [((Int, Int), ArraySlice<String>)] = [
                ((0, 10), ids[0..<5]), ((0, 5), ids[0..<5]), ((0, 2), ids[0..<2]), ((2, 2), ids[2..<4]), ((4, 2), ids[4..<5]),
                ((5, 2), []), ((9, 2), []), ((0, 0), []), ((3, 0), []),
            ]
            for ((offset, limit), expected) in pages {
                let page = try await users.search(realm: "demo", match: paged, offset: offset, limit: limit)
                XCTAssertEqual(page.total, 5, "offset \(offset), limit \(limit)")
                XCTAssertEqual(page.users.map(\.id), Array(expected), "offset \(offset), limit \(limit)")
                XCTAssertEqual(page.profiles, profiles.filter { expected.contains($0.key) }, "each user's profile comes with the page")
            }
            let none = try await users.search(realm: "demo", match: .compare(.username, .equal, .text("nobody")), offset: 0, limit: 10)
            XCTAssertEqual(none, UserSearchPage(total: 0, users: []))
            let noneFurther = try await users.search(realm: "demo", match: .compare(.username, .equal, .text("nobody")), offset: 3, limit: 10)
            XCTAssertEqual(noneFurther, UserSearchPage(total: 0, users: []))
            let everyone = try await users.search(realm: "demo", match: nil, offset: 0, limit: 100)
            XCTAssertEqual(everyone.total, everyone.users.count)
            XCTAssertTrue(Set(ids).isSubset(of: Set(everyone.users.map(\.id))))
        }
    }
}
