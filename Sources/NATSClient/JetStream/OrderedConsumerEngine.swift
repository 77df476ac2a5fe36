/// The ordered consumer's state: the next stream sequence owed to the reader, the consumer
/// sequence last seen, and the current server-side consumer with its delivery subscription.
actor OrderedConsumerEngine {
    private let jetStream: JetStream
    private let stream: String
    private let filterSubject: String?
    private let heartbeat: Duration
    private let output: AsyncStream<JetStreamMessage>.Continuation

    private var nextStreamSequence: UInt64
    private var consumerSequence: UInt64 = 0
    private var consumerName: String?
    private var subscription: NATSSubscription?
    private var lastActivity = ContinuousClock.now
    private var stopped = false
    private var tasks: [Task<Void, Never>] = []
    private(set) var consumersCreated = 0

    init(
        jetStream: JetStream, stream: String, startSequence: UInt64, filterSubject: String?, heartbeat: Duration,
        output: AsyncStream<JetStreamMessage>.Continuation
    ) {
        self.jetStream = jetStream
        self.stream = stream
        self.filterSubject = filterSubject
        self.heartbeat = heartbeat
        self.output = output
        self.nextStreamSequence = startSequence
    }

    /// Creates the first consumer before returning, so the reader starts from a known point and a
    /// missing stream is reported to the caller instead of retried forever. A create that went
    /// unanswered, or that met a cluster still electing its leaders, is tried again up to
    /// `startAttempts` times in all: a loaded cluster's metadata leader can take longer than one
    /// request timeout, and that is no reason to fail the reader.
    func start() async throws(JetStreamError) {
        var attempt = 1
        var result = await setUp()
        while case .failure(let error) = result, attempt < Self.startAttempts, error.isTemporary, !stopped {
            try? await Task.sleep(for: .milliseconds(100) * attempt)
            attempt += 1
            result = await setUp()
        }
        let first = try result.get()
        let events = await jetStream.client.connectionEvents()
        tasks.append(Task { [weak self] in await self?.run(first) })
        tasks.append(Task { [weak self] in await self?.watchEvents(events) })
        tasks.append(Task { [weak self] in await self?.watchHeartbeats() })
    }

    func stop() async {
        guard !stopped else { return }
        stopped = true
        for task in tasks { task.cancel() }
        await subscription?.unsubscribe()
        subscription = nil
        output.finish()
        await deleteConsumer()
    }

    private func run(_ first: NATSSubscription) async {
        var delivery = first
        while !stopped {
            for await message in delivery {
                guard !stopped, await handle(message) else { break }
            }
            await delivery.unsubscribe()
            if subscription?.sid == delivery.sid { subscription = nil }
            await deleteConsumer()
            var failures = 0
            while !stopped {
                if case .success(let next) = await setUp() {
                    delivery = next
                    break
                }
                failures += 1
                try? await Task.sleep(for: min(.milliseconds(50) * (1 << min(failures, 6)), heartbeat))
            }
        }
    }

    /// How many times `start` asks for the first consumer before reporting a transient failure.
    static let startAttempts = 3

    /// Subscribes to a fresh inbox first, then creates the consumer, so no message can arrive
    /// before the subscription exists.
    private func setUp() async -> Result<NATSSubscription, JetStreamError> {
        let client = jetStream.client
        let inbox = await client.newInbox()
        let delivery: NATSSubscription
        do {
            delivery = try await client.subscribe(inbox)
        } catch {
            return .failure(.transport(error))
        }
        let config = OrderedConsumerConfig(
            deliverSubject: inbox, startSequence: nextStreamSequence, filterSubject: filterSubject, heartbeat: heartbeat)
        do {
            let created: ConsumerCreated = try await jetStream.api(
                "CONSUMER.CREATE.\(stream)", body: CreateConsumerRequest(streamName: stream, config: config))
            guard !stopped else {
                await delivery.unsubscribe()
                return .failure(.transport(.closed("consumer stopped")))
            }
            consumerName = created.name
            consumerSequence = 0
            consumersCreated += 1
            lastActivity = .now
            subscription = delivery
            return .success(delivery)
        } catch {
            await delivery.unsubscribe()
            return .failure(error)
        }
    }

    /// Delivers or drops one message; false means the consumer must be recreated.
    private func handle(_ message: NATSMessage) async -> Bool {
        lastActivity = .now
        if let status = message.status {
            guard status == 100 else { return false }
            if let reply = message.reply {
                try? await jetStream.client.publish(reply)
            }
            if let stalled = message.headers?["Nats-Consumer-Stalled"] {
                try? await jetStream.client.publish(stalled)
            }
            if let last = message.headers?["Nats-Last-Consumer"], let lastSequence = UInt64(last), lastSequence != consumerSequence {
                return false
            }
            return true
        }
        guard let reply = message.reply, let metadata = AckMetadata(replySubject: reply) else { return false }
        // Sequences come from the server: compare without arithmetic that could overflow.
        guard metadata.consumerSequence > consumerSequence, metadata.consumerSequence - consumerSequence == 1 else { return false }
        consumerSequence = metadata.consumerSequence
        guard metadata.streamSequence >= nextStreamSequence else { return true }
        guard metadata.streamSequence < UInt64.max else { return false }
        nextStreamSequence = metadata.streamSequence + 1
        output.yield(
            JetStreamMessage(
                subject: message.subject, streamSequence: metadata.streamSequence, headers: message.headers, payload: message.payload,
                pending: metadata.pending))
        return true
    }

    /// After a reconnect the consumer may be gone or may have sent into the gap: start over.
    private func watchEvents(_ events: AsyncStream<NATSConnectionEvent>) async {
        for await event in events {
            switch event {
            case .reconnected: await resetDelivery()
            case .closed: await stop()
            case .connected, .disconnected: break
            }
        }
    }

    /// Three missed heartbeats mean the consumer (or its server) is gone.
    private func watchHeartbeats() async {
        while !stopped {
            try? await Task.sleep(for: heartbeat)
            if subscription != nil, ContinuousClock.now - lastActivity > heartbeat * 3 {
                await resetDelivery()
            }
        }
    }

    private func resetDelivery() async {
        guard let current = subscription else { return }
        subscription = nil
        await current.unsubscribe()
    }

    private func deleteConsumer() async {
        guard let name = consumerName else { return }
        consumerName = nil
        let jetStream = self.jetStream
        let stream = self.stream
        Task {
            let _: DeletedConsumer? = try? await jetStream.api("CONSUMER.DELETE.\(stream).\(name)", body: nil as String?)
        }
    }

    private struct DeletedConsumer: Decodable {}
}
