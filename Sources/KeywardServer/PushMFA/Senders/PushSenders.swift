// The push senders a node runs with, built from its configuration.
import Logging

enum PushSenders {
    /// `log` and `none` always; `fcm` and `apns` when configured. Their key files are read here, so a bad
    /// configuration stops start-up with the setting's name instead of failing at the first login.
    static func configured(_ configuration: KeywardConfiguration, logger: Logger, clock: any KeywardClock) throws -> [any PushSender] {
        var senders: [any PushSender] = [LogPushSender(logger: logger), NonePushSender()]
        do throws(SettingError) {
            let environment = configuration.proxyEnvironment
            if var fcm = configuration.fcmSettings {
                fcm.proxy = try OutboundProxy.fromEnvironment(for: fcm.url, setting: "push.fcm.url", environment: environment)
                senders.append(try FCMPushSender(settings: fcm, logger: logger, clock: { clock.now() }))
            }
            if var apns = configuration.apnsSettings {
                apns.proxy = try OutboundProxy.fromEnvironment(for: apns.url, setting: "push.apns.url", environment: environment)
                senders.append(try APNsPushSender(settings: apns, logger: logger, clock: { clock.now() }))
            }
        } catch {
            // The APNs sender is built last and its init creates no client when it throws: nothing to shut down.
            throw ConfigurationError(
                setting: error.setting, problem: error.file.map { "\($0): \(error.problem)" } ?? error.problem,
                environmentVariable: error.environmentVariable
            )
        }
        return senders
    }
}
