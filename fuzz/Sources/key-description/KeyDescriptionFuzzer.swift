// Fuzzes the Android Key Attestation reader: KeyDescription DER (arbitrary bytes and mutated real extension values)
// and whole attestation certificates read as a chain, then searched for the extension. No trap; a refusal is
// MALFORMED, or UNSUPPORTED_ALGORITHM for a certificate naming ML-DSA; what reads reads the same twice, is refused
// with one trailing byte, has its unknown tags ascending, and encodes to JSON.
import Foundation
import FuzzSupport
import KeywardAttestation

/// Input: a mode byte, then by mode: even, the extension value (KeyDescription DER); odd, one certificate's DER.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let (mode, rest) = FuzzInput(data, size).optionsAndRest
    if mode % 2 == 0 {
        checkKeyDescription(Array(rest))
    } else {
        checkCertificate(Array(rest))
    }
    return 0
}

func checkKeyDescription(_ bytes: [UInt8]) {
    let description: KeyDescription
    do {
        description = try KeyDescription(derEncoded: bytes)
    } catch {
        expect(error.reason == .malformed, "a KeyDescription refused with \(error.reason.rawValue): \(error.detail)")
        return
    }
    expect(bytes.count <= KeyDescription.maximumEncodedSize, "read \(bytes.count) bytes, over the limit")
    expect((try? KeyDescription(derEncoded: bytes)) == description, "a second reading differs")
    expect((try? KeyDescription(derEncoded: bytes + [0])) == nil, "a trailing byte was accepted")
    for list in [description.softwareEnforced, description.hardwareEnforced] {
        expect(zip(list.unknownTags, list.unknownTags.dropFirst()).allSatisfy { $0 < $1 }, "unknown tags \(list.unknownTags) not ascending")
    }
    expect((try? JSONEncoder().encode(description)) != nil, "a KeyDescription that read does not encode")
}

func checkCertificate(_ bytes: [UInt8]) {
    let chain: AndroidCertificateChain
    do {
        chain = try AndroidCertificateChain(der: [bytes])
    } catch {
        switch error.reason {
        case .malformed: break
        case .unsupportedAlgorithm: expect(error.detail.contains("ML-DSA"), "unsupported for another reason: \(error.detail)")
        default: expectationFailed("a certificate refused with \(error.reason.rawValue): \(error.detail)")
        }
        return
    }
    expect(chain.derEncoded == [bytes], "the certificate does not serialize to its own bytes")
    if let value = chain.certificates[0].extensions[oid: KeyDescription.oid]?.value {
        checkKeyDescription(Array(value))
    }
}
