import Testing

@testable import kindling

/// What `kindling serve` prints: the exact settings that point each SDK at this server.
struct ServeBannerTests {
    func banner(host: String = "127.0.0.1", scheme: String = "http", data: String? = "/srv/kindling-data") -> ServeBanner {
        ServeBanner(host: host, port: 9000, scheme: scheme, namespace: "demo", dataDirectory: data, fsync: "always", security: "Rules: none")
    }

    @Test func plainHTTPNamesEverySDKsSetting() {
        #expect(
            banner().text == """
                Kindling is listening on 127.0.0.1:9000
                  realtime: ws://127.0.0.1:9000/.ws?v=5&ns=demo
                  rest:     http://127.0.0.1:9000/<path>.json?ns=demo
                  http:     http://127.0.0.1:9000/.inspect/databases.json
                Point an SDK at it (namespace demo here; any other name works the same, e.g. ?ns=my-app):
                  databaseURL: http://127.0.0.1:9000?ns=demo
                  JS:          initializeApp({ databaseURL: "http://127.0.0.1:9000?ns=demo" }), or connectDatabaseEmulator(getDatabase(app), "127.0.0.1", 9000)
                  Admin SDKs:  FIREBASE_DATABASE_EMULATOR_HOST=127.0.0.1:9000 with databaseURL https://demo.firebaseio.com
                  iOS:         Database.database(url: "http://127.0.0.1:9000?ns=demo").useEmulator(withHost: "127.0.0.1", port: 9000)
                  Android:     FirebaseDatabase.getInstance("http://10.0.2.2:9000?ns=demo").useEmulator("10.0.2.2", 9000) (10.0.2.2 is this machine, seen from the Android emulator)
                  Swift SDK:   try Database(url: "http://127.0.0.1:9000?ns=demo") (KindlingClient)
                Data: /srv/kindling-data (fsync always)
                Rules: none
                """)
    }

    @Test func tlsSwitchesTheSchemesAndDropsTheEmulatorSettings() {
        let text = banner(scheme: "https").text
        #expect(text.contains("  realtime: wss://127.0.0.1:9000/.ws?v=5&ns=demo\n"))
        #expect(text.contains("  databaseURL: https://127.0.0.1:9000?ns=demo\n"))
        #expect(text.contains(#"  Swift SDK:   try Database(url: "https://127.0.0.1:9000?ns=demo")"#))
        #expect(!text.contains("FIREBASE_DATABASE_EMULATOR_HOST"))
        #expect(!text.contains("http://"))
    }

    @Test func wildcardAndIPv6AddressesBecomeAddressesClientsCanUse() {
        let any = banner(host: "0.0.0.0").text
        #expect(any.hasPrefix("Kindling is listening on 0.0.0.0:9000\n"))
        #expect(any.contains("  databaseURL: http://127.0.0.1:9000?ns=demo\n"))
        let six = banner(host: "::1").text
        #expect(six.hasPrefix("Kindling is listening on [::1]:9000\n"))
        #expect(six.contains("FIREBASE_DATABASE_EMULATOR_HOST=[::1]:9000 "))
        let named = banner(host: "db.internal").text
        #expect(named.contains(#"FirebaseDatabase.getInstance("http://db.internal:9000?ns=demo").useEmulator("db.internal", 9000)"# + "\n"))
    }

    @Test func theDataDirectoryIsShownAbsoluteOrAsMemory() {
        #expect(banner(data: nil).text.contains("\nData: in memory only\n"))
        let absolute = ServeBanner.absolute("./d/../kindling-data")
        #expect(absolute.hasPrefix("/") && absolute.hasSuffix("/kindling-data") && !absolute.contains("/./") && !absolute.contains(".."))
    }
}
