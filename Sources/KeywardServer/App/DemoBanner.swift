// What `keyward serve --demo` prints once it listens: the pages a person opens first, the phone to try them with,
// and the endpoints an app talks to.
import Foundation

public enum DemoBanner {
    /// The lines under "Keyward is listening on …", for the server at `base` (its public URL, no trailing slash).
    /// `device` is how to run keyward-device from where the server was started (see `deviceCommand`).
    public static func lines(base: String, device: String) -> [String] {
        let issuer = "\(base)/realms/\(DemoSeed.realm)"
        return [
            "  sign in:    \(issuer)/login   (user \(DemoSeed.username), password \(DemoSeed.password))",
            "  account:    \(issuer)/account   (\"Add a device\" shows a QR code and the enrollment link under it)",
            "  phone:      export KEYWARD_CLIENT_SECRET=\(DemoSeed.clientSecret)",
            "              \(device) enroll --issuer \(issuer) '<enrollment link>'",
            "              \(device) pending                 # after signing in again: the login to answer",
            "              \(device) approve <cid>           # add --answer N when the page shows a number",
            "  discovery:  \(issuer)/.well-known/openid-configuration",
            "  JWKS:       \(issuer)/protocol/openid-connect/certs",
            "  token:      \(issuer)/protocol/openid-connect/token",
            "  whoami:     \(issuer)/v1/whoami",
        ]
    }

    /// How a person runs keyward-device, given the path of the running `keyward`: `swift run [-c release]
    /// keyward-device` in a SwiftPM build directory (it builds the tool if need be), the plain name when it is
    /// installed on the `PATH` beside `keyward`, the full path when it lies beside `keyward` elsewhere.
    public static func deviceCommand(
        executablePath: String,
        searchPath: String = ProcessInfo.processInfo.environment["PATH"] ?? "",
        isExecutable: (String) -> Bool = { FileManager.default.isExecutableFile(atPath: $0) }
    ) -> String {
        let executable = URL(fileURLWithPath: executablePath).standardizedFileURL
        let directory = executable.deletingLastPathComponent()
        if executable.pathComponents.contains(".build") {
            return directory.lastPathComponent == "release" ? "swift run -c release keyward-device" : "swift run keyward-device"
        }
        let sibling = directory.appendingPathComponent("keyward-device").path
        guard isExecutable(sibling) else { return "keyward-device" }
        let onPath = searchPath.split(separator: ":").contains { URL(fileURLWithPath: String($0)).standardizedFileURL.path == directory.path }
        return onPath ? "keyward-device" : sibling
    }
}
