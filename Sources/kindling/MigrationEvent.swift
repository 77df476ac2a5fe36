import KindlingCore

/// One event of a source database's data stream (`GET /<path>.json`, `Accept:
/// text/event-stream`), read into what `kindling migrate` does with it.
enum MigrationEvent: Equatable {
    /// Replace the data at `path` (relative to the streamed path, as segments) with `data`.
    case put(path: [String], data: JSONValue)
    /// Merge `data`'s members into the data at `path`.
    case patch(path: [String], data: JSONValue)
    /// Nothing to do (`keep-alive`, or an event name the stream may add).
    case ignore
    /// The source ended the stream: its rules no longer let the credential read the path.
    case cancelled
    /// The source ended the stream: the credential expired or was revoked.
    case authRevoked

    /// Why an event could not be read.
    enum Failure: Error, CustomStringConvertible {
        case malformed(String)

        var description: String {
            switch self {
            case .malformed(let text): "a put or patch event without a JSON {\"path\", \"data\"} object: \(text.prefix(200))"
            }
        }
    }

    /// Reads `name` and `data` as the Firebase REST streaming API sends them.
    init(name: String, data: String) throws(Failure) {
        switch name {
        case "put", "patch":
            guard let body = try? JSONParser.parse(data), let path = body["path"]?.stringValue, let value = body["data"] else {
                throw .malformed(data)
            }
            let segments = path.split(separator: "/").map(String.init)
            if name == "put" {
                self = .put(path: segments, data: value)
            } else {
                guard case .object = value else { throw .malformed(data) }
                self = .patch(path: segments, data: value)
            }
        case "cancel": self = .cancelled
        case "auth_revoked": self = .authRevoked
        default: self = .ignore
        }
    }
}
