// A setting that failed validation at start-up, named with its environment variable.
/// A setting that failed validation; the message names the setting and the environment variable.
public struct ConfigurationError: Error, CustomStringConvertible, Equatable {
    public let setting: String
    public let problem: String
    /// The variable the value came from when it is not the setting's own KEYWARD_* (e.g. `https_proxy`).
    public let environmentVariable: String?

    public init(setting: String, problem: String, environmentVariable: String? = nil) {
        self.setting = setting
        self.problem = problem
        self.environmentVariable = environmentVariable
    }

    public var description: String {
        "invalid configuration: \(setting) (env \(environmentVariable ?? ConfigurationError.environmentName(of: setting))): \(problem)"
    }

    static func environmentName(of key: String) -> String {
        var name = "KEYWARD"
        for component in key.split(separator: ".") {
            var word = ""
            var previousLowercase = false
            for character in component {
                if character.isUppercase && previousLowercase { word.append("_") }
                word.append(character.isLetter || character.isNumber ? Character(character.uppercased()) : "_")
                previousLowercase = character.isLowercase
            }
            name += "_" + word
        }
        return name
    }
}
