// Tests: a broker hand-off is taken once, by the key it names, with its nonce, in time; everything else is refused alike.
import Foundation
import KeywardJOSE
@testable import KeywardServer
import XCTest

final class HandoffTests: XCTestCase {
    func testAHandoffIsTakenOnceByItsKeyWithItsNonce() async throws {
        try await TestServer.forEachEngine { server, _ in
            try await server.registerBrokerApp()
            let handoffs = server.runtime.broker.handoffs
            let code = try await handoffs.put(realm: "demo", clientId: "broker-app", nonce: "nonce-1", jkt: "key-1", kind: .delegation, blob: "the-delegation")
            XCTAssertEqual(try Base64URL.decode(code).count, 16, "128 random bits")

            let taken = try await handoffs.take(realm: "demo", code: code, nonce: "nonce-1", jkt: "key-1", address: "198.51.100.7")
            XCTAssertEqual(taken.kind, .delegation)
            XCTAssertEqual(taken.blob, "the-delegation")
            XCTAssertEqual(taken.clientId, "broker-app")
            try await Self.assertRefused(handoffs, code: code, nonce: "nonce-1", jkt: "key-1", "taken already")
            let other = try await handoffs.put(realm: "demo", clientId: "broker-app", nonce: "n", jkt: "key-1", kind: .delegation, blob: "d")
            try await Self.assertRefused(handoffs, realm: "master", code: other, nonce: "n", jkt: "key-1", "a code of another realm")
        }
    }

    func testAnotherKeyGetsNothingAndLeavesTheHandoffForItsOwner() async throws {
        try await TestServer.forEachEngine { server, _ in
            try await server.registerBrokerApp()
            let handoffs = server.runtime.broker.handoffs
            let code = try await handoffs.put(realm: "demo", clientId: "broker-app", nonce: "n", jkt: "owner", kind: .delegation, blob: "d")
            try await Self.assertRefused(handoffs, code: code, nonce: "n", jkt: "thief", "another key")
            let taken = try await handoffs.take(realm: "demo", code: code, nonce: "n", jkt: "owner", address: "198.51.100.7")
            XCTAssertEqual(taken.blob, "d", "a take by another key does not burn the code")
        }
    }

    func testAWrongNonceBurnsTheCodeAndALateTakeFindsNothing() async throws {
        try await TestServer.forEachEngine { server, _ in
            try await server.registerBrokerApp()
            let handoffs = server.runtime.broker.handoffs
            let code = try await handoffs.put(realm: "demo", clientId: "broker-app", nonce: "right", jkt: "k", kind: .delegation, blob: "d")
            try await Self.assertRefused(handoffs, code: code, nonce: "wrong", jkt: "k", "a wrong nonce")
            try await Self.assertRefused(handoffs, code: code, nonce: "right", jkt: "k", "the wrong nonce burnt the code")

            let late = try await handoffs.put(realm: "demo", clientId: "broker-app", nonce: "n", jkt: "k", kind: .delegation, blob: "d")
            server.clock.advance(by: HandoffService.defaultLifetime + 1)
            try await Self.assertRefused(handoffs, code: late, nonce: "n", jkt: "k", "expired")

            let capped = try await handoffs.put(realm: "demo", clientId: "broker-app", nonce: "n", jkt: "k", kind: .blob, blob: "b", lifetime: 3600)
            server.clock.advance(by: HandoffService.maxLifetime + 1)
            try await Self.assertRefused(handoffs, code: capped, nonce: "n", jkt: "k", "a hand-off lives \(HandoffService.maxLifetime) s at most")

            let events = try await server.runtime.audit.events(realm: "demo", userId: nil, limit: 20)
            XCTAssertTrue(events.contains { $0.type == .handoffRefused && $0.detailsJSON.contains("nonce_mismatch") }, "\(events.map(\.detailsJSON))")
        }
    }

    func testTwentyConcurrentTakersWithTheRightKeyGetItOnce() async throws {
        try await TestServer.forEachEngine { server, _ in
            try await server.registerBrokerApp()
            let handoffs = server.runtime.broker.handoffs
            let code = try await handoffs.put(realm: "demo", clientId: "broker-app", nonce: "n", jkt: "k", kind: .delegation, blob: "once")
            let outcomes = try await withThrowingTaskGroup(of: String?.self) { group in
                for racer in 0..<20 {
                    group.addTask {
                        do {
                            return try await handoffs.take(realm: "demo", code: code, nonce: "n", jkt: "k", address: "198.51.100.\(racer)").blob
                        } catch let error as APIError where error.code == .handoffInvalid {
                            return nil
                        }
                    }
                }
                return try await group.reduce(into: [String?]()) { $0.append($1) }
            }
            XCTAssertEqual(outcomes.compactMap { $0 }, ["once"], "exactly one racer gets it")
        }
    }

    func testAClientsWaitingHandoffsAreBoundedAndTheSweepRemovesExpiredOnes() async throws {
        try await TestServer.forEachEngine { server, _ in
            try await server.registerBrokerApp()
            var handoffs = server.runtime.broker.handoffs
            handoffs.maxLive = 3
            for _ in 0..<3 {
                _ = try await handoffs.put(realm: "demo", clientId: "broker-app", nonce: "n", jkt: "k", kind: .delegation, blob: "d")
            }
            do {
                _ = try await handoffs.put(realm: "demo", clientId: "broker-app", nonce: "n", jkt: "k", kind: .delegation, blob: "d")
                XCTFail("a fourth waiting hand-off was stored")
            } catch let error as APIError {
                XCTAssertEqual(error.code, .handoffLimit)
                XCTAssertEqual(error.status, .tooManyRequests)
            }
            server.clock.advance(by: HandoffService.defaultLifetime + 1)
            _ = try await handoffs.put(realm: "demo", clientId: "broker-app", nonce: "n", jkt: "k", kind: .delegation, blob: "d")
            let swept = try await SQLHandoffStore(database: server.runtime.database).deleteExpired(now: server.clock.now())
            XCTAssertEqual(swept, 3)

            // A deleted client's hand-offs go with it.
            try await server.runtime.oauth.clients.deleteClient(realm: "demo", clientId: "broker-app")
            let left = try await SQLHandoffStore(database: server.runtime.database).deleteExpired(now: server.clock.now().addingTimeInterval(3600))
            XCTAssertEqual(left, 0)
        }
    }

    func testAnAddressWhoseTakesKeepFailingIsRefusedForTheWindow() async throws {
        try await TestServer.forEachEngine(engines: [.sqlite]) { server, _ in
            let handoffs = server.runtime.broker.handoffs
            for _ in 0..<handoffs.failures.limit {
                try await Self.assertRefused(handoffs, code: "guess", nonce: "n", jkt: "k", address: "198.51.100.7", "a guess")
            }
            do {
                _ = try await handoffs.take(realm: "demo", code: "guess", nonce: "n", jkt: "k", address: "198.51.100.7")
                XCTFail("the address was not limited")
            } catch let error as APIError {
                XCTAssertEqual(error.code, .tooManyAttempts)
                XCTAssertEqual(error.status, .tooManyRequests)
            }
            try await Self.assertRefused(handoffs, code: "guess", nonce: "n", jkt: "k", address: "198.51.100.8", "another address is not limited")
            server.clock.advance(by: handoffs.failures.window)
            try await Self.assertRefused(handoffs, code: "guess", nonce: "n", jkt: "k", address: "198.51.100.7", "the window ended")
        }
    }

    func testABrokerAppNeedsAReturnAddress() async throws {
        try await TestServer.forEachEngine(engines: [.sqlite]) { server, _ in
            do {
                _ = try await server.runtime.oauth.clients.createPublicClient(realm: "demo", clientId: "no-return", redirects: ClientRedirects(broker: true))
                XCTFail("a broker app without a return address was created")
            } catch let error as ClientError {
                XCTAssertEqual(error, .brokerWithoutReturnURL)
            }
        }
    }

    private static func assertRefused(
        _ handoffs: HandoffService, realm: String = "demo", code: String, nonce: String, jkt: String, address: String = "198.51.100.7", _ why: String,
        line: UInt = #line
    ) async throws {
        do {
            let taken = try await handoffs.take(realm: realm, code: code, nonce: nonce, jkt: jkt, address: address)
            XCTFail("\(why): taken \(taken.blob)", line: line)
        } catch let error as APIError {
            XCTAssertEqual(error.code, .handoffInvalid, why, line: line)
            XCTAssertEqual(error.status, .badRequest, why, line: line)
        }
    }
}

extension TestServer {
    func registerBrokerApp() async throws {
        let redirects = try ClientRedirects(
            redirectURIs: ["https://app.example.com/broker"], postLogoutRedirectURIs: [], firstParty: false, requirePAR: false, broker: true
        )
        let client = try await runtime.oauth.clients.createPublicClient(realm: "demo", clientId: "broker-app", redirects: redirects)
        XCTAssertTrue(client.broker)
        let stored = try await runtime.oauth.clients.client(realm: "demo", clientId: "broker-app")
        XCTAssertEqual(stored?.broker, true)
    }
}
