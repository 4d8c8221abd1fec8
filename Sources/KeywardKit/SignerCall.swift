// One request to the host app's token signer, made safe to await: whatever the signer does with its handler
// (calls it twice, calls it before `sign` returns, never calls it), the waiting caller resumes exactly once.
import Synchronization

final class SignerCall: Sendable {
    private enum State {
        case pending(CheckedContinuation<String, any Error>?)
        case finished(Result<String, any Error>)
    }

    private let state = Mutex<State>(.pending(nil))

    /// Asks a callback signer; `unsignedToken` is deprecated and ignored by contract, so it gets "".
    static func asking(_ signer: any TokenSigner) -> SignerCall {
        let call = SignerCall()
        signer.sign("", resultHandler: { call.finish($0) })
        return call
    }

    /// The first result wins; later ones (a handler called twice, a timeout after the answer) are dropped.
    func finish(_ result: Result<String, any Error>) {
        let waiter: CheckedContinuation<String, any Error>? = state.withLock { state in
            guard case .pending(let waiter) = state else { return nil }
            state = .finished(result)
            return waiter
        }
        waiter?.resume(with: result)
    }

    /// The signer's result; `KeywardKitError.signerTimedOut` when none came within `timeout`, `CancellationError`
    /// as soon as the waiting task is cancelled.
    func value(timeout: Duration) async throws -> String {
        let timer = Task { [self] in
            try await Task.sleep(for: timeout)
            finish(.failure(KeywardKitError.signerTimedOut(after: timeout)))
        }
        defer { timer.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let finished: Result<String, any Error>? = state.withLock { state in
                    switch state {
                    case .pending:
                        state = .pending(continuation)
                        return nil
                    case .finished(let result):
                        return result
                    }
                }
                if let finished { continuation.resume(with: finished) }
            }
        } onCancel: {
            finish(.failure(CancellationError()))
        }
    }
}
