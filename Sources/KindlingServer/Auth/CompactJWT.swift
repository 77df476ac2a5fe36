import KindlingCore

/// A JWS compact serialization (`header.payload.signature`) taken apart, nothing in it trusted
/// yet. Parsing never traps: every length is capped, base64url and JSON are checked strictly.
struct CompactJWT {
    /// Why a string is not a usable JWT.
    enum Failure: Error, Equatable {
        /// Not JWT-shaped at all (no three parts, or a first part that is not a JSON object):
        /// it may be an opaque access token.
        case notJWT
        /// JWT-shaped, but broken.
        case malformed(String)
    }

    /// The longest credential read; real ID tokens are about 1 KB.
    static let maxLength = 16 * 1024

    /// The header's members (`alg`, `kid`, …).
    let header: JSONValue
    /// The payload's claims, always a JSON object.
    let claims: JSONValue
    /// The bytes the signature covers: the first two parts and the dot between them, as sent.
    let signingInput: [UInt8]
    /// The decoded signature (empty for an unsigned token).
    let signature: [UInt8]

    /// The `alg` header member (always present once parsed).
    var algorithm: String { header["alg"]?.stringValue ?? "" }

    /// The `kid` header member, if it is a string.
    var keyID: String? { header["kid"]?.stringValue }

    private init(header: JSONValue, claims: JSONValue, signingInput: [UInt8], signature: [UInt8]) {
        self.header = header
        self.claims = claims
        self.signingInput = signingInput
        self.signature = signature
    }

    /// Takes a token apart.
    static func parse(_ token: String) -> Result<CompactJWT, Failure> {
        let bytes = Array(token.utf8)
        guard bytes.count <= maxLength else { return .failure(.malformed("token longer than \(maxLength) bytes")) }
        let dots = bytes.indices.filter { bytes[$0] == UInt8(ascii: ".") }
        guard dots.count == 2 else { return .failure(.notJWT) }
        let headerPart = bytes[..<dots[0]]
        let payloadPart = bytes[(dots[0] + 1)..<dots[1]]
        let signaturePart = bytes[(dots[1] + 1)...]
        guard let headerBytes = base64URLDecode(headerPart),
            let header = try? JSONParser.parse(headerBytes), case .object = header
        else { return .failure(.notJWT) }
        guard header["alg"]?.stringValue != nil else { return .failure(.malformed("header has no alg")) }
        if header["crit"] != nil { return .failure(.malformed("critical header extensions are not supported")) }
        guard let payloadBytes = base64URLDecode(payloadPart) else { return .failure(.malformed("payload is not base64url")) }
        guard let claims = try? JSONParser.parse(payloadBytes), case .object = claims else {
            return .failure(.malformed("payload is not a JSON object"))
        }
        guard let signature = base64URLDecode(signaturePart) else { return .failure(.malformed("signature is not base64url")) }
        return .success(CompactJWT(header: header, claims: claims, signingInput: Array(bytes[..<dots[1]]), signature: signature))
    }

    /// Strict unpadded base64url (RFC 7515 §2): nil for any other character, or a length no
    /// encoding produces.
    static func base64URLDecode(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        guard text.count % 4 != 1 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(text.count * 3 / 4)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in text {
            let value: UInt8
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = byte - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = byte - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte - UInt8(ascii: "0") + 52
            case UInt8(ascii: "-"): value = 62
            case UInt8(ascii: "_"): value = 63
            default: return nil
            }
            buffer = (buffer << 6 | UInt32(value)) & 0xFFFFFF
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8((buffer >> UInt32(bits)) & 0xFF))
            }
        }
        return output
    }
}
