// Parsing form-urlencoded request bodies, refusing repeated parameter names.
import KeywardJOSE

/// `application/x-www-form-urlencoded` bodies. OAuth parameters must not repeat (RFC 6749 §3.1),
/// so a repeated name is an error rather than "first wins".
package enum FormBody {
    package enum Failure: Error, Equatable {
        case duplicate(String)
        case malformed
    }

    package static func parse(_ bytes: some Collection<UInt8>) throws(Failure) -> [String: String] {
        // Callers are in other modules, which cannot specialize this function for their collection, and generic
        // element access allocates for every byte: one call reaches the bytes, the parsing works on a buffer.
        let result = bytes.withContiguousStorageIfAvailable { parse(buffer: $0) }
            ?? Array(bytes).withUnsafeBufferPointer { parse(buffer: $0) }
        return try result.get()
    }

    private static func parse(buffer: UnsafeBufferPointer<UInt8>) -> Result<[String: String], Failure> {
        var result: [String: String] = [:]
        for pair in buffer.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            // A NUL (%00) is in no parameter Keyward takes, and PostgreSQL cannot store or compare text holding one.
            guard let name = decode(parts[0]), let value = parts.count > 1 ? decode(parts[1]) : "", !name.contains("\0"), !value.contains("\0")
            else { return .failure(.malformed) }
            guard result[name] == nil else { return .failure(.duplicate(name)) }
            result[name] = value
        }
        return .success(result)
    }

    /// RFC 3986 §2.3: a byte that stands for itself anywhere in a URL.
    package static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// Percent-encodes everything but RFC 3986's unreserved characters, for a query or form value. Tokens are usually
    /// unreserved already and come back as they are, without Foundation's CharacterSet (slow on Linux).
    package static func encodeComponent(_ text: String) -> String {
        guard !text.utf8.allSatisfy(isUnreserved) else { return text }
        var encoded = ""
        encoded.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case let byte where isUnreserved(byte):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                encoded.unicodeScalars.append("%")
                encoded.unicodeScalars.append(hex[Int(byte >> 4)])
                encoded.unicodeScalars.append(hex[Int(byte & 0x0F)])
            }
        }
        return encoded
    }

    /// `name=value` pairs joined by `&`, each encoded: a query, a form body, or a URL's fragment.
    package static func encode(_ parameters: [(String, String)]) -> String {
        parameters.map { encodeComponent($0.0) + "=" + encodeComponent($0.1) }.joined(separator: "&")
    }

    /// `base` with the parameters appended to its query (after `?`, or `&` when it has one), each encoded.
    package static func appending(_ parameters: [(String, String)], to base: String) -> String {
        guard !parameters.isEmpty else { return base }
        return base + (base.contains("?") ? "&" : "?") + encode(parameters)
    }

    /// Percent-decoding with `+` as space; nil on invalid escapes or invalid UTF-8.
    package static func decodeComponent(_ text: some StringProtocol) -> String? {
        // As a String (a copy for a Substring), for the same reason as in `parse`.
        var text = String(text)
        return text.withUTF8 { decode($0[...]) }
    }

    private static func decode(_ encoded: Slice<UnsafeBufferPointer<UInt8>>) -> String? {
        // Most values (tokens, ids, grant types) have nothing to decode: validated as they are.
        guard encoded.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) else {
            return String(validating: encoded, as: UTF8.self)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(encoded.count)
        var iterator = encoded.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"): bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(HexDigit.value), let low = iterator.next().flatMap(HexDigit.value) else { return nil }
                bytes.append(high << 4 | low)
            default: bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
