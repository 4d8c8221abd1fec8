// How timestamps are stored on both engines: integer epoch milliseconds.
import Foundation

/// Timestamps are stored as integer epoch milliseconds (BIGINT) on both engines: it sidesteps the
/// engines' different date types, and compares and indexes as plain integers.
/// Sub-millisecond precision is dropped by rounding to the nearest millisecond: unlike flooring, a date read
/// back from storage (`ms / 1000` is rarely exact in binary) converts to the same milliseconds again.
enum StorageTime {
    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// `date` as a read from storage gives it back: an answer built from the value it just wrote says what later
    /// reads will say (a time 0.4 ms before a whole second is stored in the next one).
    static func asStored(_ date: Date) -> Date {
        Self.date(milliseconds: milliseconds(date))
    }
}
