import NATSClient
import NATSTesting
import Testing

@Suite(.timeLimit(.minutes(1))) struct ObjectStoreTests {
    @Test func storesReadsReplacesAndDeletesAFewMegabytes() async throws {
        try await withNATSServer { server in
            let client = try await NATSClient.connect([server.url])
            let js = JetStream(client: client, timeout: .seconds(5))
            let store = try await js.createObjectStore(ObjectStoreConfig(bucket: "snapshots"))
            var generator = SystemRandomNumberGenerator()
            let bytes = (0..<(3 * 1024 * 1024 + 123)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let info = try await store.put("ns/1.snapshot", bytes)
            #expect(info.size == UInt64(bytes.count) && info.chunks == 25 && info.digest.hasPrefix("SHA-256="))
            #expect(try await store.get("ns/1.snapshot") == bytes)
            let smaller = Array(bytes.prefix(200_000))
            let replaced = try await store.put("ns/1.snapshot", smaller)
            #expect(replaced.chunks == 2 && replaced.nuid != info.nuid)
            #expect(try await store.get("ns/1.snapshot") == smaller)
            #expect(try await js.streamInfo("OBJ_snapshots").state.messages == 2 + 1)
            try await store.put("empty", [])
            #expect(try await store.get("empty") == [])
            try await store.delete("ns/1.snapshot")
            #expect(try await store.get("ns/1.snapshot") == nil)
            #expect(try await store.info("ns/1.snapshot")?.deleted == true)
            #expect(try await store.get("never") == nil)
            // The digest other NATS clients check: SHA-256 of "abc" (FIPS 180-4), URL-safe base64.
            let abc = try await store.put("abc", Array("abc".utf8))
            #expect(abc.digest == "SHA-256=ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0=")
            #expect(try await store.get("abc") == Array("abc".utf8))
            await client.close()
        }
    }
}
