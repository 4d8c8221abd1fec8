/// The platform a registration names (`platform`); it must be the one the app was added with on the server.
public enum DevicePlatform: String, Codable, Sendable, CaseIterable {
    case ios
    case android
}
