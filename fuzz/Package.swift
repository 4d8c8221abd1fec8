// swift-tools-version: 6.1
// libFuzzer targets for Keyward's parsers. A package of its own so that its sanitizer build compiles only the
// parser targets, swift-crypto and (for the attestation readers) swift-certificates and swift-asn1, never the server: the parser sources are symlinked from ../Sources, because a
// path dependency on the root package would still resolve and fetch every one of the server's dependencies.
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

/// libFuzzer's coverage and AddressSanitizer, on our targets only: swift-crypto (the BoringSSL in it included) is
/// built as it is, so coverage measures our parsers and signature checks stay fast.
let instrumented: [SwiftSetting] = swiftSettings + [.unsafeFlags(["-sanitize=fuzzer,address"])]

/// The QR encoder without comparison tracing (trace-cmp, which -sanitize=fuzzer adds): it compares integers for
/// every module of every mask it scores, the tracing took 60% of its time, and it guides nothing there since any
/// bytes are a valid payload. Edge coverage and ASan stay.
let encoderInstrumentation = ["-sanitize=address", "-sanitize-coverage=edge,inline-8bit-counters,pc-table"]

/// One executable per fuzz target: its main.swift starts libFuzzer's driver, its *Fuzzer.swift file holds
/// `LLVMFuzzerTestOneInput`. Linked with libFuzzer and the ASan runtime.
func fuzzer(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
    .executableTarget(
        name: name, dependencies: dependencies + ["FuzzSupport"], swiftSettings: instrumented,
        linkerSettings: [.unsafeFlags(["-sanitize=fuzzer,address"])]
    )
}

let package = Package(
    name: "keyward-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        // The attestation verifiers' certificate chains and DER extensions.
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
    ],
    targets: [
        // The parser targets themselves: symlinks to ../Sources, compiled here with the sanitizers.
        .target(
            name: "KeywardJOSE",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: instrumented
        ),
        .target(name: "KeywardQR", swiftSettings: swiftSettings + [.unsafeFlags(encoderInstrumentation)]),
        .target(name: "KeywardHTTPInput", dependencies: ["KeywardJOSE"], swiftSettings: instrumented),
        .target(name: "KeywardCBOR", swiftSettings: instrumented),
        .target(
            name: "KeywardAttestation",
            dependencies: [
                "KeywardJOSE",
                "KeywardCBOR",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: instrumented
        ),
        .target(name: "CFuzzerDriver"),
        .target(name: "FuzzSupport", dependencies: ["CFuzzerDriver"], swiftSettings: instrumented),
        .target(name: "FuzzFixtures", dependencies: ["KeywardJOSE", "FuzzSupport"], swiftSettings: instrumented),
        fuzzer("strict-json", ["KeywardJOSE"]),
        fuzzer("base64url", ["KeywardJOSE"]),
        fuzzer("jws-verify", ["KeywardJOSE", "FuzzFixtures"]),
        fuzzer("jwk", ["KeywardJOSE", "FuzzFixtures"]),
        fuzzer("dpop", ["KeywardJOSE", "FuzzFixtures"]),
        fuzzer("form-body", ["KeywardHTTPInput"]),
        fuzzer("authorization-request", ["KeywardHTTPInput"]),
        fuzzer("relay-request", ["KeywardHTTPInput", "KeywardJOSE"]),
        fuzzer("scim-filter", ["KeywardHTTPInput", "KeywardJOSE"]),
        fuzzer("htu", ["KeywardJOSE"]),
        fuzzer("accept", ["KeywardHTTPInput"]),
        fuzzer("device-jwt", ["KeywardHTTPInput", "KeywardJOSE"]),
        fuzzer("qr", ["KeywardQR"]),
        fuzzer("host-token", ["KeywardJOSE", "FuzzFixtures"]),
        fuzzer("key-description", ["KeywardAttestation"]),
        fuzzer("cbor", ["KeywardCBOR"]),
        fuzzer("app-attest", ["KeywardAttestation", .product(name: "Crypto", package: "swift-crypto")]),
        fuzzer("webauthn-authenticator-data", ["KeywardAttestation", .product(name: "Crypto", package: "swift-crypto")]),
        fuzzer("cose-key", ["KeywardAttestation"]),
        fuzzer("jwe", ["KeywardJOSE", "KeywardAttestation", .product(name: "Crypto", package: "swift-crypto")]),
    ]
)
