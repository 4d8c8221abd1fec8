// What each part's own errors mean to the admin API.

extension UserError: AdminProblemConvertible {
    var adminProblem: AdminProblem {
        switch self {
        case .invalidUsername: .invalid(description, field: "username")
        case .invalidPassword: .invalid(description, field: "password")
        case .exists, .identityExists, .accountExists, .identityLinkedElsewhere: .conflict(description)
        case .notFound: .notFound(description)
        case .stale: AdminRevision.stale
        }
    }
}

extension ClientError: AdminProblemConvertible {
    var adminProblem: AdminProblem {
        switch self {
        case .exists: .conflict(description)
        case .notFound: .notFound(description)
        case .invalidClientId: .invalid(description, field: "client_id")
        case .invalidSecret: .invalid(description, field: "client_secret")
        case .invalidRedirectURI(let setting, _), .tooManyRedirectURIs(let setting, _): .invalid(description, field: Self.field(setting))
        case .brokerWithoutReturnURL: .invalid(description, field: "redirect_uris")
        case .invalidScope, .reservedScope: .invalid(description, field: "scope")
        case .unknownAdminScope, .adminScopesNeedDPoP: .invalid(description, field: "admin_scopes")
        case .adminScopeNotHeld: .forbidden("insufficient_scope", description)
        }
    }

    /// The CLI's option as the body's member.
    private static func field(_ setting: String) -> String {
        setting.contains("post-logout") ? "post_logout_redirect_uris" : "redirect_uris"
    }
}

extension RealmError: AdminProblemConvertible {
    var adminProblem: AdminProblem {
        switch self {
        case .invalidName: .invalid(description, field: "name")
        case .invalidLifetime: .invalid(description, field: "access_token_lifetime")
        case .exists: .conflict(description)
        case .notFound: .notFound(description)
        }
    }
}

extension RealmKeyError: AdminProblemConvertible {
    var adminProblem: AdminProblem {
        switch self {
        case .unsupportedAlgorithm: .invalid(description, field: "signing_algorithm")
        case .noActiveKey: .unavailable
        }
    }
}

extension IdentityProviderError: AdminProblemConvertible {
    var adminProblem: AdminProblem {
        switch self {
        case .invalidSetting(let setting, _): .invalid(description, field: AdminProblem.field(fromSetting: setting))
        case .exists: .conflict(description)
        case .notFound: .notFound(description)
        }
    }
}

extension HostIssuerError: AdminProblemConvertible {
    var adminProblem: AdminProblem {
        switch self {
        case .invalidSetting(let setting, _): .invalid(description, field: AdminProblem.field(fromSetting: setting))
        case .invalidPEM: .invalid(description, field: "pem_certificates")
        case .exists: .conflict(description)
        case .notFound: .notFound(description)
        }
    }
}

extension DeviceAppError: AdminProblemConvertible {
    var adminProblem: AdminProblem {
        switch kind {
        case .invalid: .invalid(description)
        case .notFound: .notFound(description)
        case .conflict: .conflict(description)
        }
    }
}

extension AdminProblem {
    /// A CLI option's name (`--client-id`) as the body's member (`client_id`).
    static func field(fromSetting setting: String) -> String {
        String(setting.drop { $0 == "-" }).replacingOccurrences(of: "-", with: "_")
    }
}
