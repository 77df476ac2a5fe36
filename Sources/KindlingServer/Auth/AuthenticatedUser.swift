import KindlingCore

/// A client acting as a user: what rules see as `auth`, worked out once per credential.
public struct AuthenticatedUser: Sendable, Equatable {
    /// The user id (`sub`, else `user_id`, of a token; `uid` of an override): the `uid` of the
    /// rules' value, read from it rather than kept twice.
    public var uid: String { ruleValue["uid"]?.stringValue ?? "" }
    /// The rules' `auth` value: `{"uid", "provider", "token": {every claim}}` for a token, or
    /// exactly the object an admin gave as `auth_variable_override`.
    public let ruleValue: JSONValue
    /// When the credential stops being valid, in ms since the epoch: a token's `exp` plus the
    /// clock skew it was accepted with; nil when no expiry is enforced (overrides, emulator mock
    /// tokens). A connection past it gets `ac`.
    public let expiresAt: Int64?
    /// The token's `exp` claim as it was sent (null when there is none), for the auth reply.
    public let expiry: JSONValue

    /// A user from its parts.
    public init(ruleValue: JSONValue, expiresAt: Int64?, expiry: JSONValue) {
        self.ruleValue = ruleValue
        self.expiresAt = expiresAt
        self.expiry = expiry
    }
}
