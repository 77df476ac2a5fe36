import KindlingConsole
import NIOHTTP1

/// Answers `GET /.console` (and `/.console/<file>`) with the web console's embedded files.
///
/// The console does everything through the public REST API, so serving it adds no power; the
/// headers keep the page itself safe: a strict Content-Security-Policy (own scripts, styles and
/// connections only, no inline code, no framing), `nosniff`, no referrer (the SSE URL may carry
/// `?auth=`), and `ETag` revalidation so a browser re-downloads only what changed.
enum ConsoleResponder {
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// The response for a console path, or nil when `uriPath` is not one.
    static func response(uriPath: String, method: HTTPMethod, ifNoneMatch: String?) -> HTTPResponse? {
        let name: String
        if uriPath == "/.console" || uriPath == "/.console/" {
            name = ConsoleAsset.page
        } else if uriPath.hasPrefix("/.console/") {
            name = String(uriPath.dropFirst("/.console/".count))
        } else {
            return nil
        }
        guard method == .GET else {
            var response = HTTPResponse(.methodNotAllowed, body: RESTRendering.error("Use GET", print: .compact), headers: [("Allow", "GET")])
            response.closeConnection = method == .HEAD  // a HEAD response may not carry a body
            return response
        }
        guard let asset = ConsoleAsset.all[name] else {
            return .error(.notFound, "No such console file", print: .compact)
        }
        var headers = [
            ("ETag", asset.etag),
            ("Cache-Control", "no-cache"),
            ("Content-Security-Policy", contentSecurityPolicy),
            ("X-Content-Type-Options", "nosniff"),
            ("Referrer-Policy", "no-referrer"),
            ("X-Frame-Options", "DENY"),
        ]
        if ifNoneMatch == asset.etag { return HTTPResponse(.notModified, headers: headers) }
        headers.append(("Content-Type", asset.contentType))
        return HTTPResponse(.ok, body: asset.bytes, headers: headers)
    }
}
