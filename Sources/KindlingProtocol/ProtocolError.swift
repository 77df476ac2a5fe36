import KindlingCore

/// Why a client message could not be taken.
///
/// A message whose request number is known gets an error response (`requestNumber` is set); a
/// message that cannot even be read as a request closes the connection, with `message` logged.
public struct ProtocolError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// Not JSON, or not an envelope (`t` and `d`).
        case malformedMessage
        /// A frame count or a message over the size limit.
        case tooLarge
        /// A request whose body is invalid: a bad path, key, query or value.
        case invalidRequest
    }

    public let kind: Kind
    public let message: String
    /// The request number, when the envelope was readable far enough to answer it.
    public let requestNumber: Int?
    /// The core's reason, for invalid requests.
    public let validation: ValidationError?

    public init(_ kind: Kind, _ message: String, requestNumber: Int? = nil, validation: ValidationError? = nil) {
        self.kind = kind
        self.message = message
        self.requestNumber = requestNumber
        self.validation = validation
    }

    public var description: String { message }
}
