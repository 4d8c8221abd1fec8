// Files only their owner can read (mode 0600, directories 0700), written atomically: where the file key store keeps keys.
import Foundation
#if canImport(Glibc)
import Glibc
private let systemWrite = Glibc.write
#elseif canImport(Darwin)
import Darwin
private let systemWrite = Darwin.write
#endif

/// Files only the owner may read (device keys, device state). `FileManager.createFile(attributes:)` is not
/// enough: on Linux it writes the file with the umask's mode and chmods afterwards, so a key is briefly 0644,
/// and replacing by remove-then-move leaves a moment with no file at all.
enum PrivateFile {
    /// Creates `directory` with mode 0700 if it does not exist. An existing directory keeps its mode: it may be
    /// the caller's choice (the working directory, say); the files inside are private either way.
    static func createDirectory(_ directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    /// Writes `data` to a new temporary file created with mode 0600, flushes it, and renames it over `url`:
    /// readers see the old content or the new, never a partial or world-readable file.
    static func write(_ data: Data, to url: URL) throws {
        // A random suffix: a temporary left behind by a crash must not block later writes (O_EXCL).
        let temporary = url.path + ".tmp-" + UUID().uuidString
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw KeywardKitError.cannotWrite(url.path) }
        let written = data.withUnsafeBytes { writeAll(descriptor, $0) }
        let flushed = written && fsync(descriptor) == 0
        close(descriptor)
        guard flushed, rename(temporary, url.path) == 0 else {
            unlink(temporary)
            throw KeywardKitError.cannotWrite(url.path)
        }
    }

    /// Renames `source` over `destination` in one step (both in the same directory), keeping the source's mode.
    static func move(_ source: URL, over destination: URL) throws {
        guard rename(source.path, destination.path) == 0 else { throw KeywardKitError.cannotWrite(destination.path) }
    }

    private static func writeAll(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < buffer.count {
            let count = systemWrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if count < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += count
        }
        return true
    }
}
