// Translating SQLite and PostgreSQL errors into the store errors stores let out.
import PostgresNIO
import SQLiteNIO

/// Translates engine errors into `StoreError`, the only error type stores let out.
enum StoreErrorMapping {
    enum Kind {
        case uniqueViolation
        case foreignKeyViolation
        case other
    }

    /// Runs a store operation. A unique violation becomes `.conflict(conflictMessage)`, a foreign-key
    /// violation `.notFound(missingParentMessage)`, anything else `.unavailable`. `StoreError`s and
    /// cancellation pass through unchanged.
    static func mapping<R>(
        _ operation: String,
        conflict conflictMessage: @autoclosure () -> String? = nil,
        missingParent missingParentMessage: @autoclosure () -> String? = nil,
        _ body: () async throws -> R
    ) async throws -> R {
        do {
            return try await body()
        } catch let error as StoreError {
            throw error
        } catch let error as CancellationError {
            throw error
        } catch {
            switch kind(of: error) {
            case .uniqueViolation:
                if let message = conflictMessage() { throw StoreError.conflict(message) }
            case .foreignKeyViolation:
                if let message = missingParentMessage() { throw StoreError.notFound(message) }
            case .other:
                break
            }
            throw StoreError.unavailable("\(operation) failed: \(describe(error))")
        }
    }

    static func kind(of error: any Error) -> Kind {
        if let error = error as? SQLiteStatementError {
            return error.isUniqueViolation ? .uniqueViolation : error.isForeignKeyViolation ? .foreignKeyViolation : .other
        }
        if let error = error as? SQLiteError {
            switch error.reason {
            case .constraintUniqueFailed, .constraintPrimaryKeyFailed: return .uniqueViolation
            case .constraintForeignKeyFailed: return .foreignKeyViolation
            default: return .other
            }
        }
        if let error = error as? PSQLError, error.code == .server {
            switch error.serverInfo?[.sqlState] {
            case "23505": return .uniqueViolation
            case "23503": return .foreignKeyViolation
            default: return .other
            }
        }
        return .other
    }

    /// A one-line description for logs. PSQLError's own description hides the server's message on
    /// purpose (it may contain values); the SQLSTATE and the message text are safe and useful here.
    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if error.code == .server, let info = error.serverInfo {
                return "PostgreSQL \(info[.sqlState] ?? "?"): \(info[.message] ?? "")"
            }
            return "PostgreSQL client error \(error.code)"
        }
        if let error = error as? SQLiteError {
            return "SQLite: \(error.description)"
        }
        if let error = error as? SQLiteStatementError {
            return "SQLite: \(error.description)"
        }
        return String(describing: error)
    }
}
