/// Which way a credential arrived, since the two kinds are read differently.
public enum CredentialKind: Sendable, Equatable {
    /// An ID token: the WebSocket `auth` action, REST `?auth=`.
    case idToken
    /// An access token: the WebSocket `gauth` action, REST `Authorization: Bearer` and
    /// `?access_token=`. Non-JWT access tokens (Google OAuth) are admin in emulator mode only.
    case accessToken
}
