// Tests: the Android KeyDescription reader matches Google's JSON field by field and refuses damaged encodings.
import Foundation
import KeywardAttestation
import XCTest

/// The KeyDescription reader on every real chain, compared field by field with the json Google's library wrote
/// beside it, and on damaged and hand-made encodings.
final class AndroidKeyDescriptionTests: XCTestCase {
    /// Fields of the json files that are not fields of the extension, and why they are not compared.
    static let notParsed = [
        // Google's Kotlin library records whether it found the tags in order; this reader refuses a list whose
        // tags are not ascending, so for any list it returns the answer is always true.
        "areTagsOrdered",
    ]

    func testEveryFieldOfEveryRealKeyDescriptionEqualsItsJSON() throws {
        let names = try AndroidVectors.currentChains() + AndroidVectors.bluelineChains()
        var compared = 0
        for name in names {
            let description = try KeyDescription(derEncoded: AndroidVectors.keyDescriptionBytes(name))
            var skipped: [String] = []
            compared += compare(
                expected: try AndroidVectors.expectation(name), parsed: Self.googleShape(description), path: name, skipped: &skipped
            )
            XCTAssert(skipped.allSatisfy { path in Self.notParsed.contains { path.hasSuffix("." + $0) } }, "\(skipped)")
        }
        // 14 chains with 25 to 40 fields each: a walk that compared nothing would prove nothing.
        XCTAssertGreaterThan(compared, 14 * 25)
    }

    /// Walks both trees: every expected leaf equals the parsed one, and nothing was parsed that is not expected.
    /// Returns the number of leaves compared.
    private func compare(expected: Any, parsed: Any?, path: String, skipped: inout [String]) -> Int {
        switch expected {
        case let object as [String: Any]:
            guard let parsedObject = parsed as? [String: Any] else {
                XCTFail("\(path): expected an object, parsed \(String(describing: parsed))")
                return 0
            }
            var count = 0
            for (key, value) in object {
                if Self.notParsed.contains(key) {
                    skipped.append("\(path).\(key)")
                    continue
                }
                count += compare(expected: value, parsed: parsedObject[key], path: "\(path).\(key)", skipped: &skipped)
            }
            for key in parsedObject.keys where object[key] == nil {
                XCTFail("\(path).\(key): parsed \(parsedObject[key]!), absent from the json")
            }
            return count
        case let array as [Any]:
            guard let parsedArray = parsed as? [Any], parsedArray.count == array.count else {
                XCTFail("\(path): expected \(array), parsed \(String(describing: parsed))")
                return 0
            }
            return zip(array, parsedArray).enumerated().reduce(0) { count, element in
                count + compare(expected: element.element.0, parsed: element.element.1, path: "\(path)[\(element.offset)]", skipped: &skipped)
            }
        default:
            XCTAssertEqual(Self.leafText(expected), parsed.map(Self.leafText), path)
            return 1
        }
    }

    private static func leafText(_ value: Any) -> String {
        switch value {
        case let text as String: text
        case let flag as Bool: flag ? "true" : "false"
        default: "\(value)"
        }
    }

    /// The parsed KeyDescription in the shape and notation of Google's json: numbers as decimal text, enumerated
    /// security levels, origin and boot state by name, bytes in base64, device identifiers as text.
    static func googleShape(_ description: KeyDescription) -> [String: Any] {
        [
            "attestationVersion": String(description.attestationVersion),
            "attestationSecurityLevel": description.attestationSecurityLevel.description,
            "keyMintVersion": String(description.keymasterVersion),
            "keyMintSecurityLevel": description.keymasterSecurityLevel.description,
            "attestationChallenge": base64(description.attestationChallenge),
            "uniqueId": base64(description.uniqueId),
            "softwareEnforced": googleShape(description.softwareEnforced),
            "hardwareEnforced": googleShape(description.hardwareEnforced),
        ]
    }

    static func googleShape(_ list: AuthorizationList) -> [String: Any] {
        var shape: [String: Any] = [:]
        func number(_ key: String, _ value: Int?) { if let value { shape[key] = String(value) } }
        func numbers(_ key: String, _ values: [Int]?) { if let values { shape[key] = values.map(String.init) } }
        func flag(_ key: String, _ value: Bool) { if value { shape[key] = true } }
        func text(_ key: String, _ value: [UInt8]?) { if let value { shape[key] = String(decoding: value, as: UTF8.self) } }
        func bytes(_ key: String, _ value: [UInt8]?) { if let value { shape[key] = base64(value) } }

        numbers("purposes", list.purposes?.map(\.rawValue))
        number("algorithms", list.algorithm?.rawValue)
        number("keySize", list.keySize)
        numbers("blockModes", list.blockModes?.map(\.rawValue))
        numbers("digests", list.digests?.map(\.rawValue))
        numbers("paddings", list.paddings?.map(\.rawValue))
        flag("callerNonce", list.callerNonce)
        number("minMacLength", list.minMacLength)
        number("ecCurve", list.ecCurve?.rawValue)
        number("rsaPublicExponent", list.rsaPublicExponent)
        numbers("mgfDigests", list.mgfDigests?.map(\.rawValue))
        flag("rollbackResistance", list.rollbackResistance)
        flag("earlyBootOnly", list.earlyBootOnly)
        number("activeDateTime", list.activeDateTime)
        number("originationExpireDateTime", list.originationExpireDateTime)
        number("usageExpireDateTime", list.usageExpireDateTime)
        number("usageCountLimit", list.usageCountLimit)
        flag("noAuthRequired", list.noAuthRequired)
        number("userAuthType", list.userAuthType)
        number("authTimeout", list.authTimeout)
        flag("allowWhileOnBody", list.allowWhileOnBody)
        flag("trustedUserPresenceRequired", list.trustedUserPresenceRequired)
        flag("trustedConfirmationRequired", list.trustedConfirmationRequired)
        flag("unlockedDeviceRequired", list.unlockedDeviceRequired)
        flag("allApplications", list.allApplications)
        bytes("applicationId", list.applicationId)
        number("creationDateTime", list.creationDateTime)
        if let origin = list.origin { shape["origin"] = origin.description }
        flag("rollbackResistant", list.rollbackResistant)
        if let root = list.rootOfTrust {
            var rootShape: [String: Any] = [
                "verifiedBootKey": base64(root.verifiedBootKey),
                "deviceLocked": root.deviceLocked,
                "verifiedBootState": root.verifiedBootState.description,
            ]
            if let hash = root.verifiedBootHash { rootShape["verifiedBootHash"] = base64(hash) }
            shape["rootOfTrust"] = rootShape
        }
        number("osVersion", list.osVersion)
        number("osPatchLevel", list.osPatchLevel)
        if let identity = list.attestationApplicationId {
            shape["attestationApplicationId"] = [
                "packages": identity.packages.map { ["name": $0.name, "version": String($0.version)] },
                "signatures": identity.signatureDigests.map(base64),
            ]
        }
        text("attestationIdBrand", list.attestationIdBrand)
        text("attestationIdDevice", list.attestationIdDevice)
        text("attestationIdProduct", list.attestationIdProduct)
        text("attestationIdSerial", list.attestationIdSerial)
        text("attestationIdImei", list.attestationIdImei)
        text("attestationIdMeid", list.attestationIdMeid)
        text("attestationIdManufacturer", list.attestationIdManufacturer)
        text("attestationIdModel", list.attestationIdModel)
        number("vendorPatchLevel", list.vendorPatchLevel)
        number("bootPatchLevel", list.bootPatchLevel)
        flag("deviceUniqueAttestation", list.deviceUniqueAttestation)
        text("attestationIdSecondImei", list.attestationIdSecondImei)
        bytes("moduleHash", list.moduleHash)
        if !list.unknownTags.isEmpty { shape["unknownTags"] = list.unknownTags.map(String.init) }
        return shape
    }

    private static func base64(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
    }

    // MARK: Refusals

    /// Both invalid/ vectors: a hardware list whose tags go [2] then [1], and a real device's deviceLocked written
    /// as BOOLEAN 01 (DER allows only 00 and FF).
    func testInvalidVectorsAreMalformed() throws {
        let expectations = [
            "invalid/tags_not_in_ascending_order": "tag [1] follows [2]",
            "invalid/malformed_rot_device_locked": "deviceLocked is not a DER BOOLEAN",
        ]
        XCTAssertEqual(Set(try AndroidVectors.invalidChains()), Set(expectations.keys))
        for (name, detail) in expectations {
            XCTAssertThrowsError(try KeyDescription(derEncoded: AndroidVectors.keyDescriptionBytes(name)), name) { error in
                let failure = error as? AttestationFailure
                XCTAssertEqual(failure?.reason, .malformed, name)
                XCTAssert(failure?.detail.contains(detail) == true, "\(name): \(String(describing: failure))")
            }
        }
    }

    /// Every prefix of every real extension is refused as MALFORMED: a cut DER value never reads as a shorter valid one.
    func testEveryTruncationIsMalformed() throws {
        for name in try AndroidVectors.currentChains() + AndroidVectors.bluelineChains() + AndroidVectors.invalidChains() {
            let bytes = try AndroidVectors.keyDescriptionBytes(name)
            for length in 0..<bytes.count {
                XCTAssertEqual(reason(Array(bytes.prefix(length))), .malformed, "\(name) cut to \(length) bytes")
            }
        }
    }

    /// Every single-bit flip of every real extension either still reads (a flip inside a value: a different
    /// challenge, date or digest) or is refused as MALFORMED; none traps.
    func testEveryBitFlipReadsOrIsMalformed() throws {
        var refused = 0
        var read = 0
        for name in try AndroidVectors.currentChains() + AndroidVectors.bluelineChains() {
            let bytes = try AndroidVectors.keyDescriptionBytes(name)
            for index in bytes.indices {
                for bit in 0..<8 {
                    var flipped = bytes
                    flipped[index] ^= 1 << bit
                    switch reason(flipped) {
                    case nil: read += 1
                    case .malformed: refused += 1
                    case let other?: XCTFail("\(name) byte \(index) bit \(bit): \(other)")
                    }
                }
            }
        }
        XCTAssertGreaterThan(refused, 0)
        XCTAssertGreaterThan(read, 0)
    }

    func testDuplicatedTagIsMalformed() throws {
        let description = try TestDER.children(AndroidVectors.keyDescriptionBytes("caiman/sdk36/SB_EC_RKP"))
        var hardware = try TestDER.children(description[7])
        hardware.insert(hardware[0], at: 1)
        let damaged = TestDER.sequence(Array(description[0..<7]) + [TestDER.sequence(hardware)])
        XCTAssertThrowsError(try KeyDescription(derEncoded: damaged)) { error in
            XCTAssertEqual((error as? AttestationFailure)?.reason, .malformed)
            XCTAssert((error as? AttestationFailure)?.detail.contains("ascending and unique") == true, "\(error)")
        }
    }

    /// A tag this build does not know (new Android releases add some) is recorded, not refused.
    func testUnknownTagIsListedNotRefused() throws {
        let description = try TestDER.children(AndroidVectors.keyDescriptionBytes("caiman/sdk36/SB_EC_RKP"))
        let hardware = try TestDER.children(description[7]) + [TestDER.explicit(800, [0x05, 0x00])]
        let extended = TestDER.sequence(Array(description[0..<7]) + [TestDER.sequence(hardware)])
        let parsed = try KeyDescription(derEncoded: extended)
        XCTAssertEqual(parsed.hardwareEnforced.unknownTags, [800])
        XCTAssertEqual(parsed.hardwareEnforced.rootOfTrust?.verifiedBootState, .verified)
    }

    func testSchemaViolationsAreMalformed() throws {
        let description = try TestDER.children(AndroidVectors.keyDescriptionBytes("caiman/sdk36/SB_EC_RKP"))
        let cases: [String: [UInt8]] = [
            "a ninth field": TestDER.sequence(description + [[0x05, 0x00]]),
            "seven fields": TestDER.sequence(Array(description.prefix(7))),
            "security level 3": TestDER.sequence([description[0], [0x0A, 0x01, 0x03]] + Array(description[2...])),
            "an INTEGER security level": TestDER.sequence([description[0], [0x02, 0x01, 0x01]] + Array(description[2...])),
            "a version wider than 64 bits": TestDER.sequence([TestDER.tlv([0x02], [0x01] + Array(repeating: 0, count: 9))] + Array(description[1...])),
            "a primitive explicit tag": TestDER.sequence(Array(description[0..<7]) + [TestDER.sequence([[0x81, 0x01, 0x02]])]),
            "a universal tag in a list": TestDER.sequence(Array(description[0..<7]) + [TestDER.sequence([[0x02, 0x01, 0x02]])]),
            "two values in one tag": TestDER.sequence(Array(description[0..<7]) + [TestDER.sequence([TestDER.explicit(2, [0x02, 0x01, 0x03, 0x02, 0x01, 0x03])])]),
            "a purpose that is not a SET": TestDER.sequence(Array(description[0..<7]) + [TestDER.sequence([TestDER.explicit(1, [0x02, 0x01, 0x02])])]),
            "a boot state of 4": TestDER.sequence(Array(description[0..<7]) + [TestDER.sequence([TestDER.explicit(704, TestDER.sequence([[0x04, 0x00], [0x01, 0x01, 0xFF], [0x0A, 0x01, 0x04]]))])]),
            "a package name that is not UTF-8": TestDER.sequence(Array(description[0..<6]) + [TestDER.sequence([TestDER.explicit(709, TestDER.tlv([0x04], TestDER.sequence([TestDER.tlv([0x31], TestDER.sequence([[0x04, 0x02, 0xC3, 0x28], [0x02, 0x01, 0x01]])), [0x31, 0x00]])))]), description[7]]),
            "trailing bytes": TestDER.sequence(description) + [0x00],
            "a definite length beyond the input": [0x30, 0x84, 0x7F, 0xFF, 0xFF, 0xFF, 0x02, 0x01, 0x01],
            "60 nested SEQUENCEs": (0..<60).reduce([0x05, 0x00]) { inner, _ in TestDER.sequence([inner]) },
            "more than 16 KiB": TestDER.sequence(description + [TestDER.tlv([0x04], Array(repeating: 0, count: 16 * 1024))]),
            "nothing": [],
        ]
        for (name, bytes) in cases {
            XCTAssertEqual(reason(bytes), .malformed, name)
        }
        // The hand-built encodings start from one that reads.
        XCTAssertNil(reason(TestDER.sequence(description)))
    }

    /// Attestation version 3 (Keymaster 4, blueline): the root of trust already carries verifiedBootHash; older
    /// devices end the sequence before it, which must read too.
    func testRootOfTrustWithoutBootHashReads() throws {
        let description = try TestDER.children(AndroidVectors.keyDescriptionBytes("caiman/sdk36/SB_EC_RKP"))
        let rootOfTrust = TestDER.explicit(704, TestDER.sequence([[0x04, 0x01, 0xAA], [0x01, 0x01, 0x00], [0x0A, 0x01, 0x02]]))
        let parsed = try KeyDescription(derEncoded: TestDER.sequence(Array(description[0..<7]) + [TestDER.sequence([rootOfTrust])]))
        XCTAssertEqual(parsed.hardwareEnforced.rootOfTrust, RootOfTrust(verifiedBootKey: [0xAA], deviceLocked: false, verifiedBootState: .unverified, verifiedBootHash: nil))
    }

    private func reason(_ bytes: [UInt8]) -> AttestationReason? {
        do {
            _ = try KeyDescription(derEncoded: bytes)
            return nil
        } catch {
            return error.reason
        }
    }
}
