/// A push setting that cannot work, found at start-up so a bad configuration stops the server instead of failing
/// at the first login. Reads like "push.fcm.serviceAccountFile: /x.json: no private_key".
public struct PushConfigurationError: Error, CustomStringConvertible, Equatable {
    /// The setting's name, e.g. "push.apns.keyFile".
    public let setting: String
    /// The file the setting names, when the problem is in a file.
    public let file: String?
    public let problem: String

    public init(setting: String, file: String? = nil, problem: String) {
        self.setting = setting
        self.file = file
        self.problem = problem
    }

    public var description: String {
        if let file { return "\(setting): \(file): \(problem)" }
        return "\(setting): \(problem)"
    }
}
