// How a fuzz target reads its input: a leading options byte, or two texts separated by a newline.

/// The bytes libFuzzer hands over, with the few ways the targets cut them up.
public struct FuzzInput {
    public let bytes: UnsafeBufferPointer<UInt8>

    public init(_ data: UnsafePointer<UInt8>?, _ size: Int) {
        bytes = UnsafeBufferPointer(start: data, count: data == nil ? 0 : size)
    }

    /// The whole input as text; invalid UTF-8 becomes U+FFFD, as an HTTP library hands header text over.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// The first byte as option bits (0 for an empty input) and the rest. The options pick the policy a verifier
    /// runs under, so one corpus explores every configuration.
    public var optionsAndRest: (options: UInt8, rest: UnsafeBufferPointer<UInt8>) {
        guard let first = bytes.first else { return (0, bytes) }
        return (first, UnsafeBufferPointer(rebasing: bytes.dropFirst()))
    }

    /// The two parts around the first newline (the second empty when there is none).
    public static func split(_ bytes: UnsafeBufferPointer<UInt8>) -> (first: [UInt8], second: [UInt8]) {
        guard let newline = bytes.firstIndex(of: 0x0A) else { return (Array(bytes), []) }
        return (Array(bytes[..<newline]), Array(bytes[(newline + 1)...]))
    }
}
