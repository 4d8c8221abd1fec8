// The `path` of a SCIM PATCH operation (RFC 7644 §3.5.2): which attribute, which of its values, which sub-attribute.

/// `PATH = attrPath / valuePath [subAttr]` (RFC 7644 §3.5.2, Figure 7): `name.familyName`, `members[value eq "2819c223…"]`,
/// `emails[type eq "work"].value`, `urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager`.
public struct SCIMPatchPath: Sendable, Equatable, CustomStringConvertible {
    /// The attribute, with its schema URN when one was written; it carries a sub-attribute only without a value filter
    /// (`name.givenName`).
    public var attribute: SCIMAttributePath
    /// The `[...]` part: which values of a multi-valued attribute the operation applies to.
    public var valueFilter: SCIMFilter?
    /// The sub-attribute after `].`: `value` in `emails[type eq "work"].value`.
    public var subAttribute: String?

    public init(attribute: SCIMAttributePath, valueFilter: SCIMFilter? = nil, subAttribute: String? = nil) {
        (self.attribute, self.valueFilter, self.subAttribute) = (attribute, valueFilter, subAttribute)
    }

    /// Reads a path. Every refusal, in the value filter too, is an `invalidPath` error naming the problem and its byte
    /// offset; the value filter is held to `limits` as a filter is (its brackets are one level of nesting).
    public static func parse(_ text: String, limits: SCIMFilterLimits = .default) throws(SCIMFilterError) -> SCIMPatchPath {
        var parser = try SCIMFilterParser(text, limits: limits, kind: .invalidPath)
        return try parser.patchPath()
    }

    /// The canonical text, which parses back to an equal path.
    public var description: String {
        var text = attribute.description
        if let valueFilter { text += "[\(valueFilter)]" }
        if let subAttribute { text += "." + subAttribute }
        return text
    }

    /// Names compare without regard to ASCII case, the sub-attribute after `].` too.
    public static func == (left: Self, right: Self) -> Bool {
        left.attribute == right.attribute && left.valueFilter == right.valueFilter && SCIMName.equal(left.subAttribute, right.subAttribute)
    }
}
