// Errors every store may throw, mapped from each engine's own errors.
import Foundation

/// Errors every store may throw. Implementations map engine errors to these.
public enum StoreError: Error, Equatable, Sendable {
    /// A row with the same unique key exists already.
    case conflict(String)
    /// The row to update or delete does not exist.
    case notFound(String)
    /// The database could not be reached or the statement failed for a reason other than the above.
    case unavailable(String)
}

extension StoreError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .conflict(let message): "conflict: \(message)"
        case .notFound(let message): "not found: \(message)"
        case .unavailable(let message): "database unavailable: \(message)"
        }
    }
}
