// swift-tools-version: 6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "keyward",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "KeywardJOSE", targets: ["KeywardJOSE"]),
        .library(name: "KeywardWire", targets: ["KeywardWire"]),
        .library(name: "KeywardKit", targets: ["KeywardKit"]),
        .executable(name: "keyward", targets: ["keyward"]),
        .executable(name: "keyward-device", targets: ["keyward-device"]),
        .executable(name: "keyward-bench", targets: ["keyward-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/vapor/sql-kit.git", from: "3.36.0"),
        .package(url: "https://github.com/vapor/sqlite-kit.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/postgres-kit.git", from: "2.17.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/vapor/sqlite-nio.git", from: "1.13.2"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
    ],
    targets: [
        .target(
            name: "KeywardJOSE",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(name: "KeywardWire", swiftSettings: swiftSettings),
        // QR codes (byte mode, versions 1-40, SVG), with no dependency: the enrollment page draws its own.
        .target(name: "KeywardQR", swiftSettings: swiftSettings),
        // A strict, bounded CBOR reader (definite lengths, major types 0-5) for App Attest objects, with no dependency.
        .target(name: "KeywardCBOR", swiftSettings: swiftSettings),
        // What the HTTP surface reads from requests (form bodies, Accept, device JWTs), pure and kept out of the
        // server so that the fuzzers in fuzz/ build it without Hummingbird, NIO or the databases.
        .target(name: "KeywardHTTPInput", dependencies: ["KeywardJOSE"], swiftSettings: swiftSettings),
        // Platform attestation verifiers (Apple App Attest, Android Key Attestation, Play Integrity) with their pinned
        // roots: pure functions of their input and a time, shared by the server, `keyward attestation verify` and the
        // fuzzers, so an operator debugging a device runs the server's own checks.
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
            swiftSettings: swiftSettings
        ),
        .target(name: "CKeywardSQLite"),
        .target(
            name: "KeywardServer",
            dependencies: [
                "CKeywardSQLite",
                "KeywardJOSE",
                "KeywardWire",
                "KeywardQR",
                "KeywardHTTPInput",
                "KeywardAttestation",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "SQLiteKit", package: "sqlite-kit"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // Reads the OpenAPI document (written in YAML) to serve it as JSON as well.
                .product(name: "Yams", package: "Yams"),
                // PEM certificates of host-token issuers (and, later, attestation chains).
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            // The HTTP contract, compiled into the binary so a deployed server serves it with no file beside it.
            resources: [.embedInCode("App/openapi.yaml")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "KeywardKit",
            dependencies: [
                "KeywardJOSE",
                "KeywardWire",
                // The software passkey authenticator writes its attestation objects and COSE keys.
                "KeywardCBOR",
                // SHA-256 (signed requests' body digest, the registration's binding nonce) and DER signatures. Linked
                // already through KeywardJOSE; on Apple platforms it is CryptoKit underneath.
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "keyward",
            dependencies: [
                "KeywardServer",
                // `keyward attestation verify` runs the verifiers directly, offline.
                "KeywardAttestation",
                "KeywardJOSE",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "keyward-device",
            dependencies: [
                "KeywardKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "keyward-bench",
            dependencies: [
                "KeywardJOSE",
                "KeywardKit",
                // The passkey scenario reads and writes the WebAuthn JSON forms.
                "KeywardWire",
                // The app-attest scenario verifies real App Attest objects in process.
                "KeywardAttestation",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KeywardJOSETests",
            dependencies: [
                "KeywardJOSE",
                // Certificate-style DER of generated keys, for the SubjectPublicKeyInfo reader.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "KeywardWireTests", dependencies: ["KeywardWire"], swiftSettings: swiftSettings),
        .testTarget(name: "KeywardQRTests", dependencies: ["KeywardQR"], swiftSettings: swiftSettings),
        .testTarget(name: "KeywardCBORTests", dependencies: ["KeywardCBOR"], swiftSettings: swiftSettings),
        // Attestations made in tests (a self-made CA in place of Apple's), shared by the verifier's and the server's tests.
        .target(
            name: "AttestationTestSupport",
            dependencies: [
                "KeywardCBOR",
                "KeywardAttestation",
                "KeywardJOSE",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            path: "Tests/AttestationTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KeywardAttestationTests",
            dependencies: [
                "AttestationTestSupport",
                "KeywardAttestation",
                "KeywardJOSE",
                "KeywardCBOR",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                // The App Attest vectors are multi-document YAML files.
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "KeywardHTTPInputTests", dependencies: ["KeywardHTTPInput", "KeywardJOSE"], swiftSettings: swiftSettings),
        .testTarget(
            name: "KeywardKitTests",
            dependencies: [
                "KeywardKit",
                "KeywardJOSE",
                // Only to build a signer straight on swift-crypto, the way a hardware key is not a SigningKey.
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "KeywardServer",
                "KeywardKit",
                "KeywardJOSE",
                "KeywardWire",
                // App Attest attestations and assertions under a test root, for KeywardKit's assertion signing.
                "AttestationTestSupport",
                "KeywardAttestation",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KeywardServerTests",
            dependencies: [
                "KeywardServer",
                "KeywardAttestation",
                "KeywardCBOR",
                "AttestationTestSupport",
                "KeywardJOSE",
                "KeywardWire",
                "KeywardQR",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                // Host-token issuers' RSA keys and self-signed PEM certificates.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
