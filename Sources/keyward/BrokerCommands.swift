// keyward broker: a realm's broker settings.
import ArgumentParser
import Foundation
import KeywardServer

struct Broker: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Broker administration (the relay that gives native apps a delegation for their session key).", subcommands: [Settings.self]
    )

    struct Settings: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a realm's broker settings, or change some with KEY=VALUE arguments.",
            discussion: """
                Keys: delegationLifetimeDays (1-30, default 30: how long a delegation buys tokens without the person), \
                handoffLifetimeSeconds (10-300, default 120: how long a hand-off waits to be taken). Nodes read a change \
                within 5 seconds. Example: keyward broker settings --realm demo delegationLifetimeDays=7
                """
        )
        @OptionGroup var common: CommonOptions
        @Option(help: "Realm name.") var realm: String
        @Argument(help: "Settings to change, as KEY=VALUE.") var assignments: [String] = []

        func run() async throws {
            try await withRuntime(common) { runtime in
                _ = try await requireRealm(runtime, realm)
                var settings = try await runtime.broker.settings.settings(realm: realm)
                for (key, value) in try keyValuePairs(assignments) {
                    do throws(BrokerSettingsError) {
                        try settings.apply(key, value)
                    } catch {
                        throw CommandError(error.description)
                    }
                }
                if !assignments.isEmpty { try await runtime.broker.settings.save(settings, realm: realm) }
                print("delegationLifetimeDays=\(settings.delegationLifetimeDays)")
                print("handoffLifetimeSeconds=\(settings.handoffLifetimeSeconds)")
            }
        }
    }
}
