import Dispatch
import KindlingCore

extension DatabaseQuerying {
    /// The snapshots of every `eventType` event, as an async sequence:
    ///
    /// ```swift
    /// for try await spot in ref.snapshots() { print(spot) }
    /// ```
    ///
    /// The listen lasts as long as the loop: it is removed when the loop ends (a `break`, a
    /// thrown error) or the task running it is cancelled. When the server refuses or revokes the
    /// listen (the rules deny reading here), the sequence throws that `DatabaseError`.
    public func snapshots(of eventType: DataEventType = .value) -> AsyncThrowingStream<DataSnapshot, any Error> {
        stream(of: eventType) { .success($0.snapshot) }
    }

    /// Each value here decoded as `T`, as an async sequence that ends like `snapshots(of:)`.
    /// A value that does not decode ends the sequence with its `DecodingError`.
    public func values<T: Decodable & Sendable>(
        as type: T.Type = T.self, decoder: JSONValueDecoder = JSONValueDecoder()
    ) -> AsyncThrowingStream<T, any Error> {
        stream(of: .value) { event in
            do throws(DecodingError) {
                return .success(try event.snapshot.data(as: type, decoder: decoder))
            } catch {
                return .failure(error)
            }
        }
    }

    private func stream<Element: Sendable>(
        of eventType: DataEventType, _ transform: @escaping @Sendable (DataEvent) -> Result<Element, any Error>
    ) -> AsyncThrowingStream<Element, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Element.self)
        // A serial queue of its own keeps the events in order without holding up the database's.
        let queue = DispatchQueue(label: "kindling.snapshots")
        let handle = observeEvents(
            eventType, on: queue,
            with: { event in
                switch transform(event) {
                case .success(let element): continuation.yield(element)
                case .failure(let error): continuation.finish(throwing: error)
                }
            },
            withCancel: { continuation.finish(throwing: $0) })
        let repo = asQuery.database.repo
        continuation.onTermination = { _ in repo.removeObserver(Int(handle)) }
        return stream
    }
}
