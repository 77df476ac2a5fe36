import ArgumentParser
import Foundation
import Testing

@testable import kindling

/// The client commands' `--url` and `--ns`: the database URL the SDKs take works unchanged.
struct RemoteTargetTests {
    @Test func theNamespaceComesFromTheQuery() throws {
        let target = try RemoteTarget(url: "http://127.0.0.1:9000?ns=demo", namespace: nil)
        #expect(target.server == "http://127.0.0.1:9000")
        #expect(target.namespace == "demo")
        #expect(try target.restURL(path: "a/b").absoluteString == "http://127.0.0.1:9000/a/b.json?ns=demo")
        #expect(try target.restURL(path: "/").absoluteString == "http://127.0.0.1:9000/.json?ns=demo")
        #expect(target.databaseURL == "http://127.0.0.1:9000?ns=demo")
        // A trailing slash, and other parameters, are not part of the server's address.
        let slashed = try RemoteTarget(url: "http://127.0.0.1:9000/?print=pretty&ns=demo", namespace: nil)
        #expect(slashed.server == "http://127.0.0.1:9000" && slashed.namespace == "demo")
    }

    @Test func theNamespaceComesFromTheHostNameAsTheServerReadsIt() throws {
        let hosted = try RemoteTarget(url: "https://My-App.example.com", namespace: nil)
        #expect(hosted.namespace == "my-app")
        #expect(hosted.server == "https://My-App.example.com")
        #expect(try RemoteTarget(url: "http://demo.localhost:9000", namespace: nil).namespace == "demo")
        // An address or a one-label name names no namespace: --ns, else the default.
        #expect(try RemoteTarget(url: "http://127.0.0.1:9000", namespace: nil).namespace == "kindling")
        #expect(try RemoteTarget(url: "http://localhost:9000", namespace: "chat").namespace == "chat")
        #expect(try RemoteTarget(url: "http://[::1]:9000", namespace: "chat").namespace == "chat")
        // ?ns= wins over the host name, as on the server.
        #expect(try RemoteTarget(url: "https://a.example.com?ns=b", namespace: nil).namespace == "b")
        // A path prefix (a proxy's) stays part of the server's address.
        let proxied = try RemoteTarget(url: "https://db.example.com/kindling/", namespace: nil)
        #expect(try proxied.restURL(path: "x").absoluteString == "https://db.example.com/kindling/x.json?ns=db")
    }

    @Test func aNamespaceOptionThatDisagreesIsAnError() throws {
        #expect(try RemoteTarget(url: "http://127.0.0.1:9000?ns=demo", namespace: "demo").namespace == "demo")
        let query = #expect(throws: ValidationError.self) { try RemoteTarget(url: "http://127.0.0.1:9000?ns=demo", namespace: "other") }
        #expect(query?.description.contains("--ns other disagrees") == true)
        #expect(query?.description.contains("?ns=demo") == true)
        let host = #expect(throws: ValidationError.self) { try RemoteTarget(url: "https://demo.example.com", namespace: "other") }
        #expect(host?.description.contains("its host name demo.example.com") == true)
    }

    @Test func badURLsAndNamesAreRefusedBeforeAnyRequest() {
        #expect(throws: ValidationError.self) { try RemoteTarget(url: "not a url", namespace: nil) }
        #expect(throws: ValidationError.self) { try RemoteTarget(url: "ftp://127.0.0.1:9000", namespace: nil) }
        #expect(throws: ValidationError.self) { try RemoteTarget(url: "http://127.0.0.1:9000?ns=Bad_Name", namespace: nil) }
        #expect(throws: ValidationError.self) { try RemoteTarget(url: "http://127.0.0.1:9000", namespace: "a/b") }
    }
}
