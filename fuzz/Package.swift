// swift-tools-version: 6.1
// libFuzzer targets for Keyward's parsers. A package of its own so that its sanitizer build compiles only the
// parser targets and swift-crypto, never the server: the parser sources are symlinked from ../Sources, because a
// path dependency on the root package would still resolve and fetch every one of the server's dependencies.
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

/// One executable per fuzz target: its main.swift starts libFuzzer's driver, its *Fuzzer.swift file holds
/// `LLVMFuzzerTestOneInput`.
func fuzzer(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
    .executableTarget(name: name, dependencies: dependencies + ["FuzzSupport"], swiftSettings: swiftSettings)
}

let package = Package(
    name: "keyward-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
    ],
    targets: [
        // The parser targets themselves: symlinks to ../Sources, compiled here with the sanitizer flags.
        .target(
            name: "KeywardJOSE",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(name: "KeywardQR", swiftSettings: swiftSettings),
        .target(name: "KeywardHTTPInput", dependencies: ["KeywardJOSE"], swiftSettings: swiftSettings),
        .target(name: "CFuzzerDriver"),
        .target(name: "FuzzSupport", dependencies: ["CFuzzerDriver"], swiftSettings: swiftSettings),
        .target(name: "FuzzFixtures", dependencies: ["KeywardJOSE"], swiftSettings: swiftSettings),
        fuzzer("strict-json", ["KeywardJOSE"]),
        fuzzer("base64url", ["KeywardJOSE"]),
        fuzzer("jws-verify", ["KeywardJOSE", "FuzzFixtures"]),
        fuzzer("jwk", ["KeywardJOSE"]),
        fuzzer("dpop", ["KeywardJOSE", "FuzzFixtures"]),
        fuzzer("form-body", ["KeywardHTTPInput"]),
        fuzzer("htu", ["KeywardJOSE"]),
        fuzzer("accept", ["KeywardHTTPInput"]),
        fuzzer("device-jwt", ["KeywardHTTPInput", "KeywardJOSE"]),
        fuzzer("qr", ["KeywardQR"]),
    ]
)
