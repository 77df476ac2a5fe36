import Crypto
import Foundation

/// Large values (snapshots) in a JetStream stream, split into chunks under one id and described by
/// a rolled-up meta record, so readers never see half an object: the meta record is written only
/// after every chunk was acknowledged, and the old chunks are purged only after it.
public struct ObjectStore: Sendable {
    /// The bucket name.
    public let bucket: String
    private let chunkSize: Int
    private let jetStream: JetStream
    private var streamName: String { "OBJ_\(bucket)" }

    init(bucket: String, chunkSize: Int, jetStream: JetStream) {
        self.bucket = bucket
        self.chunkSize = chunkSize
        self.jetStream = jetStream
    }

    /// Stores `bytes` under `name`, replacing any previous object of that name.
    @discardableResult
    public func put(_ name: String, _ bytes: [UInt8]) async throws(JetStreamError) -> ObjectInfo {
        let metaSubject = try metaSubject(name)
        let previous = try await info(name)
        let nuid = NATSClient.randomToken()
        let chunkSubject = "$O.\(bucket).C.\(nuid)"
        var digest = SHA256()
        var chunks: UInt64 = 0
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + chunkSize, bytes.count)
            let chunk = Array(bytes[offset..<end])
            digest.update(data: chunk)
            do {
                _ = try await jetStream.publish(chunkSubject, payload: chunk)
            } catch {
                try? await jetStream.purgeStream(streamName, subject: chunkSubject)
                throw error
            }
            chunks += 1
            offset = end
        }
        let info = ObjectInfo(
            name: name, bucket: bucket, nuid: nuid, size: UInt64(bytes.count), chunks: chunks, digest: Self.digestString(Array(digest.finalize())),
            modified: Self.now(), deleted: false)
        try await writeMeta(info, subject: metaSubject)
        if let previous, !previous.nuid.isEmpty {
            try? await jetStream.purgeStream(streamName, subject: "$O.\(bucket).C.\(previous.nuid)")
        }
        return info
    }

    /// The object's bytes, nil when there is no such object (or it was deleted). Throws
    /// `objectCorrupt` when the chunks do not add up to the recorded size and digest.
    public func get(_ name: String) async throws(JetStreamError) -> [UInt8]? {
        // A put that replaces the object purges the old chunks, perhaps while they are read:
        // then the read starts again from the new meta record.
        for _ in 0..<Self.readAttempts {
            guard let info = try await info(name), !info.deleted else { return nil }
            if let bytes = try await read(info) { return bytes }
        }
        throw .objectCorrupt("\(name) was replaced \(Self.readAttempts) times while it was read")
    }

    /// Reads of an object that keeps being replaced before `get` gives up.
    static let readAttempts = 8
    /// How often a read checks whether its object was replaced under it (its chunks then stop
    /// arriving, as they are purged).
    static let replacementCheck: Duration = .milliseconds(250)

    /// The bytes of the object `info` describes; nil when it was replaced (its chunks purged)
    /// before they were all read.
    private func read(_ info: ObjectInfo) async throws(JetStreamError) -> [UInt8]? {
        var bytes: [UInt8] = []
        if info.chunks > 0 {
            let chunkSubject = "$O.\(bucket).C.\(info.nuid)"
            let last: StoredMessage
            do {
                last = try await jetStream.lastMessage(stream: streamName, subject: chunkSubject)
            } catch {
                if error.apiError?.errCode == JetStreamAPIError.noMessageFound { return nil }
                throw error
            }
            let consumer = try await jetStream.orderedConsumer(stream: streamName, startSequence: 1, filterSubject: chunkSubject)
            let size = info.size
            let read = await withTaskGroup(of: [UInt8]?.self) { group -> [UInt8]? in
                group.addTask {
                    var bytes: [UInt8] = []
                    bytes.reserveCapacity(Int(min(size, 256 * 1024 * 1024)))
                    for await chunk in consumer {
                        guard UInt64(bytes.count + chunk.payload.count) <= size else { break }
                        bytes += chunk.payload
                        if chunk.streamSequence >= last.sequence { break }
                    }
                    return Task.isCancelled ? nil : bytes
                }
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: Self.replacementCheck)
                        guard let now = try? await self.info(info.name) else { continue }
                        if now.nuid != info.nuid { return nil }
                    }
                    return nil
                }
                let first = await group.next() ?? nil
                group.cancelAll()
                return first
            }
            await consumer.stop()
            guard let read else { return nil }
            bytes = read
        }
        guard UInt64(bytes.count) == info.size, Self.digestString(Array(SHA256.hash(data: bytes))) == info.digest else {
            throw .objectCorrupt("\(info.name): read \(bytes.count) of \(info.size) bytes or digest mismatch")
        }
        return bytes
    }

    /// The object's meta record (deleted objects included, with `deleted` set), nil when none.
    public func info(_ name: String) async throws(JetStreamError) -> ObjectInfo? {
        let stored: StoredMessage
        do {
            stored = try await jetStream.lastMessage(stream: streamName, subject: try metaSubject(name))
        } catch {
            if error.apiError?.errCode == JetStreamAPIError.noMessageFound { return nil }
            throw error
        }
        do {
            return try JSONDecoder().decode(ObjectInfo.self, from: Data(stored.payload))
        } catch {
            throw .malformedResponse("object meta for \(name): \(error)")
        }
    }

    /// Deletes the object: a deleted meta record replaces the old one, then its chunks are purged.
    public func delete(_ name: String) async throws(JetStreamError) {
        guard let info = try await info(name), !info.deleted else { return }
        let marker = ObjectInfo(name: name, bucket: bucket, nuid: "", size: 0, chunks: 0, digest: "", modified: Self.now(), deleted: true)
        try await writeMeta(marker, subject: try metaSubject(name))
        try await jetStream.purgeStream(streamName, subject: "$O.\(bucket).C.\(info.nuid)")
    }

    private func writeMeta(_ info: ObjectInfo, subject: String) async throws(JetStreamError) {
        let payload: Data
        do {
            payload = try JSONEncoder().encode(info)
        } catch {
            throw .invalidArgument("\(error)")
        }
        var headers = NATSHeaders()
        headers.set("Nats-Rollup", "sub")
        _ = try await jetStream.publish(subject, payload: Array(payload), headers: headers)
    }

    private func metaSubject(_ name: String) throws(JetStreamError) -> String {
        guard !name.isEmpty else { throw .invalidArgument("empty object name") }
        return "$O.\(bucket).M.\(Self.base64URL(Array(name.utf8)))"
    }

    private static func digestString(_ digest: [UInt8]) -> String {
        "SHA-256=\(base64URL(digest))"
    }

    private static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }

    private static func now() -> String {
        ISO8601DateFormatter().string(from: Date())
    }
}
