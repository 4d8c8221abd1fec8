// keyward-device pending, approve and deny: answering login challenges.
import ArgumentParser
import Foundation
import KeywardKit
import KeywardWire

struct Pending: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the login challenges waiting for this device.")
    @OptionGroup var device: PushDeviceOptions
    @Flag(help: "Print the server's JSON.") var json = false

    func run() async throws {
        let challenges = try await device.client().pendingChallenges()
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            print(String(decoding: try encoder.encode(PendingChallengesResponse(challenges: challenges)), as: UTF8.self))
            return
        }
        if challenges.isEmpty { print("no pending challenges") }
        for challenge in challenges {
            var line = "\(challenge.cid)\tuser=\(challenge.username)\tclient=\(challenge.clientId ?? "-")\texpires=\(challenge.expiresAt)"
            switch challenge.userVerification?.type {
            case "number-match": line += "\tpick one of: \(challenge.userVerification?.numbers?.joined(separator: " ") ?? "")"
            case "pin": line += "\tPIN of \(challenge.userVerification?.pinLength ?? 0) digits"
            default: break
            }
            print(line)
        }
    }
}

/// A challenge named by its id, or by a pushed confirm token / `my-secure://confirm?token=…` link.
struct ChallengeArgument: ParsableArguments {
    @Argument(help: "Challenge id, or a confirm token / confirm link from the push.") var challenge: String

    func challengeId(_ client: PushMFAClient) async throws -> String {
        if UUID(uuidString: challenge) != nil { return challenge.lowercased() }
        guard case .token(let token) = try EnrollmentLink.parse(challenge) else {
            throw DeviceCommandError("'\(challenge.prefix(40))' is neither a challenge id nor a confirm token")
        }
        return try await client.challengeId(fromConfirmToken: token)
    }
}

struct Approve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Approve a login challenge.")
    @OptionGroup var device: PushDeviceOptions
    @OptionGroup var target: ChallengeArgument
    @Option(help: "The number or PIN shown in the browser, when the realm asks for one.") var answer: String?

    func run() async throws {
        let client = try await device.client()
        let id = try await target.challengeId(client)
        if let prompt = try await client.pendingChallenges().first(where: { $0.cid == id })?.userVerification {
            guard let answer else { throw DeviceCommandError("this login asks for \(prompt.instruction): pass --answer") }
            try prompt.check(answer: answer)
        }
        print(try await client.respond(challengeId: id, action: .approve, userVerification: answer))
    }
}

struct Deny: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Deny a login challenge.")
    @OptionGroup var device: PushDeviceOptions
    @OptionGroup var target: ChallengeArgument

    func run() async throws {
        let client = try await device.client()
        print(try await client.respond(challengeId: try await target.challengeId(client), action: .deny))
    }
}
