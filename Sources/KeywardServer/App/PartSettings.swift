// Each part's settings value, read from the one configuration: the one place that maps settings to parts.
import Foundation

extension KeywardConfiguration {
    /// What every part shares.
    var sharedSettings: CoreServices.Shared {
        CoreServices.Shared(
            publicURL: resolvedPublicURL, maxBodySize: maxBodySize, clients: clientNetworks, auditRetention: TimeInterval(auditRetentionDays) * 86400
        )
    }

    var oauthSettings: OAuthSettings {
        OAuthSettings(
            resourceProofMaxAge: dpopMaxAge, resourceProofFutureSkew: dpopFutureSkew, tokenEndpointProofMaxAge: dpopTokenEndpointMaxAge,
            tokenEndpointProofFutureSkew: dpopTokenEndpointFutureSkew, requireNonce: dpopRequireNonce
        )
    }

    var accountsSettings: AccountsSettings {
        AccountsSettings(
            bcryptCost: bcryptCost, passwordThreads: passwordThreads, maxConcurrentPasswordChecks: maxConcurrentPasswordChecks,
            loginAttemptsPerAddress: loginAttemptsPerAddress
        )
    }

    var identityProviderSettings: IdentityProviderSettings {
        IdentityProviderSettings(callbackFailuresPerAddress: providerCallbackFailuresPerAddress)
    }

    var pushMFASettings: PushMFAServerSettings {
        PushMFAServerSettings(
            requireAth: pushMfaRequireAth, dpopIatTolerance: pushMfaDpopIatTolerance, dpopJtiTTL: pushMfaDpopJtiTTL,
            events: ChallengeEventStream.Options(
                maxConnections: sseMaxConnections, heartbeat: .seconds(sseHeartbeatSeconds), maxLifetime: .seconds(sseMaxConnectionLifetimeSeconds),
                reconnectDelayMillis: sseReconnectDelayMillis, pollInterval: .milliseconds(ssePollMillis)
            ),
            maxConcurrentSends: pushMaxConcurrentSends
        )
    }

    var declaredDeviceSettings: DeviceSettings.Declared {
        DeviceSettings.Declared(
            challengeLifetime: devicesChallengeLifetime,
            limits: DeviceService.Limits(
                pendingPerApp: devicesPendingLimit, pendingLifetime: TimeInterval(devicesPendingLifetimeDays) * 86400,
                unattestedPerHour: devicesUnattestedPerHour, googleDecodesPerAddressPerHour: playIntegrityGoogleCallsPerAddressPerHour,
                googleDecodesPerAppPerHour: playIntegrityGoogleCallsPerAppPerHour
            ),
            playIntegrityURL: playIntegrityURL, appsFile: devicesAppsFile, playIntegrityServiceAccountFile: playIntegrityServiceAccountFile,
            androidExtraRootsFile: androidExtraRootsFile, androidRevocationListFile: androidRevocationListFile
        )
    }
}
