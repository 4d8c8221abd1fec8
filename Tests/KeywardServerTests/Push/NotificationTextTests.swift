import Foundation
import KeywardJOSE
@testable import KeywardServer
import XCTest

/// A realm's own notification text (push-MFA settings notificationTitle / notificationBody) reaches both services;
/// without it each sender keeps its default.
final class NotificationTextTests: XCTestCase {
    func testRealmTextOverridesTheSendersDefaults() throws {
        var message = PushTestMessages.message(pushProviderId: "device-token", confirmToken: "confirm.jwt.here")
        let settings = FCMSettings(url: "https://fcm.example/send", serviceAccountFile: "/dev/null", title: "Node title", body: "Node body")

        func fcmNotification() throws -> JSONObject? {
            let body = try StrictJSON.parseObject(PushHTTP.json(FCMMessageBody(message: message, settings: settings)))
            return body["message"]?.objectValue?["notification"]?.objectValue
        }
        func apnsAlert() throws -> JSONObject? {
            try StrictJSON.parseObject(APNsRequest.payload(message: message))["aps"]?.objectValue?["alert"]?.objectValue
        }

        XCTAssertEqual(try fcmNotification(), ["title": "Node title", "body": "Node body"])
        XCTAssertEqual(try apnsAlert(), ["title": "Push MFA", "body": "Please confirm your login"])
        (message.title, message.body) = ("Anmeldung bestätigen", "Bitte die Anmeldung in der App bestätigen")
        XCTAssertEqual(try fcmNotification(), ["title": "Anmeldung bestätigen", "body": "Bitte die Anmeldung in der App bestätigen"])
        XCTAssertEqual(try apnsAlert(), ["title": "Anmeldung bestätigen", "body": "Bitte die Anmeldung in der App bestätigen"])
    }

    func testTheSettingsAcceptOneShortLineAndEmptyResets() throws {
        var settings = PushMFASettings()
        try settings.apply("notificationTitle", "Connexion")
        try settings.apply("notificationBody", "Confirmez la connexion")
        XCTAssertEqual(try PushMFASettings(json: settings.jsonObject), settings, "stored and read back")
        try settings.apply("notificationTitle", "")
        XCTAssertNil(settings.notificationTitle)
        XCTAssertNil(settings.jsonObject["notificationTitle"])
        for bad in [String(repeating: "x", count: 201), "two\nlines", "bell\u{7}"] {
            XCTAssertThrowsError(try settings.apply("notificationBody", bad)) { error in
                XCTAssertEqual((error as? PushMFASettingsError)?.key, "notificationBody")
            }
        }
        XCTAssertEqual(settings.notificationBody, "Confirmez la connexion", "a refused value changes nothing")
    }
}
