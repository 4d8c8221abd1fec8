// Bytes written as padded standard base64 in the JSON attestation reports.
import Foundation

/// Bytes in a JSON report: standard base64 with padding, as Android's tools print attestation fields.
struct Base64Text: Encodable {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Data(bytes).base64EncodedString())
    }
}
