// Files only their owner can read (mode 0600, directories 0700), written atomically and durably: the device's keys and
// state, and the server's generated master key file.
import Foundation
#if canImport(Glibc)
import Glibc
private let systemWrite = Glibc.write
#elseif canImport(Darwin)
import Darwin
private let systemWrite = Darwin.write
#endif

/// Files only the owner may read (device keys, device state, the server's master key file).
/// `FileManager.createFile(attributes:)` is not enough: on Linux it writes the file with the umask's mode and chmods
/// afterwards, so a key is briefly 0644, and replacing by remove-then-move leaves a moment with no file at all.
public enum PrivateFile {
    /// A file that could not be written; nothing was replaced.
    public struct WriteError: Error, Equatable, CustomStringConvertible {
        public let path: String
        public var description: String { "cannot write \(path)" }
    }

    /// Creates `directory` with mode 0700 if it does not exist. An existing directory keeps its mode: it may be
    /// the caller's choice (the working directory, say); the files inside are private either way.
    public static func createDirectory(_ directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    /// Writes `data` to a new temporary file created with mode 0600, flushes it, renames it over `url` and flushes the
    /// directory: readers see the old content or the new, never a partial or world-readable file, and once this
    /// returns a power loss keeps the new content (a key that sealed data must outlive that data's commit).
    public static func write(_ data: Data, to url: URL) throws(WriteError) {
        // A random suffix: a temporary left behind by a crash must not block later writes (O_EXCL).
        let temporary = url.path + ".tmp-" + UUID().uuidString
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw WriteError(path: url.path) }
        let written = data.withUnsafeBytes { writeAll(descriptor, $0) }
        let flushed = written && fsync(descriptor) == 0
        close(descriptor)
        guard flushed, rename(temporary, url.path) == 0 else {
            unlink(temporary)
            throw WriteError(path: url.path)
        }
        guard syncDirectory(of: url) else { throw WriteError(path: url.path) }
    }

    /// The rename is a change to the directory: until the directory is flushed, a power loss may undo it.
    private static func syncDirectory(of url: URL) -> Bool {
        let descriptor = open(url.deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return fsync(descriptor) == 0
    }

    /// Renames `source` over `destination` in one step (both in the same directory), keeping the source's mode.
    public static func move(_ source: URL, over destination: URL) throws(WriteError) {
        guard rename(source.path, destination.path) == 0 else { throw WriteError(path: destination.path) }
    }

    /// Creates `url` empty with mode 0600; fails if anything is there already (a copy is never written over).
    public static func createEmpty(_ url: URL) throws(WriteError) {
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw WriteError(path: url.path) }
        close(descriptor)
    }

    /// Flushes `source` to disk, renames it to `destination` (same directory; nothing may be there) and flushes the
    /// directory: the finished file appears whole, under its final name, and stays through a power loss.
    public static func settle(_ source: URL, as destination: URL) throws(WriteError) {
        let descriptor = open(source.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw WriteError(path: source.path) }
        let flushed = fsync(descriptor) == 0
        close(descriptor)
        guard flushed, !FileManager.default.fileExists(atPath: destination.path), rename(source.path, destination.path) == 0,
            syncDirectory(of: destination)
        else { throw WriteError(path: destination.path) }
    }

    /// Copies `source` into a new file `destination` with mode 0600, in pieces (a database may be larger than memory),
    /// then settles it: `destination` appears only once it is complete.
    public static func copy(_ source: URL, to destination: URL) throws(WriteError) {
        let input = open(source.path, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw WriteError(path: source.path) }
        defer { close(input) }
        let temporary = URL(fileURLWithPath: destination.path + ".tmp-" + UUID().uuidString)
        let output = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard output >= 0 else { throw WriteError(path: destination.path) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var copied = true
        while copied {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress!, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 {
                copied = count == 0
                break
            }
            copied = buffer.withUnsafeBytes { writeAll(output, UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
        }
        close(output)
        do throws(WriteError) {
            guard copied else { throw WriteError(path: destination.path) }
            try settle(temporary, as: destination)
        } catch {
            unlink(temporary.path)
            throw error
        }
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
