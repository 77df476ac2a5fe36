import KindlingProtocol
import Testing

/// The namespace a host names, as the server picks it for a request and the SDK for a URL.
struct NamespaceNameTests {
    @Test func theFirstLabelOfANameWithTwoOrMoreLabelsLowercased() {
        #expect(NamespaceName.named(byHost: "mydb.localhost:9000") == "mydb")
        #expect(NamespaceName.named(byHost: "MyDB.example.com") == "mydb")
        #expect(NamespaceName.named(byHost: "study-spots.localhost") == "study-spots")
        #expect(NamespaceName.named(byHost: "\u{212A}db.example.com") == nil)  // the Kelvin sign is not a `k`
    }

    @Test func noneForAddressesOneLabelNamesAndInvalidLabels() {
        #expect(NamespaceName.named(byHost: "127.0.0.1:9000") == nil)
        #expect(NamespaceName.named(byHost: "[::1]:9000") == nil)
        #expect(NamespaceName.named(byHost: "localhost") == nil)
        #expect(NamespaceName.named(byHost: "my_pc.lan") == nil)
        #expect(NamespaceName.named(byHost: "-x.localhost") == nil)
    }
}
