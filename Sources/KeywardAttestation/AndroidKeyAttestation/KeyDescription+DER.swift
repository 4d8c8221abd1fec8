// Reading the Android Key Attestation extension from strict DER, each refusal naming its field.
import SwiftASN1

extension KeyDescription {
    /// Real extensions are 250 to 600 bytes; anything near this is not a KeyDescription.
    public static let maximumEncodedSize = 16 * 1024

    /// Reads the DER of the extension value. Strict DER (minimal lengths and integers, BOOLEAN as 00/FF), eight
    /// fields, authorization-list tags ascending and unique; swift-asn1 bounds the nesting (50 levels), and every
    /// allocation is bounded by the input's length. Anything else is `MALFORMED`.
    public init(derEncoded bytes: some Collection<UInt8>) throws(AttestationFailure) {
        guard bytes.count <= Self.maximumEncodedSize else {
            throw AttestationFailure(.malformed, "the KeyDescription is \(bytes.count) bytes, more than \(Self.maximumEncodedSize)")
        }
        let root: ASN1Node
        do {
            root = try DER.parse(Array(bytes))
        } catch {
            throw AttestationFailure(.malformed, "the KeyDescription is not DER: \(error)")
        }
        self = try KeyDescriptionReader.keyDescription(root)
    }
}

/// The ASN.1 schema of Android's attestation extension, read node by node so that each refusal names its field.
enum KeyDescriptionReader {
    static func keyDescription(_ root: ASN1Node) throws(AttestationFailure) -> KeyDescription {
        var fields = try Fields(root, identifier: .sequence, name: "KeyDescription")
        let description = KeyDescription(
            attestationVersion: try integer(fields.next("attestationVersion"), "attestationVersion"),
            attestationSecurityLevel: try securityLevel(fields.next("attestationSecurityLevel"), "attestationSecurityLevel"),
            keymasterVersion: try integer(fields.next("keymasterVersion"), "keymasterVersion"),
            keymasterSecurityLevel: try securityLevel(fields.next("keymasterSecurityLevel"), "keymasterSecurityLevel"),
            attestationChallenge: try octets(fields.next("attestationChallenge"), "attestationChallenge"),
            uniqueId: try octets(fields.next("uniqueId"), "uniqueId"),
            softwareEnforced: try authorizationList(fields.next("softwareEnforced"), "softwareEnforced"),
            hardwareEnforced: try authorizationList(fields.next("hardwareEnforced"), "hardwareEnforced")
        )
        try fields.end()
        return description
    }

    static func authorizationList(_ node: ASN1Node, _ name: String) throws(AttestationFailure) -> AuthorizationList {
        var fields = try Fields(node, identifier: .sequence, name: name)
        var list = AuthorizationList()
        var previousTag: UInt?
        while let tagged = fields.next() {
            let tag = tagged.identifier.tagNumber
            let field = "\(name) [\(tag)]"
            guard tagged.identifier.tagClass == .contextSpecific else {
                throw malformed("\(name) holds a \(tagged.identifier) where only context-specific tags belong")
            }
            // The schema writes tags in ascending order; a repeated or reordered tag could make two readers see
            // two different values for one property.
            if let previousTag, tag <= previousTag {
                throw malformed("\(name): tag [\(tag)] follows [\(previousTag)]; tags must be ascending and unique")
            }
            previousTag = tag
            let value = try explicitContent(tagged, field)
            try read(tag: tag, value, field, into: &list)
        }
        return list
    }

    private static func read(tag: UInt, _ value: ASN1Node, _ field: String, into list: inout AuthorizationList) throws(AttestationFailure) {
        switch tag {
        case 1: list.purposes = try integerSet(value, field).map(KeyPurpose.init(rawValue:))
        case 2: list.algorithm = KeyAlgorithm(rawValue: try integer(value, field))
        case 3: list.keySize = try integer(value, field)
        case 4: list.blockModes = try integerSet(value, field).map(KeyBlockMode.init(rawValue:))
        case 5: list.digests = try integerSet(value, field).map(KeyDigest.init(rawValue:))
        case 6: list.paddings = try integerSet(value, field).map(KeyPadding.init(rawValue:))
        case 7: list.callerNonce = try null(value, field)
        case 8: list.minMacLength = try integer(value, field)
        case 10: list.ecCurve = ECCurve(rawValue: try integer(value, field))
        case 200: list.rsaPublicExponent = try integer(value, field)
        case 203: list.mgfDigests = try integerSet(value, field).map(KeyDigest.init(rawValue:))
        case 303: list.rollbackResistance = try null(value, field)
        case 305: list.earlyBootOnly = try null(value, field)
        case 400: list.activeDateTime = try integer(value, field)
        case 401: list.originationExpireDateTime = try integer(value, field)
        case 402: list.usageExpireDateTime = try integer(value, field)
        case 405: list.usageCountLimit = try integer(value, field)
        case 503: list.noAuthRequired = try null(value, field)
        case 504: list.userAuthType = try integer(value, field)
        case 505: list.authTimeout = try integer(value, field)
        case 506: list.allowWhileOnBody = try null(value, field)
        case 507: list.trustedUserPresenceRequired = try null(value, field)
        case 508: list.trustedConfirmationRequired = try null(value, field)
        case 509: list.unlockedDeviceRequired = try null(value, field)
        case 600: list.allApplications = try null(value, field)
        case 601: list.applicationId = try octets(value, field)
        case 701: list.creationDateTime = try integer(value, field)
        case 702: list.origin = KeyOrigin(rawValue: try integer(value, field))
        case 703: list.rollbackResistant = try null(value, field)
        case 704: list.rootOfTrust = try rootOfTrust(value, field)
        case 705: list.osVersion = try integer(value, field)
        case 706: list.osPatchLevel = try integer(value, field)
        case 709: list.attestationApplicationId = try attestationApplicationId(octets(value, field), field)
        case 710: list.attestationIdBrand = try octets(value, field)
        case 711: list.attestationIdDevice = try octets(value, field)
        case 712: list.attestationIdProduct = try octets(value, field)
        case 713: list.attestationIdSerial = try octets(value, field)
        case 714: list.attestationIdImei = try octets(value, field)
        case 715: list.attestationIdMeid = try octets(value, field)
        case 716: list.attestationIdManufacturer = try octets(value, field)
        case 717: list.attestationIdModel = try octets(value, field)
        case 718: list.vendorPatchLevel = try integer(value, field)
        case 719: list.bootPatchLevel = try integer(value, field)
        case 720: list.deviceUniqueAttestation = try null(value, field)
        case 723: list.attestationIdSecondImei = try octets(value, field)
        case 724: list.moduleHash = try octets(value, field)
        default:
            // Tag numbers are below 2^28 in KeyMint; a larger one is not a tag but damage.
            guard let known = Int(exactly: tag), known < 1 << 28 else { throw malformed("\(field) is not a KeyMint tag") }
            list.unknownTags.append(known)
        }
    }

    static func rootOfTrust(_ node: ASN1Node, _ name: String) throws(AttestationFailure) -> RootOfTrust {
        var fields = try Fields(node, identifier: .sequence, name: name)
        let key = try octets(fields.next("verifiedBootKey"), "\(name) verifiedBootKey")
        let locked = try boolean(fields.next("deviceLocked"), "\(name) deviceLocked")
        let stateNode = try fields.next("verifiedBootState")
        let stateValue = try enumerated(stateNode, "\(name) verifiedBootState")
        guard let state = VerifiedBootState(rawValue: stateValue) else {
            throw malformed("\(name) verifiedBootState \(stateValue) is not Verified, SelfSigned, Unverified or Failed")
        }
        // verifiedBootHash arrived with attestation version 3; earlier devices end the sequence here.
        let hash = try fields.next().map { node throws(AttestationFailure) in try octets(node, "\(name) verifiedBootHash") }
        try fields.end()
        return RootOfTrust(verifiedBootKey: key, deviceLocked: locked, verifiedBootState: state, verifiedBootHash: hash)
    }

    /// The OCTET STRING of tag 709 holds DER of its own: SEQUENCE { SET OF package info, SET OF digest }.
    static func attestationApplicationId(_ bytes: [UInt8], _ name: String) throws(AttestationFailure) -> AttestationApplicationId {
        let root: ASN1Node
        do {
            root = try DER.parse(bytes)
        } catch {
            throw malformed("\(name) attestationApplicationId is not DER: \(error)")
        }
        var fields = try Fields(root, identifier: .sequence, name: "\(name) attestationApplicationId")
        var packageInfos = try Fields(fields.next("package infos"), identifier: .set, name: "\(name) package infos")
        var packages: [AttestationApplicationId.Package] = []
        while let info = packageInfos.next() {
            var parts = try Fields(info, identifier: .sequence, name: "\(name) package info")
            let nameBytes = try octets(parts.next("package name"), "\(name) package name")
            let version = try integer(parts.next("package version"), "\(name) package version")
            try parts.end()
            guard let packageName = String(validating: nameBytes, as: UTF8.self) else {
                throw malformed("\(name): a package name is not UTF-8")
            }
            packages.append(AttestationApplicationId.Package(name: packageName, version: version))
        }
        var digestSet = try Fields(fields.next("signature digests"), identifier: .set, name: "\(name) signature digests")
        var digests: [[UInt8]] = []
        while let digest = digestSet.next() {
            digests.append(try octets(digest, "\(name) signature digest"))
        }
        try fields.end()
        return AttestationApplicationId(packages: packages, signatureDigests: digests)
    }

    // MARK: Primitive fields

    private static func integer(_ node: ASN1Node, _ name: String) throws(AttestationFailure) -> Int {
        do {
            return try Int(derEncoded: node)
        } catch {
            throw malformed("\(name) is not an INTEGER that fits 64 bits: \(error)")
        }
    }

    private static func enumerated(_ node: ASN1Node, _ name: String) throws(AttestationFailure) -> Int {
        do {
            return try Int(derEncoded: node, withIdentifier: .enumerated)
        } catch {
            throw malformed("\(name) is not an ENUMERATED: \(error)")
        }
    }

    private static func securityLevel(_ node: ASN1Node, _ name: String) throws(AttestationFailure) -> SecurityLevel {
        let value = try enumerated(node, name)
        guard let level = SecurityLevel(rawValue: value) else {
            throw malformed("\(name) \(value) is not Software, TrustedEnvironment or StrongBox")
        }
        return level
    }

    private static func octets(_ node: ASN1Node, _ name: String) throws(AttestationFailure) -> [UInt8] {
        do {
            return Array(try ASN1OctetString(derEncoded: node).bytes)
        } catch {
            throw malformed("\(name) is not an OCTET STRING: \(error)")
        }
    }

    private static func boolean(_ node: ASN1Node, _ name: String) throws(AttestationFailure) -> Bool {
        do {
            return try Bool(derEncoded: node)
        } catch {
            throw malformed("\(name) is not a DER BOOLEAN (00 or FF): \(error)")
        }
    }

    /// A NULL marks a flag that is set.
    private static func null(_ node: ASN1Node, _ name: String) throws(AttestationFailure) -> Bool {
        do {
            _ = try ASN1Null(derEncoded: node)
            return true
        } catch {
            throw malformed("\(name) is not a NULL: \(error)")
        }
    }

    /// SET OF INTEGER. The DER sort order of the elements is not required: the values are a set either way, and
    /// Keystore versions differ in how they order them.
    private static func integerSet(_ node: ASN1Node, _ name: String) throws(AttestationFailure) -> [Int] {
        var elements = try Fields(node, identifier: .set, name: name)
        var values: [Int] = []
        while let element = elements.next() {
            values.append(try integer(element, "\(name) element"))
        }
        return values
    }

    /// The one node inside an EXPLICIT tag.
    private static func explicitContent(_ node: ASN1Node, _ name: String) throws(AttestationFailure) -> ASN1Node {
        var inner = try Fields(node, identifier: node.identifier, name: name)
        let content = try inner.next("its value")
        try inner.end()
        return content
    }

    static func malformed(_ detail: String) -> AttestationFailure {
        AttestationFailure(.malformed, "KeyDescription: \(detail)")
    }

    /// The children of a constructed node, read in order, each missing or extra one a refusal naming the parent.
    struct Fields {
        private var iterator: ASN1NodeCollection.Iterator
        private let name: String

        init(_ node: ASN1Node, identifier: ASN1Identifier, name: String) throws(AttestationFailure) {
            guard node.identifier == identifier, case .constructed(let children) = node.content else {
                throw malformed("\(name) is a \(node.identifier), not a constructed \(identifier)")
            }
            self.iterator = children.makeIterator()
            self.name = name
        }

        mutating func next() -> ASN1Node? {
            iterator.next()
        }

        mutating func next(_ field: String) throws(AttestationFailure) -> ASN1Node {
            guard let node = iterator.next() else { throw malformed("\(name) ends before \(field)") }
            return node
        }

        mutating func end() throws(AttestationFailure) {
            guard iterator.next() == nil else { throw malformed("\(name) has more fields than its schema") }
        }
    }
}
