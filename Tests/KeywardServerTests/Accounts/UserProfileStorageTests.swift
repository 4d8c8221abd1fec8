// Tests: a profile's stored JSON reads back as written, reads rows earlier versions wrote, and refuses a member of the
// wrong type rather than guessing.
@testable import KeywardServer
import XCTest

final class UserProfileStorageTests: XCTestCase {
    func testEveryMemberReadsBackAsWritten() throws {
        var profile = UserProfile()
        profile.externalId = "ext-1"
        profile.displayName = "Barbara Jensen"
        profile.nickName = "Babs"
        profile.title = "Tour Guide"
        profile.userType = "Employee"
        profile.preferredLanguage = "en-US"
        profile.locale = "en-US"
        profile.timezone = "America/Los_Angeles"
        profile.name = .init(formatted: "Ms. Barbara J Jensen III", familyName: "Jensen", givenName: "Barbara", middleName: "Jane", honorificPrefix: "Ms.", honorificSuffix: "III")
        profile.emails = [.init(value: "bjensen@example.com", type: "work", primary: true), .init(value: "babs@example.org")]
        profile.phoneNumbers = [.init(value: "+1 555 555 5555", type: "work")]
        profile.addresses = [.init(formatted: "100 Universal City Plaza", streetAddress: "100 Universal City Plaza", locality: "Hollywood", region: "CA", postalCode: "91608", country: "US", type: "work", primary: true)]
        profile.enterprise = .init(employeeNumber: "701984", costCenter: "4130", organization: "Universal Studios", division: "Theme Park", department: "Tour Operations", managerId: "26118915-6090-4610-87e4-49d8ca9f808d")
        XCTAssertEqual(try UserProfileStorage.decode(UserProfileStorage.encode(profile)), profile)
        XCTAssertEqual(try UserProfileStorage.decode(UserProfileStorage.encode(UserProfile())), UserProfile())
    }

    /// Rows written before the stored form had its own coder (Foundation's JSONEncoder, sorted keys, nils left out).
    func testARowAnEarlierVersionWroteReadsTheSame() throws {
        let earlier = #"{"addresses":[],"displayName":"Bench User 7","emails":[{"primary":true,"type":"work","value":"bench-7@bench.example"}],"externalId":"ext-7","name":{"familyName":"User 7","givenName":"Bench"},"phoneNumbers":[]}"#
        var expected = UserProfile()
        expected.externalId = "ext-7"
        expected.displayName = "Bench User 7"
        expected.name = .init(familyName: "User 7", givenName: "Bench")
        expected.emails = [.init(value: "bench-7@bench.example", type: "work", primary: true)]
        XCTAssertEqual(try UserProfileStorage.decode(earlier), expected)
    }

    func testMembersLeftOutOrNullReadAsTheirDefaults() throws {
        var expected = UserProfile()
        expected.emails = [.init(value: "a@example.com")]
        XCTAssertEqual(try UserProfileStorage.decode(#"{"emails":[{"value":"a@example.com","type":null}],"title":null,"somethingLater":[1,2]}"#), expected)
        XCTAssertEqual(try UserProfileStorage.decode("{}"), UserProfile())
    }

    func testAMemberOfTheWrongTypeIsUnreadableNamingIt() {
        for (stored, named) in [
            (#"{"displayName":7}"#, "profile.displayName"), (#"{"emails":{}}"#, "profile.emails"), (#"{"emails":["a@example.com"]}"#, "profile.emails"),
            (#"{"emails":[{"type":"work"}]}"#, "profile.emails"), (#"{"addresses":[{"primary":"yes"}]}"#, "profile.addresses.primary"),
            (#"{"name":"Babs"}"#, "profile.name"), ("[]", "JSON object"), ("{", "JSON object"),
        ] {
            XCTAssertThrowsError(try UserProfileStorage.decode(stored), stored) { error in
                XCTAssertTrue(error is UserProfileStorage.Unreadable, "\(stored): \(error)")
                XCTAssertTrue("\(error)".contains(named), "\(stored): \(error)")
            }
        }
    }
}
