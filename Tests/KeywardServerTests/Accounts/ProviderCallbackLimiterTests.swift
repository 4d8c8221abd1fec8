// Tests: refused provider callbacks are limited per client address, in flight included, within bounded memory.
import Foundation
@testable import KeywardServer
import XCTest

/// One client address's refused provider callbacks are bounded (security review L4), and the memory it takes too.
final class ProviderCallbackLimiterTests: XCTestCase {
    let start = Date(timeIntervalSince1970: 1_790_000_000)

    func testAnAddressIsHeldBackAfterItsFailuresUntilTheWindowEnds() {
        let limiter = ProviderCallbackLimiter(limit: 3, window: 600)
        for _ in 0..<3 {
            XCTAssertNil(limiter.admit("198.51.100.1", now: start))
            limiter.finish("198.51.100.1", failed: true, now: start)
        }
        XCTAssertEqual(limiter.admit("198.51.100.1", now: start.addingTimeInterval(10)), 590)
        XCTAssertNil(limiter.admit("198.51.100.2", now: start), "another address is not held back")
        XCTAssertNil(limiter.admit("198.51.100.1", now: start.addingTimeInterval(600)), "the window ended")
        XCTAssertNil(limiter.admit(ClientAddress.unknown, now: start))
        XCTAssertEqual(ProviderCallbackLimiter.counts(.codeExchangeFailed), true)
        XCTAssertEqual(ProviderCallbackLimiter.counts(.providerError), false, "a person cancelling at the provider is no failure")
    }

    func testSprayedAddressesDoNotGrowTheMapPastItsBound() {
        let limiter = ProviderCallbackLimiter(limit: 2, window: 600, maxAddresses: 100)
        for _ in 0..<2 {
            _ = limiter.admit("203.0.113.1", now: start)
            limiter.finish("203.0.113.1", failed: true, now: start)
        }
        for index in 0..<1_000 {
            _ = limiter.admit("2001:db8::\(index)", now: start.addingTimeInterval(1))
            limiter.finish("2001:db8::\(index)", failed: true, now: start.addingTimeInterval(1))
        }
        XCTAssertNil(limiter.admit("203.0.113.1", now: start.addingTimeInterval(2)), "the oldest window made room")
        XCTAssertNil(limiter.admit("2001:db8::999", now: start.addingTimeInterval(2)), "one failure is under the limit")
    }

    /// Callbacks fired at once hold their places while in flight: the limit bounds what is sent, not only what failed.
    func testCallbacksInFlightCountAgainstTheLimit() {
        let limiter = ProviderCallbackLimiter(limit: 3, window: 600)
        let admitted = (0..<10).filter { _ in limiter.admit("198.51.100.9", now: start) == nil }.count
        XCTAssertEqual(admitted, 3)
        limiter.finish("198.51.100.9", failed: false, now: start)
        XCTAssertNil(limiter.admit("198.51.100.9", now: start), "a callback that ended well gives its place back")
    }
}
