import Logging

/// Pushes by writing one log line per push (the original's `log` provider); the confirm token is included only
/// for demo realms. Replaced by the Push part's dispatcher once senders are configured.
struct LogChallengePusher: ChallengePusher {
    let logger: Logger

    func push(realm: Realm, user: User, credential: PushCredential, challenge: PushChallenge, confirmToken: String) async -> Bool {
        var metadata: Logger.Metadata = [
            "realm": "\(realm.name)", "username": "\(user.username)", "userId": "\(user.id)", "version": "1", "type": "1",
            "credentialId": "\(credential.credentialId)", "challengeId": "\(challenge.id)",
            "pushProviderId": "\(credential.pushProviderId)", "clientId": "\(challenge.clientId ?? "")",
        ]
        if realm.demo { metadata["confirmToken"] = "\(confirmToken)" }
        logger.info("push-mfa push", metadata: metadata)
        return false
    }
}
