import KindlingCore

/// Who a connection or request acts as, once its credential has been checked by a
/// ``CredentialVerifier``.
public enum AuthState: Sendable, Equatable {
    /// No credential: rules see `auth == null`.
    case anonymous
    /// A configured admin secret, or `owner` in emulator mode: bypasses rules.
    case admin
    /// A user with a verified (or, in emulator mode, accepted) token, or an admin's override.
    case user(AuthenticatedUser)

    /// True for a value that names an identity as an override: an object or JSON null. Both
    /// transports refuse a request with any other (REST 400, realtime `invalid_token`): taking
    /// it as no override would leave an admin who meant to drop privileges acting as the admin.
    public static func isOverride(_ value: JSONValue) -> Bool {
        switch value {
        case .object, .null: true
        default: false
        }
    }

    /// The identity an admin asks for with `auth_variable_override` (REST) or `authvar`/`noauth`
    /// (WebSocket): an object is a user whose rules `auth` is exactly that object (uid from its
    /// `"uid"` string), JSON null is anonymous. Any other value also gives anonymous, the least
    /// privilege; callers refuse such a request before asking (`isOverride`). Callers honour an
    /// override only when the credential itself was the admin.
    public static func overridden(by value: JSONValue) -> AuthState {
        guard case .object = value else { return .anonymous }
        return .user(AuthenticatedUser(ruleValue: value, expiresAt: nil, expiry: .null))
    }

    /// The identity a request acts as when it names one (`auth_variable_override` on REST,
    /// `authvar`/`noauth` on the WebSocket): only the admin may act as someone else, so any
    /// other caller keeps its own identity, and no override keeps the admin.
    public func acting(as override: JSONValue?) -> AuthState {
        guard self == .admin, let override else { return self }
        return .overridden(by: override)
    }

    /// The `auth` value rules see: null for anonymous, the user's value, and for the admin (who
    /// bypasses rules, so this is only ever shown) `{"uid":"owner","admin":true}`.
    /// Who made a write, as the history records it: `{"uid":…}`, `{"admin":true}`, or null.
    var writerValue: JSONValue {
        switch self {
        case .anonymous: .null
        case .admin: .object([JSONMember("admin", .bool(true))])
        case .user(let user): .object([JSONMember("uid", .string(user.uid))])
        }
    }

    public var ruleValue: JSONValue {
        switch self {
        case .anonymous: .null
        case .admin: .object([JSONMember("uid", .string("owner")), JSONMember("admin", .bool(true))])
        case .user(let user): user.ruleValue
        }
    }

    /// The token's `exp` claim for the WebSocket auth reply (`{"auth":…,"expires":…}`), or null.
    public var expiry: JSONValue {
        if case .user(let user) = self { return user.expiry }
        return .null
    }

    /// When this identity expires (ms since the epoch), or nil if it does not.
    public var expiresAt: Int64? {
        if case .user(let user) = self { return user.expiresAt }
        return nil
    }
}
