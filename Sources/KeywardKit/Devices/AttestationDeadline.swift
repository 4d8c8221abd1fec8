// Asking the attester for an attestation under a deadline, so a silent attester cannot hold up registration.
import KeywardJOSE

/// Asks an attester for an attestation under a deadline. The attester runs in a task of its own, so one that never
/// answers, or ignores cancellation, cannot hold the registration: the caller goes on when the deadline passes.
enum AttestationDeadline {
    static func attestation(
        from attester: any Attester, bindingNonce: [UInt8], timeout: Duration
    ) async throws -> (member: JSONObject?, outcome: AttestationOutcome) {
        let (answers, continuation) = AsyncStream<Result<JSONObject?, any Error>?>.makeStream()
        let work = Task {
            do {
                continuation.yield(.success(try await attester.attestation(bindingNonce: bindingNonce)))
            } catch {
                continuation.yield(.failure(error))
            }
        }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            continuation.yield(nil)
        }
        defer {
            work.cancel()
            timer.cancel()
            continuation.finish()
        }
        var first: Result<JSONObject?, any Error>??
        for await answer in answers {
            first = answer
            break
        }
        try Task.checkCancellation()
        switch first {
        case .some(.some(.success(let member?))):
            return (member, .sent(type: member["type"]?.stringValue ?? "unknown"))
        case .some(.some(.success(nil))):
            return (nil, .none)
        case .some(.some(.failure(let error))):
            return (nil, .failed(String(describing: error)))
        case .some(.none), .none:
            return (nil, .timedOut(after: timeout))
        }
    }
}
