// The App Attest benchmark: attestations and assertions verified per second on one core from a real vector.
import Crypto
import Foundation
import KeywardAttestation

/// App Attest verification in this process, on one core: a real iOS attestation verified at its own time (CBOR,
/// the chain to Apple's pinned root: a P-384 signature over the intermediate and one over the credential
/// certificate, then the nonce and key checks) and its assertion (one P-256 signature), each back to back. What a
/// device registration and a signed request cost the server beyond HTTP and storage, to set beside the ES256 and
/// ES384 ceilings measured in the same run.
struct AppAttestThroughput: Codable {
    let vector: String
    let attestationsPerSecond: Double
    let assertionsPerSecond: Double

    /// The vector the bench reads unless told otherwise: Tests/Fixtures of the source tree this binary was built
    /// from.
    static var defaultVector: URL {
        SourceTree.root.appendingPathComponent("Tests/Fixtures/app-attest/veehaitch-ios-14.4.yaml")
    }

    static func measure(vectorFile: URL, seconds: Double) async throws -> AppAttestThroughput {
        let vector = try Vector(file: vectorFile)
        let verifier = AppAttestVerifier(appID: vector.appID, environment: vector.environment)
        let clientDataHash = Array(SHA256.hash(data: vector.attestationClientData))
        // Verified once up front: a bench that measured refusals would measure the wrong thing.
        let key = try await verifier.verifyAttestation(vector.attestation, clientDataHash: clientDataHash, at: vector.madeAt).publicKey
        _ = try verifier.verifyAssertion(vector.assertion, clientData: .data(vector.assertionClientData), publicKey: key, previousCounter: vector.counter - 1)

        let attestations = try await CryptoCeiling.rate(seconds: seconds) {
            _ = try await verifier.verifyAttestation(vector.attestation, clientDataHash: clientDataHash, at: vector.madeAt)
        }
        let assertions = try await CryptoCeiling.rate(seconds: seconds) {
            _ = try verifier.verifyAssertion(vector.assertion, clientData: .data(vector.assertionClientData), publicKey: key, previousCounter: vector.counter - 1)
        }
        return AppAttestThroughput(vector: vectorFile.lastPathComponent, attestationsPerSecond: attestations, assertionsPerSecond: assertions)
    }

    /// The fields of a vector file (multi-document YAML whose top-level fields are one `key: value` line each).
    private struct Vector {
        let attestation: [UInt8]
        let attestationClientData: [UInt8]
        let appID: String
        let environment: AppAttestEnvironment
        let madeAt: Date
        let assertion: [UInt8]
        let assertionClientData: [UInt8]
        let counter: UInt32

        init(file: URL) throws {
            let documents = try String(contentsOf: file, encoding: .utf8).components(separatedBy: "\n---").map { document in
                var fields: [String: String] = [:]
                for line in document.split(separator: "\n") where !line.hasPrefix(" ") {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                    fields[String(line[..<colon])] = value.trimmingCharacters(in: CharacterSet(charactersIn: "'"))
                }
                return fields
            }
            guard let attestation = documents.first(where: { $0["type"] == "attestation" }),
                let assertion = documents.first(where: { $0["type"] == "assertion" })
            else { throw BenchError("\(file.path): no attestation and assertion documents") }
            func bytes(_ fields: [String: String], _ key: String) throws -> [UInt8] {
                guard let text = fields[key], let data = Data(base64Encoded: text) else { throw BenchError("\(file.path): no base64 \(key)") }
                return Array(data)
            }
            self.attestation = try bytes(attestation, "attestationBase64")
            attestationClientData = try bytes(attestation, "clientDataBase64")
            self.assertion = try bytes(assertion, "assertionBase64")
            assertionClientData = try bytes(assertion, "clientDataBase64")
            guard let team = attestation["teamIdentifier"], let bundle = attestation["bundleIdentifier"],
                let environment = attestation["environment"].flatMap(AppAttestEnvironment.init(rawValue:)),
                let time = attestation["timestamp"].flatMap({ try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse($0) }),
                let counter = assertion["counter"].flatMap(UInt32.init), counter > 0
            else { throw BenchError("\(file.path): app id, environment, timestamp or counter missing") }
            appID = team + "." + bundle
            self.environment = environment
            madeAt = time
            self.counter = counter
        }
    }
}
