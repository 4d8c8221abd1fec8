// Choosing between App Attest assertions and the device key for signing, and confirming the server took the key.
import Foundation
import KeywardWire
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DeviceRegistrar {
    /// What signs the requests of a registered device: assertions by its App Attest key when the server took one and
    /// this registrar's attester can assert, otherwise the device key (version `1`, which the server takes from every
    /// device). The device key must be there either way: it is the device's identity, and a key gone from the store
    /// moves the registration to `keyInvalid` (see ``deviceKey(_:)``).
    func requestCredential(_ state: inout DeviceRegistrationState) throws -> RequestSigner.Credential {
        let key = try deviceKey(&state)
        guard let keyId = state.appAttestKeyId, let asserter else { return .deviceKey(key) }
        return .appAttest(keyId: keyId, asserter: asserter)
    }

    /// The App Attest key the server holds for a registration just answered, as far as the answer tells.
    ///
    /// The answer does not say whether the attestation was taken: a registration whose attestation failed is
    /// `registered` all the same when the app's policy accepts failures. And `ALREADY_REGISTERED` means an earlier
    /// attempt registered the key, with the attestation that attempt sent (saved in the state when it went out),
    /// not this one's. `pending` and `rejected` devices were never registered with a verified attestation.
    static func appAttestKeyCandidate(status: String, created: Bool, sent: String?, sentBefore: String?) -> String? {
        guard status == "registered" else { return nil }
        return created ? sent : sentBefore
    }

    /// Keeps ``DeviceRegistrationState/appAttestKeyId`` only if the server takes an assertion by it: one signed
    /// `GET /v1/device/status`. A server refusing the signature (`INVALID_SIGNATURE`) holds no such App Attest key for
    /// the device, which then signs with its device key. Without a verdict (no answer, a 5xx) the key id stays as the
    /// answer suggested; the registration itself is done and is not failed for this.
    func confirmAppAttestKey(_ state: inout DeviceRegistrationState) async {
        guard let keyId = state.appAttestKeyId, let asserter else { return }
        let refusal: DeviceAPI.Refusal
        do {
            let (data, response) = try await signedExchange(
                &state, signingWith: .appAttest(keyId: keyId, asserter: asserter), method: "GET", url: try api.url("/v1/device/status"), body: nil
            )
            refusal = DeviceAPI.refusal(status: response.statusCode, data: data)
        } catch {
            return
        }
        // A counter refused is a signature taken: the server checks the counter after the signature.
        guard refusal.status == 401, refusal.code == ErrorCode.invalidSignature.rawValue, refusal.reason != Self.counterNotIncreasing else { return }
        var signingWithDeviceKey = state
        signingWithDeviceKey.appAttestKeyId = nil
        guard (try? stateStore.save(signingWithDeviceKey)) != nil else { return }
        state = signingWithDeviceKey
    }
}
