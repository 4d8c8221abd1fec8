// Reading FCM error answers to tell when a device's registration token is gone.
import KeywardJOSE

/// Reads FCM v1 error answers:
///
///     {"error": {"code": 404, "message": "…", "status": "NOT_FOUND",
///                "details": [{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "UNREGISTERED"}]}}
enum FCMErrorResponse {
    /// True when FCM says the registration token is dead or was never valid: 404 UNREGISTERED, or 400
    /// INVALID_ARGUMENT about the registration token (other INVALID_ARGUMENTs are our own payload's fault).
    static func meansTokenUnregistered(status: Int, body: [UInt8]) -> Bool {
        guard let error = (try? StrictJSON.parseObject(body))?.object("error") else { return false }
        var codes = Set<String>()
        if let status = error.string("status") { codes.insert(status) }
        for detail in error.array("details") ?? [] {
            if let code = detail.objectValue?.string("errorCode") { codes.insert(code) }
        }
        switch status {
        case 404:
            return codes.contains("UNREGISTERED")
        case 400:
            let message = error.string("message")?.lowercased() ?? ""
            return codes.contains("INVALID_ARGUMENT") && message.contains("registration token")
        default:
            return false
        }
    }
}
