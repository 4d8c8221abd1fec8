// Test support: a minimal PNG writer, the zbarimg and rsvg-convert tools, and seeded random data for QR tests.
import Foundation
import XCTest

@testable import KeywardQR

/// Minimal PNG writer for decoder tests: 8-bit greyscale, zlib with stored (uncompressed) deflate blocks,
/// so the test depends on no image or compression library.
enum QRTestPNG {
    static func render(_ code: QRCode, scale: Int = 4, quietZone: Int = 4) -> Data {
        let extent = (code.size + 2 * quietZone) * scale
        var pixels = [UInt8]()
        pixels.reserveCapacity(extent * (extent + 1))
        for row in 0..<extent {
            pixels.append(0)  // filter type "none" for this scanline
            let y = row / scale - quietZone
            for column in 0..<extent {
                let x = column / scale - quietZone
                pixels.append(code.isDark(x: x, y: y) ? 0x00 : 0xFF)
            }
        }
        return encode(width: extent, height: extent, scanlines: pixels)
    }

    static func encode(width: Int, height: Int, scanlines: [UInt8]) -> Data {
        var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        var header = [UInt8]()
        header += bigEndian(UInt32(width))
        header += bigEndian(UInt32(height))
        header += [8, 0, 0, 0, 0]  // bit depth 8, greyscale, deflate, adaptive filtering, no interlace
        png += chunk("IHDR", header)
        png += chunk("IDAT", zlibStored(scanlines))
        png += chunk("IEND", [])
        return png
    }

    static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let length = min(65_535, data.count - offset)
            let isFinal = offset + length == data.count
            out.append(isFinal ? 1 : 0)
            out += [UInt8(length & 0xFF), UInt8(length >> 8)]
            out += [UInt8(~length & 0xFF), UInt8((~length >> 8) & 0xFF)]
            out += data[offset..<(offset + length)]
            offset += length
        } while offset < data.count
        out += bigEndian(adler32(data))
        return out
    }

    static func chunk(_ type: String, _ body: [UInt8]) -> Data {
        let typeBytes = Array(type.utf8)
        var data = Data(bigEndian(UInt32(body.count)))
        data += typeBytes
        data += body
        data += bigEndian(crc32(typeBytes + body))
        return data
    }

    static let crcTable: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }

    static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in bytes {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return b << 16 | a
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }
}

/// Runs Debian's command-line tools (zbar-tools' `zbarimg`, librsvg2-bin's `rsvg-convert`) as independent
/// readers of what the encoder produced.
enum QRExternalTool {
    static func locate(_ name: String) throws -> URL {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        let directories = path.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/local/bin"]
        for directory in directories {
            let candidate = URL(fileURLWithPath: directory).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        let message = "\(name) not found (Debian packages zbar-tools and librsvg2-bin provide the QR test tools)"
        // CI must run the decoder checks, so there a missing tool is a failure rather than a skip.
        if ProcessInfo.processInfo.environment["CI"] == "true" {
            throw DecodeFailure(message: message + "; CI=true requires it")
        }
        throw XCTSkip(message)
    }

    struct Result {
        var status: Int32
        var stdout: Data
        var stderr: String
    }

    static func run(_ executable: URL, _ arguments: [String]) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // zbarimg and rsvg-convert write little to stderr, so reading stdout to the end first cannot stall.
        let stdoutData = out.fileHandleForReading.readDataToEndOfFile()
        let stderrData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            stdout: stdoutData,
            stderr: String(decoding: stderrData, as: UTF8.self)
        )
    }

    static func temporaryFile(_ name: String) -> URL {
        FileManager.default.temporaryDirectory
            .appendingPathComponent("keyward-qr-\(UUID().uuidString)-\(name)")
    }

    /// Decodes the one QR code in a PNG file and returns its payload bytes as zbar delivers them.
    /// Only the QR decoder runs (a linear-barcode decoder can read a false "symbol" in the modules), and `-Sbinary`
    /// makes zbar hand over the byte-mode bytes untouched instead of guessing a character set.
    static func zbarDecode(pngFile: URL) throws -> [UInt8] {
        let zbarimg = try locate("zbarimg")
        let result = try run(zbarimg, ["--nodbus", "--raw", "-q", "--oneshot", "-Sdisable", "-Sqrcode.enable", "-Sbinary", pngFile.path])
        guard result.status == 0 else {
            throw DecodeFailure(message: "zbarimg exited \(result.status): \(result.stderr)")
        }
        return Array(result.stdout)
    }

    static func zbarDecode(_ code: QRCode) throws -> [UInt8] {
        let file = temporaryFile("code.png")
        defer { try? FileManager.default.removeItem(at: file) }
        try QRTestPNG.render(code).write(to: file)
        return try zbarDecode(pngFile: file)
    }

    struct DecodeFailure: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }
}

/// SplitMix64, so "random" payloads are the same on every run and a failure can be reproduced.
struct QRTestRandom: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Decodes an SVG QR code as a phone camera would see it: librsvg rasterises it, zbar reads it.
enum QRDecoding {
    /// The decoded text; nil when the tools are missing outside CI (CI=true makes that a failure).
    static func decodeSVG(_ svg: String) throws -> String? {
        let rsvg: URL
        do {
            rsvg = try QRExternalTool.locate("rsvg-convert")
        } catch is XCTSkip {
            return nil
        }
        let svgFile = QRExternalTool.temporaryFile("page.svg")
        let pngFile = QRExternalTool.temporaryFile("page.png")
        defer {
            try? FileManager.default.removeItem(at: svgFile)
            try? FileManager.default.removeItem(at: pngFile)
        }
        try Data(svg.utf8).write(to: svgFile)
        let converted = try QRExternalTool.run(rsvg, ["--format=png", "--output", pngFile.path, svgFile.path])
        guard converted.status == 0 else { throw QRExternalTool.DecodeFailure(message: "rsvg-convert: \(converted.stderr)") }
        return String(decoding: try QRExternalTool.zbarDecode(pngFile: pngFile), as: UTF8.self)
    }
}
