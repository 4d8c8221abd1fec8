// The account page's one list of the person's registered devices, and removing one from it.
import Foundation
import Hummingbird

/// The account page's rows for the person's registered devices: app, platform, attestation, push on or off, last
/// seen, tokens held; a removed one says since when.
struct PersonDevicesSection: AccountPageSection {
    let people: PersonDevices

    func accountSection(realm: String, user: User, session: BrowserSession) async throws -> [String: Any] {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        let rows: [[String: Any]] = try await people.list(realm: realm, userId: user.id).map { entry in
            let device = entry.device
            var row: [String: Any] = [
                "name": (device.platform == .ios ? "iPhone" : "Android phone") + " · " + device.appId, "attestation": entry.attestation,
                "push": entry.pushOn ? "on" : "off", "lastSeen": device.lastSeenAt.map(formatter.string(from:)) ?? "never",
                "tokens": String(entry.tokensHeld), "csrf": session.csrfToken,
                "removeAction": PageURLs.account(realm) + "/registered-devices/\(device.appId)/\(device.deviceId)/remove",
            ]
            if let removed = device.removedAt { row["removed"] = formatter.string(from: removed) }
            return row
        }
        return ["registeredDevices": rows, "hasRegisteredDevices": !rows.isEmpty]
    }
}

/// `POST /realms/{realm}/account/registered-devices/{app}/{device}/remove`: the person removes one of their own
/// devices, soon after a sign-in (as taking any way of approving away asks), with the form's CSRF token.
struct PersonDevicePages: Sendable {
    let apps: DeviceAppService
    let browser: BrowserRequests
    let renderer: PageRenderer
    let clock: any KeywardClock

    func register(on router: some RouterMethods<KeywardRequestContext>) {
        router.post("/realms/:realm/account/registered-devices/:app/:device/remove") { request, context in try await remove(request, context) }
    }

    private func remove(_ request: Request, _ context: KeywardRequestContext) async throws -> Response {
        let realm = try context.realm.name
        guard let (session, userId) = try await browser.signedIn(request, realm: realm) else { return renderer.redirect(to: PageURLs.login(realm)) }
        guard let form = try await browser.form(request), BrowserSessionService.csrfMatches(form["csrf"], session) else {
            return renderer.formExpired(realm: realm, backToAccount: false)
        }
        guard session.signedInRecently(now: clock.now()) else { return renderer.signInAgain(realm) }
        let appId = context.parameters.get("app") ?? ""
        let deviceId = context.parameters.get("device") ?? ""
        guard try await apps.removeDevice(realm: realm, appId: appId, deviceId: deviceId, userId: userId) != nil else {
            return renderer.page("message", title: "Not found", realm: realm, context: [
                "heading": "Device not found", "text": "That device is not one of yours.", "isError": true,
                "link": ["href": PageURLs.account(realm), "label": "Back to your account"],
            ], status: .notFound)
        }
        return renderer.redirect(to: PageURLs.account(realm) + "?notice=removed")
    }
}
