// Tests: a realm's own notification text, chosen by language, reaches FCM and APNs; otherwise defaults stay.
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
            let body = try StrictJSON.parseObject(OutboundHTTP.json(FCMMessageBody(message: message, settings: settings)))
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

    func testATextPerLanguageIsChosenByTagThenPrimarySubtagThenDefault() throws {
        var settings = PushMFASettings()
        try settings.apply("notificationTitle", "Sign-in request")
        try settings.apply("notificationTitle.de", "Anmeldung")
        try settings.apply("notificationTitle.pt-BR", "Entrada")
        try settings.apply("notificationBody.de-ch", "Bitte bestätigen")
        XCTAssertEqual(try PushMFASettings(json: settings.jsonObject), settings, "stored and read back")
        XCTAssertEqual(settings.jsonObject["notificationTitle.pt-br"]?.stringValue, "Entrada", "tags are stored in lower case")

        func text(_ languages: [String]) -> [String?] {
            let chosen = settings.notificationText(for: languages)
            return [chosen.title, chosen.body]
        }
        XCTAssertEqual(text(["de"]), ["Anmeldung", nil])
        XCTAssertEqual(text(["de-ch"]), ["Anmeldung", "Bitte bestätigen"], "the title by primary subtag, the body by exact tag")
        XCTAssertEqual(text(["pt"]), ["Sign-in request", nil], "pt does not reach pt-br")
        XCTAssertEqual(text(["it", "pt-br", "de"]), ["Entrada", nil], "the first accepted language with a text wins; de has no body (only de-ch)")
        XCTAssertEqual(text([]), ["Sign-in request", nil])

        try settings.apply("notificationTitle.de", "")
        XCTAssertEqual(text(["de"]), ["Sign-in request", nil], "an empty value removes the language")
        XCTAssertNil(settings.jsonObject["notificationTitle.de"])
    }

    func testLanguageKeysAreCheckedAndBounded() throws {
        var settings = PushMFASettings()
        for key in ["notificationTitle.", "notificationTitle.de_AT", "notificationBody.x", "notificationBody.de at"] {
            XCTAssertThrowsError(try settings.apply(key, "Text")) { error in
                XCTAssertEqual((error as? PushMFASettingsError)?.key, key)
            }
        }
        XCTAssertThrowsError(try settings.apply("notificationTitle.de", "two\nlines"))
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        for index in 0..<PushMFASettings.maximumNotificationLanguages {
            try settings.apply("notificationTitle.q\(letters[index / 26])\(letters[index % 26])", "T")
        }
        XCTAssertEqual(settings.localizedNotificationTitles.count, PushMFASettings.maximumNotificationLanguages)
        XCTAssertThrowsError(try settings.apply("notificationTitle.zz", "T")) { error in
            XCTAssertTrue("\(error)".contains("at most"), "\(error)")
        }
    }
}
