// Google's attestation certificate status list, read from the operator's file and matched by serial.
import KeywardJOSE
import X509

/// Google's attestation certificate status list, read from a file the operator downloads and refreshes
/// (Google publishes it at https://android.googleapis.com/attestation/status; Keyward never fetches it itself,
/// so verification stays a pure function of its inputs).
///
/// Format: `{"entries": {"<serial>": {"status": "REVOKED" | "SUSPENDED", "reason": "...", ...}, ...}}`, where
/// `<serial>` is a certificate serial number in hexadecimal. Google writes it lowercase without leading zeros (Java's
/// `BigInteger.toString(16)`); both sides are normalized the same way here (case folded, leading zeros dropped), so
/// an entry written with either matches. Any entry refuses the certificate, whatever its status: a suspended key is
/// no more trustworthy while suspended. Members beside `entries` and inside an entry are ignored.
public struct RevocationList: Sendable {
    public struct Entry: Sendable, Equatable {
        /// `REVOKED` or `SUSPENDED` in Google's list; kept as written.
        public var status: String?
        /// `KEY_COMPROMISE`, `CA_COMPROMISE`, `SUPERSEDED`, `SOFTWARE_FLAW`, … when given.
        public var reason: String?

        public init(status: String?, reason: String?) {
            self.status = status
            self.reason = reason
        }
    }

    /// Entries by normalized serial (lowercase hex, no leading zeros).
    public let entries: [String: Entry]

    public init(entries: [String: Entry]) {
        var normalized: [String: Entry] = [:]
        for (serial, entry) in entries {
            normalized[Self.normalizedSerial(serial)] = entry
        }
        self.entries = normalized
    }

    /// Reads the list's JSON. Refuses (`MALFORMED`) a file that is not such a list, so that a damaged download is
    /// noticed when it is loaded rather than silently revoking nothing.
    public init(json bytes: some Collection<UInt8>) throws(AttestationFailure) {
        let object: JSONObject
        do {
            object = try StrictJSON.parseObject(bytes)
        } catch {
            throw AttestationFailure(.malformed, "the revocation list is not a JSON object: \(error.message)")
        }
        guard let members = object.object("entries") else {
            throw AttestationFailure(.malformed, "the revocation list has no \"entries\" object")
        }
        var entries: [String: Entry] = [:]
        for (serial, value) in members {
            guard let entry = value.objectValue else {
                throw AttestationFailure(.malformed, "the revocation list's entry for \(serial.prefix(64)) is not an object")
            }
            guard !serial.isEmpty, serial.utf8.allSatisfy({ HexSerial.digitValue($0) != nil }) else {
                throw AttestationFailure(.malformed, "the revocation list names \"\(serial.prefix(64))\", which is not a hexadecimal serial number")
            }
            entries[serial] = Entry(status: entry.string("status"), reason: entry.string("reason"))
        }
        self.init(entries: entries)
    }

    /// The entry naming this certificate, if any.
    public func entry(for certificate: Certificate) -> Entry? {
        entries[HexSerial.text(certificate.serialNumber.bytes)]
    }

    /// Lowercase, without leading zeros ("0" for zero): the form Google writes.
    public static func normalizedSerial(_ text: String) -> String {
        let digits = text.lowercased().drop { $0 == "0" }
        return digits.isEmpty ? "0" : String(digits)
    }
}

/// A certificate serial number as the revocation list writes it.
enum HexSerial {
    static func text(_ bytes: some Collection<UInt8>) -> String {
        let hex = bytes.map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
        return RevocationList.normalizedSerial(hex)
    }

    static func digitValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
