import KindlingProtocol

/// What a connection hands its namespace: an operation (with the number its response must
/// carry), or the refusal of a request it could not read or verify (answered in order with the
/// others).
enum SessionInput: Sendable {
    case operation(number: Int?, Operation)
    case reject(number: Int, status: WireStatus, message: String)
}
