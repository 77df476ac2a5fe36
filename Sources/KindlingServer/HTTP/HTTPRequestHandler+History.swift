import KindlingCore
import NIOCore
import NIOHTTP1
import NIOPosix

/// Reads of the past (`PastRead`): the namespace admits the request and hands over its
/// history; rebuilding a tree or scanning the log happens on a worker thread (files) or in a task
/// reading JetStream (a cluster), never on the event loop or the namespace's executor, so writes
/// go on meanwhile.
extension HTTPRequestHandler {
    func readPast(_ past: PastRead, _ request: RESTRequest, as auth: AuthState, namespace: Namespace, keepAlive: Bool, context: ChannelHandlerContext)
    {
        let promise = context.eventLoop.makePromise(of: Result<HistoryAccess, Refusal>.self)
        namespace.historyAccess(as: auth, promise: promise)  // which ends this use
        promise.futureResult.assumeIsolated().whenSuccess { result in
            let access: HistoryAccess
            switch result {
            case .success(let granted): access = granted
            case .failure(let refusal):
                return self.send(.error(refusal.http.status, refusal.http.message, print: request.print), keepAlive: keepAlive, context: context)
            }
            let answered = context.eventLoop.makePromise(of: Result<[UInt8], HistoryError>.self)
            let workers = self.workers
            answered.completeWithTask {
                let answer: HistoryAccess.Answer
                do throws(HistoryError) {
                    answer = try await access.answer(past, at: request.path, workers: workers)
                } catch {
                    return .failure(error)
                }
                // Rendering a large tree takes long too: on a worker thread as well.
                do {
                    return .success(
                        try await workers.runIfActive {
                            switch answer {
                            case .node(let node): RESTRendering.data(node, shallow: request.shallow, format: request.format, print: request.print)
                            case .changes(let changes): RESTRendering.json(.array(changes.map(\.jsonValue)), print: request.print)
                            }
                        })
                } catch {
                    return .failure(.shuttingDown)
                }
            }
            answered.futureResult.assumeIsolated().whenComplete { outcome in
                switch outcome {
                case .success(.success(let body)):
                    self.send(
                        request.print == .silent ? HTTPResponse(.noContent) : HTTPResponse(.ok, body: body), keepAlive: keepAlive, context: context)
                case .success(.failure(let error)):
                    self.send(.error(error.httpStatus, error.description, print: request.print), keepAlive: keepAlive, context: context)
                case .failure:
                    self.send(
                        .error(.serviceUnavailable, HistoryError.shuttingDown.description, print: request.print), keepAlive: keepAlive,
                        context: context)
                }
            }
        }
    }
}

extension HistoryError {
    /// The one place a history error becomes an HTTP status: an instant the history does not
    /// reach is not found; a namespace that keeps none was asked what it cannot answer; a
    /// damaged history is the server's failure.
    var httpStatus: HTTPResponseStatus {
        switch self {
        case .beforeHistory: .notFound
        case .unavailable: .badRequest
        case .gap, .storage: .internalServerError
        case .shuttingDown: .serviceUnavailable
        }
    }
}
