// Which of a person's push credentials may approve a login (issue 32): one on a registered device lives and dies
// with that device, and a realm may accept approvals only from devices attested at a level it names.
import Foundation
import KeywardJOSE

/// A push credential that may answer a login, and the registered device it was made on, if any.
struct ApprovingDevice: Sendable {
    let credential: PushCredential
    /// Nil for a phone enrolled by QR code.
    let device: RegisteredDeviceKey?

    /// How the waiting page and the audit name it: "Work iPhone, App Attest verified".
    var description: String {
        credential.deviceLabel + ", " + (device?.attestationWords ?? "enrolled by QR code")
    }

    var level: DeviceAttestationLevel { device?.level ?? .none }
}

extension PushMFAService {
    /// `credentials` that may approve a login under `settings`, in the order given. A credential made on a
    /// registered device never approves once that device is removed, rejected, or holds another key (rotated
    /// without it); with `requireAttestedDevice`, only a credential on a device attested at that level does.
    func approvingDevices(realm: String, _ credentials: [PushCredential], settings: PushMFASettings) async throws -> [ApprovingDevice] {
        var approving: [ApprovingDevice] = []
        for credential in credentials {
            if let device = try await approvingDevice(realm: realm, credential, settings: settings) { approving.append(device) }
        }
        return approving
    }

    func approvingDevice(realm: String, _ credential: PushCredential, settings: PushMFASettings) async throws -> ApprovingDevice? {
        guard credential.registeredDeviceId != nil else {
            return settings.requireAttestedDevice == .none ? ApprovingDevice(credential: credential, device: nil) : nil
        }
        guard let device = try await deviceKeys.liveDevice(of: credential, realm: realm), device.level >= settings.requireAttestedDevice else { return nil }
        return ApprovingDevice(credential: credential, device: device)
    }
}

extension DeviceKeys {
    /// The registered device `credential` was made on, while it is usable and still holds the credential's key; nil
    /// for a phone enrolled by QR code, and for a credential whose device was removed, rejected or re-keyed without it.
    func liveDevice(of credential: PushCredential, realm: String) async throws -> RegisteredDeviceKey? {
        guard let appId = credential.registeredAppId, let deviceId = credential.registeredDeviceId,
            let thumbprint = try? JWK(jsonString: credential.publicKeyJWK).thumbprint(),
            let device = try await device(realm: realm, jkt: thumbprint), device.usable, device.appId == appId, device.deviceId == deviceId
        else { return nil }
        return device
    }
}

extension PushMFAService {
    /// How the waiting page names the devices that may answer `challenge`: the one it is bound to, or every one
    /// that may approve.
    func waitingDevices(realm: String, userId: String, challenge: PushChallenge) async throws -> [String] {
        let (settings, enrolled) = try await settingsAndDevices(realm: realm, userId: userId)
        let targets = enrolled.filter { challenge.credentialId == nil || $0.id == challenge.credentialId }
        return try await approvingDevices(realm: realm, targets, settings: settings).map(\.description)
    }
}
