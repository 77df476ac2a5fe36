import KindlingCore

/// Who a connection or request acts as.
public enum AuthState: Sendable, Equatable {
    /// No credential: rules see `auth == null`.
    case anonymous
    /// The emulator admin (`owner`) or a Google access token: bypasses rules.
    case admin
    /// A user, with the claims of their token (`uid` is the `sub` claim).
    case user(claims: JSONValue)

    /// Reads a credential the way the emulator does: `owner` is the admin; a JWT (signed or
    /// not; signatures are not checked, and `exp` is not enforced) is a user; any other token is
    /// accepted as an admin access token only when it came through `gauth`.
    public static func from(credential: String, isGoogleToken: Bool) -> AuthState? {
        if credential == "owner" { return .admin }
        if let claims = JWTClaims.decode(credential) {
            var members: [JSONMember] = []
            if case .object(let existing) = claims { members = existing }
            if claims["uid"] == nil, let subject = claims["sub"] { members.append(JSONMember("uid", subject)) }
            return .user(claims: .object(members))
        }
        return isGoogleToken && !credential.isEmpty ? .admin : nil
    }

    /// The `auth` value rules will see (null for anonymous, the claims for a user).
    public var ruleValue: JSONValue {
        switch self {
        case .anonymous: return .null
        case .admin: return .object([JSONMember("uid", .string("owner")), JSONMember("admin", .bool(true))])
        case .user(let claims): return claims
        }
    }
}

/// Decodes the payload of a JWT without verifying it.
enum JWTClaims {
    static func decode(_ token: String) -> JSONValue? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 || parts.count == 2, let bytes = base64URLDecode(parts[1]) else { return nil }
        guard let claims = try? JSONParser.parse(bytes), case .object = claims else { return nil }
        return claims
    }

    static func base64URLDecode(_ text: Substring) -> [UInt8]? {
        var output: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for byte in text.utf8 {
            let value: UInt8
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = byte - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = byte - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte - UInt8(ascii: "0") + 52
            case UInt8(ascii: "-"), UInt8(ascii: "+"): value = 62
            case UInt8(ascii: "_"), UInt8(ascii: "/"): value = 63
            case UInt8(ascii: "="): continue
            default: return nil
            }
            buffer = buffer << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8((buffer >> UInt32(bits)) & 0xFF))
            }
        }
        return output
    }
}
