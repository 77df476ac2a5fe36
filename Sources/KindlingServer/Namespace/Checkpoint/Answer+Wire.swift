import KindlingCore
import KindlingProtocol

extension Answer {
    /// The realtime response to request `number`.
    func wireResponse(_ number: Int) -> [UInt8] {
        switch self {
        case .ok, .written:
            return ServerMessage.response(number, status: .ok)
        case .data(let node):
            return ServerMessage.response(number, status: .ok, data: ServerMessage.data(node))
        case .encoded(let data):
            return ServerMessage.response(number, status: .ok, data: data)
        case .authenticated(let auth):
            var writer = JSONWriter()
            writer.write(.object([JSONMember("auth", auth.ruleValue), JSONMember("expires", auth.expiry)]))
            return ServerMessage.response(number, status: .ok, data: writer.bytes)
        case .refused(let refusal):
            let (status, message) = refusal.wire
            return ServerMessage.failure(number, status: status, message: message)
        }
    }
}
