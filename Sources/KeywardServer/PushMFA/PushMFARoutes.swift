// The push-MFA device API's routes, answering in the original's shapes.
import Foundation
import HTTPTypes
import Hummingbird
import KeywardJOSE
import KeywardWire

/// The push-MFA device API under `/realms/{realm}/push-mfa/` (docs/PUSH-MFA-PROTOCOL.md §3.1). Thin: the realm, the
/// original's error shapes and the device's authentication are resolved in front (`PushMFAErrorBodies`,
/// `RealmResolution`, `DeviceAuthenticator`); a route calls the service and answers in the original's shapes.
struct PushMFARoutes {
    let service: PushMFAService
    let events: ChallengeEventStream
    let realmResolution: RealmResolution
    let maxBodySize: Int
    /// For the HTML error page a browser gets when it prefers HTML (docs/PUSH-MFA-PROTOCOL.md §2.1).
    let renderer: PageRenderer

    private typealias Device = DeviceAuthenticator.Device

    func register(on router: Router<KeywardRequestContext>) {
        let api = router.group("/realms/:realm/push-mfa").add(middleware: PushMFAErrorBodies(renderer: renderer)).add(middleware: realmResolution)
        /// A group of the API whose routes are an enrolled device's calls.
        func device(_ checkedFirst: DeviceAuthenticator.CheckedFirst, readsBody: Bool = false) -> RouterGroup<KeywardRequestContext> {
            api.group().add(middleware: service.authenticator.call(checkingFirst: checkedFirst, readsBody: readsBody))
        }
        api.get("enroll/request-token/:handle") { _, context in
            let token = try await service.enrollmentToken(realm: try context.realm, handle: context.parameters.get("handle") ?? "")
            return JSONResponse.make(bytes: Array(token.utf8), headers: Self.noStore, contentType: "application/jwt")
        }
        // Authenticated inside: the proof is by the key being enrolled, or only the token is checked (§3.4).
        api.post("enroll/complete") { request, context in
            let body = try await DeviceAuthenticator.jsonBody(request, maxSize: maxBodySize)
            try await service.completeEnrollment(body: body, request: try service.authenticator.deviceRequest(request, context))
            return status("enrolled")
        }
        device(.userIdQuery).get("login/pending") { request, context in
            let userId = request.uri.queryParameters.get("userId") ?? ""
            return JSONResponse.make(try await service.pendingChallenges(userId: userId, device: try context.caller(Device.self)), headers: Self.noStore)
        }
        device(.respondBodyAndChallengeId, readsBody: true).post("login/challenges/:cid/respond") { _, context in
            let answer = try await service.respond(
                challengeId: context.parameters.get("cid") ?? "", body: context.jsonBody, device: try context.caller(Device.self)
            )
            return status(answer)
        }
        device(.nothing).post("login/lockout") { _, context in
            try await service.lockout(device: try context.caller(Device.self))
            return status("locked_out")
        }
        device(.nothing, readsBody: true).put("device/push-provider") { _, context in
            status(try await service.updatePushProvider(body: context.jsonBody, device: try context.caller(Device.self)))
        }
        device(.nothing, readsBody: true).put("device/rotate-key") { _, context in
            try await service.rotateKey(body: context.jsonBody, device: try context.caller(Device.self))
            return status("rotated")
        }
        // The event streams read no realm: a challenge is shown only when it belongs to the path's realm name, and
        // anything else, an unknown realm included, is the stream's own NOT_FOUND event, which the pages' script reads
        // (docs/PUSH-MFA-PROTOCOL.md §3.10).
        let streams = router.group("/realms/:realm/push-mfa").add(middleware: PushMFAErrorBodies(renderer: renderer))
        streams.get("enroll/challenges/:id/events") { request, context in
            try await events.response(
                realm: context.parameters.get("realm") ?? "", rawId: context.parameters.get("id") ?? "", secret: request.uri.queryParameters.get("secret"),
                kind: .enrollment
            )
        }
        streams.get("login/challenges/:cid/events") { request, context in
            try await events.response(
                realm: context.parameters.get("realm") ?? "", rawId: context.parameters.get("cid") ?? "", secret: request.uri.queryParameters.get("secret"),
                kind: .authentication
            )
        }
    }

    static let noStore: HTTPFields = [.cacheControl: "no-store", .init("Pragma")!: "no-cache"]

    private func status(_ value: String) -> Response {
        JSONResponse.make(PushMFAStatusResponse(status: value), headers: Self.noStore)
    }
}
