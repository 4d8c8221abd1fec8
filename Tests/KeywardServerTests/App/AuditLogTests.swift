// Tests: concurrent audit events all reach the table once, and a failing event does not take its group with it.
import Foundation
import KeywardJOSE
import Logging
import Synchronization
import XCTest

@testable import KeywardServer

final class AuditLogTests: XCTestCase {
    /// Many requests recording at once: every event reaches the table, none twice.
    func testConcurrentEventsAllReachTheTable() async throws {
        try await TestServer.forEachEngine { server, _ in
            let audit = server.runtime.audit
            let count = 300
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<count {
                    group.addTask {
                        await audit.record(.challengeCreated, realm: "demo", userId: "group-commit", details: ["index": String(index)])
                    }
                }
            }
            let events = try await audit.events(realm: "demo", userId: "group-commit", limit: 1000)
            let indexes = events.compactMap { event -> Int? in
                let details = try? StrictJSON.parseObject(Array(event.detailsJSON.utf8))
                return details?["index"]?.stringValue.flatMap(Int.init)
            }
            XCTAssertEqual(indexes.sorted(), Array(0..<count))
        }
    }

    /// A group whose insert fails is retried event by event, so only the bad event is lost.
    func testAFailingEventDoesNotTakeItsGroupWithIt() async throws {
        try await TestServer.forEachEngine { server, _ in
            let store = RefusingAuditStore(wrapped: SQLAuditStore(database: server.runtime.database), refusedRealm: "refused")
            let audit = AuditLog(store: store, clock: server.clock, logger: Logger(label: "audit-test"))
            // A first event whose write is held, so the next ones queue up and are written as one group.
            async let first: Void = audit.record(.challengeCreated, realm: "demo", userId: "retry", details: ["index": "first"])
            while !store.calls.withLock({ !$0.isEmpty }) { await Task.yield() }
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<60 {
                    group.addTask {
                        await audit.record(.challengeCreated, realm: index == 7 ? "refused" : "demo", userId: "retry", details: ["index": String(index)])
                    }
                }
                while audit.queuedEvents < 60 { await Task.yield() }
                store.release()
            }
            await first
            XCTAssertTrue(store.calls.withLock { $0.contains { $0 > 1 } }, "the events were grouped: \(store.calls.withLock { $0 })")
            let stored = try await audit.events(realm: "demo", userId: "retry", limit: 100)
            XCTAssertEqual(stored.count, 60, "the first event and the 59 good ones")
        }
    }
}

/// The real SQL store, refusing every insert that holds an event of one realm (as a constraint would), and
/// holding its first insert until released.
private final class RefusingAuditStore: AuditStore {
    struct Refused: Error {}
    let wrapped: SQLAuditStore
    let refusedRealm: String
    /// The number of events of each insert, in order.
    let calls = Mutex<[Int]>([])
    private let released = Mutex(false)

    init(wrapped: SQLAuditStore, refusedRealm: String) {
        self.wrapped = wrapped
        self.refusedRealm = refusedRealm
    }

    func release() { released.withLock { $0 = true } }

    func append(_ events: [AuditEvent]) async throws {
        let isFirst = calls.withLock { calls in
            calls.append(events.count)
            return calls.count == 1
        }
        if isFirst { while !released.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) } }
        if events.contains(where: { $0.realm == refusedRealm }) { throw Refused() }
        try await wrapped.append(events)
    }

    func events(realm: String, query: AuditQuery) async throws -> [AuditEvent] {
        try await wrapped.events(realm: realm, query: query)
    }

    func deleteEvents(before cutoff: Date) async throws -> Int {
        try await wrapped.deleteEvents(before: cutoff)
    }
}
