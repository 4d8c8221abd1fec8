// Runs an async function to its end from libFuzzer's synchronous callback.
import Dispatch
import Synchronization

/// The DPoP verifier is async only for its replay cache; with a cache that never suspends, `Task.immediate` runs
/// the whole call on this thread before returning, and the semaphore is already signalled. Should anything
/// suspend after all, the wait covers it.
public func runSynchronously<T: Sendable>(_ body: sending @escaping () async -> T) -> T {
    let result = Mutex<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task.immediate {
        let value = await body()
        result.withLock { $0 = value }
        done.signal()
    }
    done.wait()
    return result.withLock { $0! }
}
