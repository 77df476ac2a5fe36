import NIOHTTP1

/// A complete (non-streaming) HTTP response, before the headers every response shares are added.
struct HTTPResponse: Sendable {
    var status: HTTPResponseStatus
    var body: [UInt8]
    var headers: [(String, String)] = []
    /// Close the connection after this response (the request's body was not read to its end,
    /// or the request could not be framed).
    var closeConnection = false

    init(_ status: HTTPResponseStatus, body: [UInt8] = [], headers: [(String, String)] = []) {
        self.status = status
        self.body = body
        self.headers = headers
    }

    /// An error response, `{"error":"…"}`; a 503 (busy, or not serving now: nothing was
    /// done) also says when to retry.
    static func error(_ status: HTTPResponseStatus, _ message: String, print: RESTRequest.Print) -> HTTPResponse {
        HTTPResponse(status, body: RESTRendering.error(message, print: print), headers: status == .serviceUnavailable ? [("Retry-After", "1")] : [])
    }

    /// 204 and 304 carry no body and, per RFC 9110, no `Content-Length` either.
    var hasBody: Bool { status != .noContent && status != .notModified }
}
