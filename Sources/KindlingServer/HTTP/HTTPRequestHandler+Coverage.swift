import KindlingCore
import NIOCore
import NIOHTTP1
import NIOPosix

extension HTTPRequestHandler {
    /// `GET /.inspect/coverage.json?ns=` (the report as JSON), `DELETE` there (resets it and
    /// answers the report it cleared) and `GET /.inspect/coverage?ns=` (the page).
    ///
    /// Readable as `/.inspect/databases.json` is: by an admin, or by anyone in emulator mode, where
    /// the Firebase emulator leaves it open and test tools fetch it without a credential. The
    /// namespace's admission runs in the namespace.
    func serveCoverage(
        _ format: RulesCoverageReport.Format, _ request: RESTRequest, as auth: AuthState, keepAlive: Bool, context: ChannelHandlerContext
    ) {
        let refuse = { (status: HTTPResponseStatus, message: String) in
            self.send(.error(status, message, print: request.print), keepAlive: keepAlive, context: context)
        }
        switch (format, request.method) {
        case (.json, .get), (.json, .delete), (.html, .get): break
        case (.json, _): return refuse(.methodNotAllowed, "Use GET, or DELETE to reset, on /.inspect/coverage.json")
        case (.html, _): return refuse(.methodNotAllowed, "Use GET on /.inspect/coverage")
        }
        guard auth == .admin || configuration.auth.emulatorMode else { return refuse(.unauthorized, "Permission denied") }
        guard configuration.rulesCoverage else { return refuse(.notFound, RulesCoverageReport.off) }
        let promise = context.eventLoop.makePromise(of: Result<RulesCoverageReport, Refusal>.self)
        registry.namespace(request.namespace).rulesCoverage(reset: request.method == .delete, as: auth, promise: promise)  // which ends this use
        promise.futureResult.assumeIsolated().whenSuccess { result in
            switch result {
            case .failure(let refusal):
                refuse(refusal.http.status, refusal.http.message)
            case .success(let report):
                // Rendering walks the whole rules text: on a worker, not the event loop.
                let pretty = request.print == .pretty
                self.workers.runIfActive(eventLoop: context.eventLoop) {
                    format == .json ? report.json(pretty: pretty) : report.page
                }.assumeIsolated().whenComplete { rendered in
                    guard case .success(let body) = rendered else { return refuse(.serviceUnavailable, "The server is shutting down") }
                    let headers = format == .json ? [] : RulesCoverageReport.pageHeaders
                    self.send(HTTPResponse(.ok, body: body, headers: headers), keepAlive: keepAlive, context: context)
                }
            }
        }
    }
}
