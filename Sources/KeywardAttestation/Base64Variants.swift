// Decoding base64 in either alphabet, padded or not, so the same bytes read the same however they were written.
import Foundation

/// Bytes from base64 in either alphabet, padded or not: how keys, certificates, nonces and digests travel between
/// apps, platforms and a server. Apps pass Play's nonce web-safe and unpadded, yet some send it standard and padded,
/// and Play hands back what it got; Android apps encode certificates with or without line breaks; iOS sends
/// standard base64. The same bytes must read the same however they were written (reference §5, the levy-street
/// nonce mismatch). The one decoder of such input for the attestation verifiers, the device API and the CLI.
public enum Base64Variants {
    /// nil for text that is no base64 at all (a character outside both alphabets, misplaced or excess padding, an
    /// impossible length). `ignoringLineBreaks`: CR and LF anywhere are dropped first (wrapped base64, files).
    public static func decode(_ text: some StringProtocol, ignoringLineBreaks: Bool = false) -> [UInt8]? {
        var body = Array(text.utf8)
        if ignoringLineBreaks { body.removeAll { $0 == 0x0A || $0 == 0x0D } }
        var padding = 0
        while body.last == UInt8(ascii: "=") {
            body.removeLast()
            padding += 1
        }
        guard padding <= 2, body.count % 4 != 1 else { return nil }
        if padding > 0, (body.count + padding) % 4 != 0 { return nil }
        for index in body.indices {
            switch body[index] {
            case UInt8(ascii: "-"): body[index] = UInt8(ascii: "+")
            case UInt8(ascii: "_"): body[index] = UInt8(ascii: "/")
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "+"), UInt8(ascii: "/"):
                continue
            default:
                return nil
            }
        }
        body.append(contentsOf: repeatElement(UInt8(ascii: "="), count: (4 - body.count % 4) % 4))
        return Data(base64Encoded: Data(body)).map(Array.init)
    }

    /// Whether two texts carry the same bytes; texts that are not base64 match only themselves.
    public static func sameBytes(_ lhs: String, _ rhs: String) -> Bool {
        if lhs == rhs { return true }
        guard let left = decode(lhs), let right = decode(rhs) else { return false }
        return left == right
    }
}
