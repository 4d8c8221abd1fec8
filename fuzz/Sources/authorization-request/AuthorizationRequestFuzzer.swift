// Fuzzes the authorization endpoint's parameters and redirect URIs: no trap, and what they accept keeps their rules.
import FuzzSupport
import KeywardHTTPInput

/// The input's first line is a form-encoded authorization request; its first two lines are also a registered
/// redirect URI and a requested one.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = FuzzInput(data, size)
    let lines = input.text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)

    if let registered = try? RedirectURI(registering: lines[0]) {
        expect(registered.matches(lines[0]), "a registered redirect URI does not match itself")
        expect(lines[0].utf8.allSatisfy { (0x21...0x7E).contains($0) } && !lines[0].contains("#"), "a registered URI has a space, a control character or a fragment")
        if lines.count > 1, registered.matches(lines[1]) {
            if registered.kind == .loopback {
                expect(lines[1].hasPrefix("http://127.0.0.1") || lines[1].hasPrefix("http://[::1]"), "a loopback match off the loopback")
                expect(!lines[1].contains("@"), "a loopback match with user info")
            } else {
                expect(lines[1].utf8.elementsEqual(lines[0].utf8), "a match that is not the same bytes")
            }
        }
    }

    guard let parameters = try? FormBody.parse(Array(lines[0].utf8)) else { return 0 }
    _ = AuthorizationRequest.Target(parameters)
    guard let request = try? AuthorizationRequest(parameters) else { return 0 }
    expect(request.codeChallenge.utf8.count == 43, "a code challenge that is not 43 characters")
    expect(Set(request.scopes).count == request.scopes.count, "a scope listed twice")
    expect(parameters["code_challenge_method"] == "S256" && parameters["response_type"] == "code", "a request without S256 or code accepted")
    return 0
}
