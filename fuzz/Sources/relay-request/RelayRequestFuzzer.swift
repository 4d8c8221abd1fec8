// Fuzzes the broker relay's query and its session key: no trap, and what they accept keeps their rules.
import FuzzSupport
import KeywardHTTPInput
import KeywardJOSE

/// The input is a form-encoded relay query; the same bytes are also read as a `publicKey` value on their own.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = FuzzInput(data, size)
    if let key = try? RelayRequest.sessionKey(input.text) { check(key) }

    guard let parameters = try? FormBody.parse(Array(input.text.utf8)), let request = try? RelayRequest(parameters) else { return 0 }
    check(request.sessionKey)
    expect((RelayRequest.minNonceLength...RelayRequest.maxNonceLength).contains(request.nonce.utf8.count), "a nonce of the wrong length")
    expect(
        request.nonce.utf8.allSatisfy { $0 == 0x2D || $0 == 0x2E || $0 == 0x5F || $0 == 0x7E || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) },
        "a nonce with a character that is not unreserved"
    )
    expect(!request.clientId.isEmpty && !request.returnURL.isEmpty, "an empty client_id or return accepted")
    expect(request.returnURL.utf8.count <= RelayRequest.maxReturnLength, "a return address over the limit")
    return 0
}

/// An accepted session key is a public P-256 or Ed25519 key, named by its required members alone.
private func check(_ key: JWK) {
    switch key.material {
    case .ec(curve: "P-256", _, _), .okp(curve: "Ed25519", _): break
    default: expect(false, "a session key that is neither P-256 nor Ed25519")
    }
    expect(key.kid == nil && key.alg == nil && key.use == nil, "a session key that kept kid, alg or use")
    expect((try? JWK(json: key.requiredMembers))?.thumbprint() == key.thumbprint(), "a session key whose members do not give it back")
}
