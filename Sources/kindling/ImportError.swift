import KindlingCore

/// Why an imported file cannot be written, and where in it (a byte offset of its JSON text).
enum ImportError: Error, Equatable, CustomStringConvertible {
    /// Not JSON, or cut short.
    case json(JSONStreamError)
    /// A member name the database does not allow.
    case invalidKey(offset: Int, ValidationError)
    /// Data nested deeper than a path may go below the import's path.
    case tooDeep(offset: Int, limit: Int)
    /// A shape the database does not take (`.value` beside children).
    case invalidData(offset: Int, String)

    /// Where in the text it is.
    var offset: Int {
        switch self {
        case .json(let error): error.offset
        case .invalidKey(let offset, _), .tooDeep(let offset, _), .invalidData(let offset, _): offset
        }
    }

    var description: String {
        switch self {
        case .json(let error): "\(error)"
        case .invalidKey(let offset, let error): "Invalid key at byte \(offset): \(error.message)"
        case .tooDeep(let offset, let limit): "Data at byte \(offset) nests deeper than the \(limit) levels a path may have below the import's path"
        case .invalidData(let offset, let reason): "Invalid data at byte \(offset): \(reason)"
        }
    }
}
