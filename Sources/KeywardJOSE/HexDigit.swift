/// One ASCII hex digit of a percent-escape (RFC 3986 §2.1), either case: shared by the `htu` normalizer here and
/// the form-body parser in KeywardHTTPInput.
package enum HexDigit {
    package static func value(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
