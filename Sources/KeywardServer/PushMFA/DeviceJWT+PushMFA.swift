// The push-MFA API's reading of a device JWT: its size cap, its algorithm allow-list and the original's messages.
import KeywardHTTPInput

extension DeviceJWT {
    /// Only RS*/ES* algorithms are accepted (docs/PUSH-MFA-PROTOCOL.md §4.7). `name` is the original's word for
    /// the token in its messages: "enrollment token", "authentication token", "DPoP proof" → "Invalid <name>",
    /// "Unsupported <name> algorithm: X".
    init(_ compact: String, name: String) throws(PushMFAError) {
        do throws(DeviceJWT.Failure) {
            try self.init(compact, maxSize: PushMFALimits.jwtLength, allowedAlgorithms: DeviceAuthenticator.algorithms)
        } catch {
            switch error {
            case .malformed: throw PushMFAError.badRequest("Invalid \(name)")
            case .unsupportedAlgorithm(let algorithmName):
                throw PushMFAError.badRequest("Unsupported \(name) algorithm: \(algorithmName.prefix(16))")
            }
        }
    }
}
