// Reading a Play Integrity verdict payload strictly into the fields the checks need.
import KeywardJOSE

/// What a Play Integrity verdict says (the token's payload, or Google's `tokenPayloadExternal`), read strictly:
/// the fields the checks need must be there with their JSON types, the others are read when present. Google writes
/// 64-bit integers (`timestampMillis`, `versionCode`, `sdkVersion`) as strings, the proto3 JSON convention; numbers
/// are taken too.
public struct PlayIntegrityVerdict: Sendable, Equatable, Encodable {
    /// requestDetails.requestPackageName: the package that asked for the token.
    public var requestPackageName: String
    /// requestDetails.nonce: what a classic request bound the token to.
    public var nonce: String?
    /// requestDetails.requestHash: what a standard request bound the token to.
    public var requestHash: String?
    /// requestDetails.timestampMillis: when the token was requested, milliseconds since 1970.
    public var timestampMillis: Int64
    /// appIntegrity.appRecognitionVerdict: PLAY_RECOGNIZED, UNRECOGNIZED_VERSION or UNEVALUATED.
    public var appRecognitionVerdict: String
    /// appIntegrity.packageName; absent when the app was not evaluated.
    public var packageName: String?
    /// appIntegrity.certificateSha256Digest: base64url SHA-256 of each signing certificate of the installed app.
    public var certificateSha256Digests: [String]
    /// appIntegrity.versionCode.
    public var versionCode: Int64?
    /// deviceIntegrity.deviceRecognitionVerdict: MEETS_STRONG_INTEGRITY, MEETS_DEVICE_INTEGRITY, MEETS_BASIC_INTEGRITY,
    /// MEETS_VIRTUAL_INTEGRITY; empty (Google leaves the field out) for a device that meets none.
    public var deviceRecognitionVerdicts: [String]
    /// deviceIntegrity.recentDeviceActivity.deviceActivityLevel, when the app opted in.
    public var deviceActivityLevel: String?
    /// deviceIntegrity.deviceAttributes.sdkVersion, when the app opted in.
    public var sdkVersion: Int64?
    /// accountDetails.appLicensingVerdict: LICENSED, UNLICENSED or UNEVALUATED.
    public var appLicensingVerdict: String?
    /// environmentDetails.playProtectVerdict, when the app opted in.
    public var playProtectVerdict: String?
    /// environmentDetails.appAccessRiskVerdict.appsDetected, when the app opted in.
    public var appsDetected: [String]?

    public init(
        requestPackageName: String, nonce: String? = nil, requestHash: String? = nil, timestampMillis: Int64,
        appRecognitionVerdict: String, packageName: String? = nil, certificateSha256Digests: [String] = [],
        versionCode: Int64? = nil, deviceRecognitionVerdicts: [String] = [], deviceActivityLevel: String? = nil,
        sdkVersion: Int64? = nil, appLicensingVerdict: String? = nil, playProtectVerdict: String? = nil,
        appsDetected: [String]? = nil
    ) {
        self.requestPackageName = requestPackageName
        self.nonce = nonce
        self.requestHash = requestHash
        self.timestampMillis = timestampMillis
        self.appRecognitionVerdict = appRecognitionVerdict
        self.packageName = packageName
        self.certificateSha256Digests = certificateSha256Digests
        self.versionCode = versionCode
        self.deviceRecognitionVerdicts = deviceRecognitionVerdicts
        self.deviceActivityLevel = deviceActivityLevel
        self.sdkVersion = sdkVersion
        self.appLicensingVerdict = appLicensingVerdict
        self.playProtectVerdict = playProtectVerdict
        self.appsDetected = appsDetected
    }

    /// Reads a verdict payload; anything missing or of the wrong type that a check needs is `MALFORMED`.
    public init(payload: JSONObject) throws(AttestationFailure) {
        let request = try Self.object(payload, "requestDetails", required: true) ?? [:]
        let app = try Self.object(payload, "appIntegrity", required: true) ?? [:]
        let device = try Self.object(payload, "deviceIntegrity") ?? [:]
        let account = try Self.object(payload, "accountDetails") ?? [:]
        let environment = try Self.object(payload, "environmentDetails") ?? [:]

        requestPackageName = try Self.string(request, "requestDetails.requestPackageName", required: true) ?? ""
        nonce = try Self.string(request, "requestDetails.nonce")
        requestHash = try Self.string(request, "requestDetails.requestHash")
        timestampMillis = try Self.integer(request, "requestDetails.timestampMillis", required: true) ?? 0

        appRecognitionVerdict = try Self.string(app, "appIntegrity.appRecognitionVerdict", required: true) ?? ""
        packageName = try Self.string(app, "appIntegrity.packageName")
        certificateSha256Digests = try Self.strings(app, "appIntegrity.certificateSha256Digest") ?? []
        versionCode = try Self.integer(app, "appIntegrity.versionCode")

        deviceRecognitionVerdicts = try Self.strings(device, "deviceIntegrity.deviceRecognitionVerdict") ?? []
        let activity = try Self.object(device, "deviceIntegrity.recentDeviceActivity") ?? [:]
        deviceActivityLevel = try Self.string(activity, "deviceIntegrity.recentDeviceActivity.deviceActivityLevel")
        let attributes = try Self.object(device, "deviceIntegrity.deviceAttributes") ?? [:]
        sdkVersion = try Self.integer(attributes, "deviceIntegrity.deviceAttributes.sdkVersion")

        appLicensingVerdict = try Self.string(account, "accountDetails.appLicensingVerdict")
        playProtectVerdict = try Self.string(environment, "environmentDetails.playProtectVerdict")
        let risk = try Self.object(environment, "environmentDetails.appAccessRiskVerdict") ?? [:]
        appsDetected = try Self.strings(risk, "environmentDetails.appAccessRiskVerdict.appsDetected")
    }

    /// The member named by the last component of `path`.
    private static func member(_ object: JSONObject, _ path: String, required: Bool) throws(AttestationFailure) -> JSONValue? {
        let name = String(path.split(separator: ".").last ?? Substring(path))
        guard let value = object[name], !value.isNull else {
            if required { throw AttestationFailure(.malformed, "the verdict has no \(path)") }
            return nil
        }
        return value
    }

    private static func object(_ object: JSONObject, _ path: String, required: Bool = false) throws(AttestationFailure) -> JSONObject? {
        guard let value = try member(object, path, required: required) else { return nil }
        guard let inner = value.objectValue else { throw AttestationFailure(.malformed, "the verdict's \(path) is not an object") }
        return inner
    }

    private static func string(_ object: JSONObject, _ path: String, required: Bool = false) throws(AttestationFailure) -> String? {
        guard let value = try member(object, path, required: required) else { return nil }
        guard let text = value.stringValue else { throw AttestationFailure(.malformed, "the verdict's \(path) is not a string") }
        return text
    }

    private static func strings(_ object: JSONObject, _ path: String) throws(AttestationFailure) -> [String]? {
        guard let value = try member(object, path, required: false) else { return nil }
        guard let array = value.arrayValue else { throw AttestationFailure(.malformed, "the verdict's \(path) is not an array") }
        var texts: [String] = []
        texts.reserveCapacity(array.count)
        for element in array {
            guard let text = element.stringValue else { throw AttestationFailure(.malformed, "the verdict's \(path) has a non-string entry") }
            texts.append(text)
        }
        return texts
    }

    /// A 64-bit integer written as a decimal string (Google's form) or as a JSON integer.
    private static func integer(_ object: JSONObject, _ path: String, required: Bool = false) throws(AttestationFailure) -> Int64? {
        guard let value = try member(object, path, required: required) else { return nil }
        switch value {
        case .string(let text):
            let digits = text.utf8.first == UInt8(ascii: "-") ? text.utf8.dropFirst() : text.utf8[...]
            guard !digits.isEmpty, digits.count <= 19, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                let number = Int64(text)
            else { throw AttestationFailure(.malformed, "the verdict's \(path) is not a decimal integer") }
            return number
        case .number:
            guard let number = value.intValue else { throw AttestationFailure(.malformed, "the verdict's \(path) is not an integer") }
            return number
        default:
            throw AttestationFailure(.malformed, "the verdict's \(path) is neither an integer nor a decimal string")
        }
    }
}
