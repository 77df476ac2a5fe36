/// Opens many connections with a bounded number of handshakes in flight, so the server's accept
/// queue and the harness's memory are not flooded, and keeps them in order.
public enum ConnectMany {
    public static func run<Link: Sendable>(
        count: Int,
        concurrency: Int = 128,
        _ connect: @escaping @Sendable (Int) async throws -> Link
    ) async throws -> [Link] {
        var links = [Link?](repeating: nil, count: count)
        try await withThrowingTaskGroup(of: (Int, Link).self) { group in
            var next = 0
            while next < min(concurrency, count) {
                group.addTask { [next] in (next, try await connect(next)) }
                next += 1
            }
            while let (index, link) = try await group.next() {
                links[index] = link
                if next < count {
                    group.addTask { [next] in (next, try await connect(next)) }
                    next += 1
                }
            }
        }
        return links.compactMap { $0 }
    }
}
