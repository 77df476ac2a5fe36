import ArgumentParser
import KindlingCore

/// `kindling-bench rules`: what security rules cost per request, in the core, no I/O: a
/// realistic rules document ten levels deep (an organisation's teams, projects and tasks, with
/// membership looked up through `root`, owner checks, a closed schema and a regex), decided the
/// way the server decides each write: from the old tree and the write (the new tree is read only
/// where a rule reads `newData`), every rule on the path and every validate below it.
struct RulesBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rules",
        abstract: "Security rule evaluation per write and per listen on a ten-level rules document."
    )

    @Option(help: "Decisions per measurement.")
    var repeats = 200_000

    @Option(help: "Tasks in the database (spread over projects of 100).")
    var tasks = 100_000

    @Flag(
        help: ArgumentHelp(
            "Record rules coverage, as kindling serve --rules-coverage does: the rules loaded for it, every decision counted.",
            discussion: "Without it, decisions are made as a server not recording coverage makes them (its coverage is nil)."))
    var coverage = false

    func validate() throws {
        guard (1...100_000_000).contains(repeats) else { throw ValidationError("--repeats must be between 1 and 100000000.") }
        guard (100...10_000_000).contains(tasks) else { throw ValidationError("--tasks must be between 100 and 10000000.") }
    }

    static let document = """
        {
          "rules": {
            ".read": false,
            "orgs": {
              "$org": {
                ".read": "auth != null && root.child('members').child($org).child(auth.uid).exists()",
                "teams": {
                  "$team": {
                    ".write": "auth != null && root.child('members').child($org).child(auth.uid).val() === 'admin'",
                    "projects": {
                      "$project": {
                        "tasks": {
                          "$task": {
                            ".write": "auth != null && (!data.exists() || data.child('owner').val() === auth.uid)",
                            ".validate": "newData.hasChildren(['title', 'owner'])",
                            "title": { ".validate": "newData.isString() && newData.val().length > 0 && newData.val().length <= 200" },
                            "owner": { ".validate": "newData.val() === auth.uid" },
                            "state": { ".validate": "newData.isString() && newData.val().matches(/^(open|doing|done)$/)" },
                            "estimate": { ".validate": "newData.isNumber() && newData.val() >= 0" },
                            "$other": { ".validate": false }
                          }
                        }
                      }
                    }
                  }
                }
              }
            },
            "members": { "$org": { "$uid": { ".read": "auth != null && auth.uid === $uid" } } }
          }
        }
        """

    mutating func run() throws {
        let rules = try RulesDocument.parse(Self.document, coverage: coverage)
        var recorded = coverage ? RulesCoverage(rules) : nil
        var database = DatabaseState<Int>()
        let clock = ServerValues(timestamp: 0)
        var projects: [JSONMember] = []
        for project in 0..<max(1, tasks / 100) {
            var items: [JSONMember] = []
            for task in 0..<100 {
                items.append(
                    JSONMember(
                        "k\(task)",
                        .object([
                            JSONMember("title", .string("task \(task)")), JSONMember("owner", .string("u\(task % 10)")),
                            JSONMember("state", .string("open")), JSONMember("estimate", .number(Double(task))),
                        ])))
            }
            projects.append(JSONMember("p\(project)", .object([JSONMember("tasks", .object(items))])))
        }
        _ = database.commit(try database.tree.resolveSet(Path("orgs/o1/teams/t1/projects"), .object(projects), serverValues: clock))
        _ = database.commit(
            try database.tree.resolveSet(Path("members/o1"), .object((0..<10).map { JSONMember("u\($0)", .string("member")) }), serverValues: clock))
        let auth = JSONValue.object([
            JSONMember("uid", .string("u3")), JSONMember("provider", .string("custom")),
            JSONMember("token", .object([JSONMember("sub", .string("u3"))])),
        ])
        let tree = database.tree
        let projectCount = max(1, tasks / 100)

        let fieldWrites = try (0..<1024).map { index in
            try tree.resolveSet(
                Path("orgs/o1/teams/t1/projects/p\(index % projectCount)/tasks/k\(3 + 10 * (index % 10))/state"),
                .string(index % 2 == 0 ? "doing" : "done"), serverValues: clock)
        }
        let recordWrites = try (0..<1024).map { index in
            try tree.resolveSet(
                Path("orgs/o1/teams/t1/projects/p\(index % projectCount)/tasks/n\(index)"),
                .object([
                    JSONMember("title", .string("new task \(index)")), JSONMember("owner", .string("u3")),
                    JSONMember("state", .string("open")), JSONMember("estimate", .number(3)),
                ]), serverValues: clock)
        }
        var allowed = 0
        for (name, writes) in [
            ("set of one field of one's own task (10 levels, 3 rules + 3 validates)", fieldWrites),
            ("set of a new task record (4 fields, 7 validates)", recordWrites),
        ] {
            let decide = ContinuousClock().measure {
                for index in 0..<repeats where rules.canWrite(writes[index & 1023], auth: auth, old: tree.root, now: 0, coverage: &recorded).allowed {
                    allowed &+= 1
                }
            }
            report("rules, \(name)", repeats, decide)
        }
        // Another member, not the task's owner nor an admin: every rule on the path runs, false.
        let stranger = JSONValue.object([JSONMember("uid", .string("u4")), JSONMember("provider", .string("custom"))])
        let denied = ContinuousClock().measure {
            for index in 0..<repeats
            where !rules.canWrite(fieldWrites[index & 1023], auth: stranger, old: tree.root, now: 0, coverage: &recorded).allowed {
                allowed &+= 1
            }
        }
        report("rules, the field write by another member (denied)", repeats, denied)
        let readPaths = try (0..<1024).map { try Path("orgs/o1/teams/t1/projects/p\($0 % projectCount)/tasks") }
        let reads = ContinuousClock().measure {
            for index in 0..<repeats
            where rules.canRead(readPaths[index & 1023], auth: auth, root: tree.root, query: nil, now: 0, coverage: &recorded).allowed {
                allowed &+= 1
            }
        }
        report("rules, listen to a project's tasks (membership through root)", repeats, reads)
        var built = 0
        let buildTrees = ContinuousClock().measure {
            for index in 0..<repeats {
                var after = tree
                after.apply(fieldWrites[index & 1023])
                if !after.root.isEmpty { built &+= 1 }
            }
        }
        report("for scale: building the whole tree after the field write (what the rules no longer do)", repeats, buildTrees)
        var commitState = database
        let commits = ContinuousClock().measure {
            for index in 0..<repeats { _ = commitState.commit(fieldWrites[index & 1023]) }
        }
        report("for scale: committing the field write to the tree (no listeners)", repeats, commits)
        if let summary = recorded?.summary {
            print(
                "rules coverage: \(summary.evaluated) of \(summary.expressions) expressions evaluated, \(summary.outcomesSeen) of \(2 * summary.booleans) outcomes seen"
            )
        }
        guard allowed == 4 * repeats, built == repeats else {
            throw ValidationError("expected every decision to allow (the stranger's to deny); \(allowed) of \(4 * repeats) did")
        }
    }

    private func report(_ name: String, _ count: Int, _ duration: Duration) {
        print("\(name): \(count) in \(format(duration)) = \(rate(count, duration)) ops/s, \(format(duration / count)) each")
    }
}
