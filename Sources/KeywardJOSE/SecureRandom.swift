// Random bytes and UUIDs from the kernel's CSPRNG, with one system call per value instead of per byte.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#else
#error("SecureRandom needs a kernel random source: getentropy (glibc, musl) or arc4random_buf (Apple platforms)")
#endif

/// Random bytes for secrets, identifiers and nonces, from the kernel's CSPRNG: on Linux one `getentropy` (that is,
/// `getrandom`) system call per value of up to 256 bytes, on Apple platforms `arc4random_buf`.
///
/// On Linux `SystemRandomNumberGenerator` costs one `getrandom` per 8 bytes, and so does swift-crypto's
/// `SymmetricKey(size:)`, which fills its bytes through it; `UInt8.random(in:)` costs one per byte. A 32-byte secret
/// drawn byte by byte took 32 system calls, and shuffling 100 numbers for a number match took 99. Every login creates
/// several secrets, so those calls showed up as a tenth of the server's CPU.
public enum SecureRandom {
    public static func bytes(_ count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            fill(UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
    }

    /// Fills `buffer` from the kernel. Where `getentropy` is refused (a sandbox without `getrandom`), the standard
    /// library's generator takes over: it reads `/dev/urandom` instead, and stops the process if there is no
    /// randomness at all rather than hand out predictable bytes.
    private static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress else { return }
        #if canImport(Darwin)
        arc4random_buf(base, buffer.count)
        #else
        var filled = 0
        while filled < buffer.count {
            let chunk = min(256, buffer.count - filled)  // getentropy's limit per call
            guard getentropy(base + filled, chunk) == 0 else {
                var generator = SystemRandomNumberGenerator()
                for index in filled..<buffer.count { buffer[index] = generator.next() }
                return
            }
            filled += chunk
        }
        #endif
    }

    /// A random (version 4) UUID, lower-case, without opening `/dev/urandom` as Foundation's `UUID()` does on Linux.
    public static func uuidString() -> String {
        var bytes = bytes(16)
        bytes[6] = (bytes[6] & 0x0F) | 0x40  // version 4
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 9562 variant
        return text(of: bytes)
    }

    /// A time-ordered (version 7, RFC 9562 §5.7) UUID, lower-case: 48 bits of Unix milliseconds at `time`, then 74
    /// random bits. Ids made later sort later, so a table's index on them grows at its end instead of at random pages.
    public static func timeOrderedUUIDString(at time: Date) -> String {
        var bytes = bytes(16)
        let milliseconds = UInt64(max(0, (time.timeIntervalSince1970 * 1000).rounded(.down)))
        for index in 0..<6 { bytes[index] = UInt8(truncatingIfNeeded: milliseconds >> (8 * (5 - index))) }
        bytes[6] = (bytes[6] & 0x0F) | 0x70  // version 7
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 9562 variant
        return text(of: bytes)
    }

    private static func text(of bytes: [UInt8]) -> String {
        let hex = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// A generator for `Int.random(in:using:)` and friends that draws 256 bytes at a time. Use one per operation
    /// and let it go: its buffer holds unused random bytes.
    public struct Generator: RandomNumberGenerator {
        private var buffer: [UInt8] = []
        private var position = 0

        public init() {}

        public mutating func next() -> UInt64 {
            if position + 8 > buffer.count {
                buffer = SecureRandom.bytes(256)
                position = 0
            }
            defer { position += 8 }
            return buffer[position..<position + 8].reduce(0) { $0 << 8 | UInt64($1) }
        }
    }
}
