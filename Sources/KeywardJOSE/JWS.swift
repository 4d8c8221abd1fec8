/// A structurally parsed JWS in compact serialization. Nothing here is verified.
public struct JWS: Sendable {
    public let header: JSONObject
    public let payload: [UInt8]
    public let signingInput: [UInt8]
    public let signature: [UInt8]

    public static let defaultMaxSize = 16 * 1024

    /// The header `alg` exactly as written; `parse` guarantees it exists and is a string.
    public var algorithmName: String { header["alg"]?.stringValue ?? "" }

    /// Rejects everything RFC 7515 lets a sloppy parser misread: oversize input (checked before any work),
    /// not exactly three parts, lax base64url, non-object or duplicate-member headers, and any `crit` or `b64`,
    /// since we implement no extension and must not silently ignore one.
    public static func parse(_ compact: some StringProtocol, maxSize: Int = JWS.defaultMaxSize) throws(JOSEError) -> JWS {
        let utf8 = compact.utf8
        try checkSize(utf8.count, maxSize: maxSize)
        let result = utf8.withContiguousStorageIfAvailable { parse(buffer: $0) }
            ?? Array(utf8).withUnsafeBufferPointer { parse(buffer: $0) }
        return try result.get()
    }

    /// The size limit, for a compact form of `size` bytes.
    static func checkSize(_ size: Int, maxSize: Int) throws(JOSEError) {
        guard size <= maxSize else { throw JOSEError(.tooLarge, "JWS is \(size) bytes; the limit is \(maxSize)") }
    }

    private static func parse(buffer: UnsafeBufferPointer<UInt8>) -> Result<JWS, JOSEError> {
        var dots: [Int] = []
        for index in buffer.indices where buffer[index] == UInt8(ascii: ".") {
            dots.append(index)
            if dots.count > 2 { break }
        }
        guard dots.count == 2 else {
            return .failure(JOSEError(.malformed, "compact JWS must have exactly 3 dot-separated parts"))
        }
        let headerPart = UnsafeBufferPointer(rebasing: buffer[0..<dots[0]])
        let payloadPart = UnsafeBufferPointer(rebasing: buffer[(dots[0] + 1)..<dots[1]])
        let signaturePart = UnsafeBufferPointer(rebasing: buffer[(dots[1] + 1)...])
        do throws(JOSEError) {
            let headerBytes = try unwrap("header", Base64URL.decode(buffer: headerPart))
            guard !headerBytes.isEmpty else { throw JOSEError(.malformed, "JWS header is empty") }
            let header = try named("header", StrictJSON.parseObject(headerBytes))
            if header["crit"] != nil {
                throw JOSEError(.unsupportedCritical, "JWS header has \"crit\"; no extensions are supported")
            }
            if header["b64"] != nil {
                throw JOSEError(.unsupportedB64, "JWS header has \"b64\"; unencoded payloads are not supported")
            }
            guard let alg = header["alg"] else { throw JOSEError(.missingAlgorithm, "JWS header has no \"alg\"") }
            guard alg.stringValue != nil else { throw JOSEError(.missingAlgorithm, "JWS header \"alg\" is not a string") }
            let payload = try unwrap("payload", Base64URL.decode(buffer: payloadPart))
            let signature = try unwrap("signature", Base64URL.decode(buffer: signaturePart))
            return .success(JWS(header: header, payload: payload,
                                signingInput: Array(UnsafeBufferPointer(rebasing: buffer[0..<dots[1]])),
                                signature: signature))
        } catch {
            return .failure(error)
        }
    }

    private static func unwrap<T>(_ part: String, _ result: Result<T, JOSEError>) throws(JOSEError) -> T {
        switch result {
        case .success(let value): return value
        case .failure(let error): throw JOSEError(error.code, "JWS \(part): \(error.message)")
        }
    }

    private static func named<T>(_ part: String, _ body: @autoclosure () throws(JOSEError) -> T) throws(JOSEError) -> T {
        do throws(JOSEError) {
            return try body()
        } catch {
            throw JOSEError(error.code, "JWS \(part): \(error.message)")
        }
    }

    /// The payload as a strict JSON object (duplicate claims rejected at every depth).
    public func claims() throws(JOSEError) -> JSONObject {
        do throws(JOSEError) {
            return try StrictJSON.parseObject(payload)
        } catch {
            throw JOSEError(error.code, "JWS claims: \(error.message)")
        }
    }

    /// Signs a compact JWS. `alg` always comes from the key, whatever the caller put in `header`.
    public static func sign<Signer: JWSSigner>(header: JSONObject, claims: JSONObject, key: Signer) throws(Signer.SigningError) -> String {
        var header = header
        header["alg"] = .string(key.algorithm.rawValue)
        return try sign(headerBytes: StrictJSON.serialize(header), payload: StrictJSON.serialize(claims), key: key)
    }

    /// Signs pre-serialized header and payload bytes as given (tests use it to craft unusual JSON).
    public static func sign<Signer: JWSSigner>(headerBytes: [UInt8], payload: [UInt8], key: Signer) throws(Signer.SigningError) -> String {
        var signingInput = Base64URL.encode(headerBytes)
        signingInput += "."
        signingInput += Base64URL.encode(payload)
        let signature = try key.sign(Array(signingInput.utf8))
        signingInput += "."
        signingInput += Base64URL.encode(signature)
        return signingInput
    }
}
