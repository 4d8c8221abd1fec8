// The OAuth core's settings: the DPoP proof windows at resources and at the token endpoint, and server nonces.
import Foundation

/// What the OAuth core reads of the configuration (`dpop.*`), validated when the configuration loads.
struct OAuthSettings: Sendable {
    /// `dpop.maxAge` / `dpop.futureSkew`: the proof window at protected resources, in seconds.
    var resourceProofMaxAge = 120
    var resourceProofFutureSkew = 120
    /// `dpop.tokenEndpointMaxAge` / `dpop.tokenEndpointFutureSkew`: the tighter window at the token endpoint.
    var tokenEndpointProofMaxAge = 60
    var tokenEndpointProofFutureSkew = 15
    /// `dpop.requireNonce`: the token endpoint demands server-issued nonces (RFC 9449 §8).
    var requireNonce = false
}
