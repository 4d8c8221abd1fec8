// Push MFA's view of the senders: one login push to one device, through the dispatcher.
import Foundation

/// Push MFA's view of the senders: one login push to one device, through the dispatcher, which picks the sender
/// by the device's `pushProviderType`. A device token the push service no longer knows is reported back.
struct DispatchingChallengePusher: ChallengePusher {
    let dispatcher: PushDispatcher

    func push(realm: Realm, user: User, credential: PushCredential, challenge: PushChallenge, confirmToken: String, title: String?, body: String?) async -> Bool {
        var message = PushMessage(
            realm: realm.name, userId: user.id, username: user.username, credentialId: credential.credentialId,
            challengeId: challenge.id, clientId: challenge.clientId, pushProviderId: credential.pushProviderId,
            confirmToken: confirmToken, demo: realm.demo
        )
        (message.title, message.body) = (title, body)
        return await dispatcher.dispatch(message, providerType: credential.effectivePushProviderType) == .unregistered
    }
}
