/// Realm names appear in URLs and issuers, so they are restricted to a URL-safe, case-stable alphabet.
enum RealmName {
    static func isValid(_ name: String) -> Bool {
        guard (1...64).contains(name.utf8.count), let first = name.utf8.first,
            isLowerAlphanumeric(first)
        else { return false }
        return name.utf8.allSatisfy { isLowerAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
    }

    private static func isLowerAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
