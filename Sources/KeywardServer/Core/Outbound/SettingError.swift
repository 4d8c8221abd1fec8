// A setting that cannot work (a push key, a service account, a proxy), found at start-up and naming the setting.
/// A setting that cannot work (push senders', Google service accounts', the outbound proxy's), found at start-up so a bad configuration stops the server instead of failing
/// at the first login. Reads like "push.fcm.serviceAccountFile: /x.json: no private_key".
public struct SettingError: Error, CustomStringConvertible, Equatable {
    /// The setting's name, e.g. "push.apns.keyFile".
    public let setting: String
    /// The file the setting names, when the problem is in a file.
    public let file: String?
    public let problem: String
    /// The environment variable the value came from when it is not a Keyward setting (`https_proxy`).
    public let environmentVariable: String?

    public init(setting: String, file: String? = nil, problem: String, environmentVariable: String? = nil) {
        self.setting = setting
        self.file = file
        self.problem = problem
        self.environmentVariable = environmentVariable
    }

    public var description: String {
        if let file { return "\(setting): \(file): \(problem)" }
        return "\(setting): \(problem)"
    }
}
