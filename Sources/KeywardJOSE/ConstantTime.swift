// The one constant-time comparison of secrets in Keyward.

/// The one comparison of secrets in Keyward: client secrets, CSRF tokens, watch secrets, enrollment nonces, MACs,
/// verification codes, DPoP `ath` and nonces. Its time depends on the lengths only, never on where the values first
/// differ, so an attacker timing answers learns nothing of a secret byte by byte. Inlinable, so callers in other
/// modules get a loop specialised to their types.
public enum ConstantTime {
    /// True when `lhs` and `rhs` hold the same bytes. Values of different lengths are unequal at once: every caller
    /// compares values whose length is public (a hash, a MAC, a fixed-size token).
    @inlinable
    public static func equal(_ lhs: some Collection<UInt8>, _ rhs: some Collection<UInt8>) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for (left, right) in zip(lhs, rhs) { difference |= left ^ right }
        return difference == 0
    }

    /// The same for text, compared as its UTF-8 bytes.
    @inlinable
    public static func equal(_ lhs: String, _ rhs: String) -> Bool {
        equal(lhs.utf8, rhs.utf8)
    }
}
