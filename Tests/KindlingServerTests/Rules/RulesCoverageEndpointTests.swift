import Foundation
import KindlingCore
import KindlingServer
import KindlingTesting
import Testing

/// `/.inspect/coverage.json` and `/.inspect/coverage`: the rules coverage of a namespace, with
/// counts that are exactly the evaluations the requests made (counted here as they are made),
/// over REST and realtime alike; reset with the rules and by `DELETE`; a page with everything
/// escaped; readable by an admin or in emulator mode; 404 where coverage is off.
@Suite(.timeLimit(.minutes(2)))
struct RulesCoverageEndpointTests {
    static let admin = [("Authorization", "Bearer owner")]

    static func withServer(
        coverage: Bool = true, rules: String = RulesEnforcementTests.appRules, auth: AuthSettings? = nil,
        _ body: (KindlingServer, TestHTTPConnection) async throws -> Void
    ) async throws {
        try await KindlingTesting.withServer(label: "rules-coverage-tests") { configuration in
            configuration.rules = try RulesDocument.parse(rules)
            configuration.rulesCoverage = coverage
            if let auth { configuration.auth = auth }
        } _: { server in
            let http = try await TestHTTPConnection.connect(port: server.port)
            defer { http.close() }
            try await body(server, http)
        }
    }

    static func report(_ http: TestHTTPConnection, _ method: String = "GET", ns: String = "app") async throws -> JSONValue {
        let response = try await http.request(method, "/.inspect/coverage.json?ns=\(ns)", headers: admin)
        #expect(response.status == 200, "\(response.text)")
        return try response.json()
    }

    /// The node of `rule` whose text is `text` (the `occurrence`th, in text order).
    static func node(_ report: JSONValue, _ rule: String, _ text: String, occurrence: Int = 0) -> JSONValue? {
        guard case .array(let roots)? = report["rules"] else { return nil }
        var found: [JSONValue] = []
        func visit(_ node: JSONValue) {
            if node["text"]?.stringValue == text { found.append(node) }
            if case .array(let children)? = node["children"] { children.forEach(visit) }
        }
        for root in roots where root["rule"]?.stringValue == rule { visit(root) }
        guard occurrence < found.count else { return nil }
        return found[occurrence]
    }

    /// The whole rule `rule`.
    static func rule(_ report: JSONValue, _ rule: String) -> JSONValue? {
        guard case .array(let roots)? = report["rules"] else { return nil }
        return roots.first { $0["rule"]?.stringValue == rule }
    }

    static func count(_ node: JSONValue?) -> Int? { node?["count"]?.numberValue.map { Int($0) } }

    /// How many times `node` returned `value`.
    static func returned(_ node: JSONValue?, _ value: JSONValue) -> Int {
        guard case .array(let values)? = node?["values"] else { return 0 }
        return values.first { $0["value"] == value }?["count"]?.numberValue.map { Int($0) } ?? 0
    }

    /// What the test expects one expression to have done, counted as requests are made.
    struct Tally {
        var evaluations = 0
        var trues = 0
        var falses = 0

        mutating func add(_ outcome: Bool) {
            evaluations += 1
            if outcome { trues += 1 } else { falses += 1 }
        }

        func matches(_ node: JSONValue?) -> Bool {
            RulesCoverageEndpointTests.count(node) == evaluations && returned(node, .bool(true)) == trues && returned(node, .bool(false)) == falses
        }
    }

    @Test func countsAreTheEvaluationsTheRequestsMade() async throws {
        try await Self.withServer { server, http in
            let activities = "rules/activities/$uid/.read"
            var rule = Tally(), signedIn = Tally(), owner = Tally()
            // REST reads of alice's activities: by alice (allowed), by bob (denied at the second
            // operand), signed out (the first operand is false and `&&` stops there).
            for (uid, times) in [("alice", 3), ("bob", 2), (nil, 1)] as [(String?, Int)] {
                for _ in 0..<times {
                    let auth = uid.map { "&" + RulesEnforcementTests.restAuth($0) } ?? ""
                    let status = try await http.request("GET", "/activities/alice.json?ns=app" + auth).status
                    #expect(status == (uid == "alice" ? 200 : 401))
                    signedIn.add(uid != nil)
                    if uid != nil { owner.add(uid == "alice") }
                    rule.add(uid == "alice")
                }
            }
            // A realtime listen is decided by the same rules, and counts the same.
            let alice = try await TestClient.connect(port: server.port, namespace: "app")
            defer { Task { await alice.close() } }
            try await RulesEnforcementTests.signIn(alice, as: "alice")
            let listen = try await alice.request("q", RulesEnforcementTests.body(("p", .string("/activities/alice")), ("h", .string(""))))
            #expect(RulesEnforcementTests.status(listen) == "ok")
            signedIn.add(true)
            owner.add(true)
            rule.add(true)
            // An admin is not subject to the rules: nothing is evaluated for it.
            let seats = try await http.request("PUT", "/spots/lib.json?ns=app", headers: Self.admin, body: #"{"seats":2,"free":2}"#)
            #expect(seats.status == 200)
            // A student sets the free seats: `.write` is `auth != null`, then `.validate` checks
            // the number; `&&` stops at the first false operand.
            var write = Tally(), validate = Tally(), isNumber = Tally(), atLeastZero = Tally(), atMostSeats = Tally()
            for value in [1, 0, -1, 3, 2] {
                let status = try await http.request("PUT", "/spots/lib/free.json?ns=app&" + RulesEnforcementTests.restAuth("s1"), body: "\(value)")
                    .status
                write.add(true)
                isNumber.add(true)
                atLeastZero.add(value >= 0)
                if value >= 0 { atMostSeats.add(value <= 2) }
                validate.add(value >= 0 && value <= 2)
                #expect(status == (value >= 0 && value <= 2 ? 200 : 401))
            }

            let report = try await Self.report(http)
            #expect(report["namespace"]?.stringValue == "app")
            #expect(rule.matches(Self.node(report, activities, "auth != null && auth.uid === $uid")))
            #expect(signedIn.matches(Self.node(report, activities, "auth != null")))
            #expect(owner.matches(Self.node(report, activities, "auth.uid === $uid")))
            #expect(Self.count(Self.node(report, activities, "$uid")) == owner.evaluations)
            #expect(Self.returned(Self.node(report, activities, "$uid"), .string("alice")) == owner.evaluations)
            #expect(Self.returned(Self.node(report, activities, "auth.uid"), .string("bob")) == 2)
            #expect(Self.returned(Self.node(report, activities, "auth"), .null) == 1)
            let free = "rules/spots/$spot/free/"
            #expect(write.matches(Self.node(report, free + ".write", "auth != null")))
            #expect(validate.matches(Self.rule(report, free + ".validate")))
            #expect(isNumber.matches(Self.node(report, free + ".validate", "newData.isNumber()")))
            #expect(atLeastZero.matches(Self.node(report, free + ".validate", "newData.val() >= 0")))
            #expect(
                atMostSeats.matches(Self.node(report, free + ".validate", "newData.val() <= root.child('spots').child($spot).child('seats').val()")))
            let seatCount = Self.node(report, free + ".validate", "root.child('spots').child($spot).child('seats').val()")
            #expect(Self.count(seatCount) == atMostSeats.evaluations && Self.returned(seatCount, .number(2)) == atMostSeats.evaluations)
            // Rules no request reached count 0, and the totals say how much was evaluated.
            #expect(Self.count(Self.node(report, "rules/users/.write", "auth != null && (!data.exists() || auth.token.admin === true)")) == 0)
            let summary = try #require(report["summary"])
            #expect(try #require(summary["evaluated"]?.numberValue) < #require(summary["expressions"]?.numberValue))
            // Another namespace under the same rules has its own coverage.
            let other = try await Self.report(http, ns: "other")
            #expect(other["summary"]?["evaluated"] == .number(0))
        }
    }

    @Test func coverageStartsAgainWithNewRulesAndOnDelete() async throws {
        try await Self.withServer { server, http in
            #expect(try await http.request("GET", "/spots/x.json?ns=app").status == 200)
            #expect(Self.count(Self.node(try await Self.report(http), "rules/spots/$spot/.read", "true")) == 1)
            // DELETE answers the coverage it clears.
            let cleared = try await Self.report(http, "DELETE")
            #expect(Self.count(Self.node(cleared, "rules/spots/$spot/.read", "true")) == 1)
            #expect(Self.count(Self.node(try await Self.report(http), "rules/spots/$spot/.read", "true")) == 0)
            #expect(try await http.request("GET", "/spots/x.json?ns=app").status == 200)
            // New rules: their own expressions, from nothing.
            let rules = #"{"rules": {"spots": {".read": "auth == null"}}}"#
            #expect(try await http.request("PUT", "/.settings/rules.json?ns=app", headers: Self.admin, body: rules).status == 200)
            let fresh = try await Self.report(http)
            #expect(Self.node(fresh, "rules/spots/$spot/.read", "true") == nil)
            #expect(Self.count(Self.node(fresh, "rules/spots/.read", "auth == null")) == 0)
            #expect(try await http.request("GET", "/spots/x.json?ns=app").status == 200)
            let after = try await Self.report(http)
            #expect(Self.returned(Self.node(after, "rules/spots/.read", "auth == null"), .bool(true)) == 1)
            #expect(Self.node(after, "rules/spots/.read", "auth == null")?["location-start"] == .string("0:31"))
            // The server's rules reloaded (`--rules` edited): namespaces on them start again.
            #expect(try await http.request("GET", "/spots/x.json?ns=served").status == 200)
            #expect(Self.count(Self.node(try await Self.report(http, ns: "served"), "rules/spots/$spot/.read", "true")) == 1)
            server.replaceRules(try RulesDocument.parse(#"{"rules": {".read": "auth != null"}}"#))
            let reloaded = try await Self.report(http, ns: "served")
            #expect(Self.rule(reloaded, "rules/spots/$spot/.read") == nil)
            #expect(Self.count(Self.rule(reloaded, "rules/.read")) == 0)
            // The namespace with rules of its own keeps them, and its coverage.
            #expect(Self.returned(Self.node(try await Self.report(http), "rules/spots/.read", "auth == null"), .bool(true)) == 1)
        }
    }

    @Test func thePageShowsTheRulesWithEverythingEscaped() async throws {
        let rules = #"{"rules": {"$k": {".read": "auth.uid != '</span><script>x</script>' && $k != '&amp;'"}}}"#
        try await Self.withServer(rules: rules) { _, http in
            let hostile = "\"><img src=x onerror=alert(1)>"
            let auth = RulesEnforcementTests.unsignedToken(hostile).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            #expect(try await http.request("GET", "/a.json?ns=app&auth=" + auth).status == 200)
            let page = try await http.request("GET", "/.inspect/coverage?ns=app", headers: Self.admin)
            #expect(page.status == 200)
            #expect(page.header("content-type") == "text/html; charset=utf-8")
            #expect(page.header("content-security-policy")?.contains("default-src 'none'") == true)
            let html = page.text
            #expect(html.hasPrefix("<!doctype html>"))
            #expect(!html.contains("<script") && !html.contains("<img") && !html.contains("</span><script"))
            #expect(html.contains("&lt;/span&gt;&lt;script&gt;x&lt;/script&gt;"))
            #expect(html.contains("&amp;amp;"))
            // The value the rule saw, in an expression's tooltip, escaped for the attribute.
            #expect(html.contains("&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"))
            // Every expression is a span, and the page says how much was evaluated.
            let spans = html.components(separatedBy: "<span class=\"e ").count - 1
            #expect(spans == 3 + 8, "the legend's three and one per expression")
            #expect(html.contains("expressions evaluated"))
            #expect(!html.contains("class=\"e miss\" title"), "one read evaluated every expression")
        }
    }

    @Test func readableByAnAdminOrInEmulatorModeAndOnlyWhereRecorded() async throws {
        // Emulator mode (loopback, no credentials configured): open, as on the emulator.
        try await Self.withServer { _, http in
            let open = try await http.request("GET", "/.inspect/coverage.json?ns=app")
            #expect(open.status == 200)
            #expect(try await http.request("GET", "/.inspect/coverage?ns=app").status == 200)
            #expect(try await http.request("POST", "/.inspect/coverage.json?ns=app", body: "{}").status == 405)
            #expect(try await http.request("DELETE", "/.inspect/coverage?ns=app").status == 405)
        }
        // With an admin secret: the admin only.
        try await Self.withServer(auth: AuthSettings(adminSecrets: ["coverage-admin-secret"])) { _, http in
            let anonymous = try await http.request("GET", "/.inspect/coverage.json?ns=app")
            #expect(anonymous.status == 401)
            #expect(try await http.request("DELETE", "/.inspect/coverage.json?ns=app").status == 401)
            #expect(try await http.request("GET", "/.inspect/coverage?ns=app&auth=coverage-admin-secret").status == 200)
            #expect(
                try await http.request("GET", "/.inspect/coverage.json?ns=app", headers: [("Authorization", "Bearer coverage-admin-secret")]).status
                    == 200)
        }
        // Not recorded: says how to turn it on.
        try await Self.withServer(coverage: false) { _, http in
            let off = try await http.request("GET", "/.inspect/coverage.json?ns=app", headers: Self.admin)
            #expect(off.status == 404)
            #expect(off.text.contains("--rules-coverage"))
        }
    }
}
