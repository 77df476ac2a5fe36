import KindlingCore
import NIOCore
import NIOPosix

/// Reads a REST write's body into the operation it asks for.
///
/// The `Content-Type` is ignored (firebase-admin sends `application/json`, curl a form type):
/// the body is UTF-8 JSON, and a bare primitive is a valid value. Parsing happens on the event
/// loop, so the namespace's queue only validates and commits.
enum RESTBody {
    static func operation(_ method: RESTRequest.Method, body: ByteBuffer) throws(RESTError) -> RESTWrite {
        if method == .delete { return .remove }
        let parsed: Result<JSONValue, ValidationError>? = body.withUnsafeReadableBytes { raw in
            guard raw.contains(where: { !isBlank($0) }) else { return nil }
            return Result { () throws(ValidationError) -> JSONValue in
                try JSONParser.parse(UnsafeBufferPointer(start: raw.bindMemory(to: UInt8.self).baseAddress, count: raw.count))
            }
        }
        guard let parsed else { throw RESTError(.noData, "No data supplied.") }
        guard case .success(let json) = parsed else {
            throw RESTError(.invalid(.invalidJSON), "Invalid data; couldn't parse JSON object, array, or value.")
        }
        switch method {
        case .put: return .set(json)
        case .post: return .push(json)
        case .patch:
            guard case .object(let members) = json else {
                throw RESTError(.badRequest, "Invalid data; couldn't parse JSON object. Are you sending a JSON object with valid key names?")
            }
            return .update(members)
        case .get, .delete: return .remove
        }
    }

    /// `operation`, on one of `workers` when the body is over `threshold` bytes (parsing a
    /// body of hundreds of megabytes takes seconds, which would stall every other connection of
    /// the event loop); the result comes back on `eventLoop`. A large body is parsed only if
    /// `stillWanted` says so when its turn comes (its client may have gone while it waited).
    static func operation(
        _ method: RESTRequest.Method, body: ByteBuffer, offLoopAbove threshold: Int, workers: NIOThreadPool, eventLoop: any EventLoop,
        stillWanted: @escaping @Sendable () -> Bool
    ) -> EventLoopFuture<RESTWrite> {
        guard body.readableBytes > threshold else {
            return eventLoop.makeCompletedFuture(withResultOf: { try operation(method, body: body) })
        }
        return workers.runIfActive(eventLoop: eventLoop) {
            guard stillWanted() else { throw RESTError(.unavailable, "The client went away before its write was read") }
            return try operation(method, body: body)
        }
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\t")
    }
}
