// The push senders a node runs with, built from their settings.
import Logging

enum PushSenders {
    /// `log` and `none` always; `fcm` and `apns` when configured. Their key files are read here, so a bad
    /// configuration stops start-up with the setting's name instead of failing at the first login.
    /// `proxyEnvironment`: `https_proxy`, `http_proxy` and `no_proxy` as the environment has them.
    static func configured(
        fcm: FCMSettings?, apns: APNsSettings?, proxyEnvironment environment: [String: String], logger: Logger, clock: any KeywardClock
    ) throws -> [any PushSender] {
        var senders: [any PushSender] = [LogPushSender(logger: logger), NonePushSender()]
        do throws(SettingError) {
            if var fcm {
                fcm.proxy = try OutboundProxy.fromEnvironment(for: fcm.url, setting: "push.fcm.url", environment: environment)
                senders.append(try FCMPushSender(settings: fcm, logger: logger, clock: { clock.now() }))
            }
            if var apns {
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
