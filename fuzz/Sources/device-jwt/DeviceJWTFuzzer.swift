// Fuzzes the push-MFA device JWT reading (size cap, strict claims, algorithm allow-list): no trap, and only an
// allowed algorithm and a JSON object of claims get through.
import FuzzSupport
import KeywardHTTPInput
import KeywardJOSE

/// The push-MFA API's settings (PushMFALimits.jwtLength and DeviceAuthenticator.algorithms in KeywardServer).
let maxSize = 16384
let allowed: Set<JWSAlgorithm> = [.rs256, .rs384, .rs512, .es256, .es384, .es512]

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let compact = FuzzInput(data, size).text
    do throws(DeviceJWT.Failure) {
        let token = try DeviceJWT(compact, maxSize: maxSize, allowedAlgorithms: allowed)
        expect(compact.utf8.count <= maxSize, "accepted \(compact.utf8.count) bytes")
        expect(allowed.contains(token.algorithm), "accepted \(token.algorithm)")
        expect(token.jws.algorithmName == token.algorithm.rawValue, "algorithm is not the header's")
        expect((try? StrictJSON.parseObject(token.jws.payload)) == token.claims, "claims are not the payload")
    } catch .unsupportedAlgorithm(let name) {
        expect(JWSAlgorithm(rawValue: name).map(allowed.contains) != true, "refused the allowed algorithm \(name)")
        expect((try? JWS.parse(compact, maxSize: maxSize).claims()) != nil, "an unparsable token was called an algorithm problem")
    } catch {
        return 0
    }
    return 0
}
