import Testing

@testable import KindlingServer

/// Backup file names: written and read back, sorted as their times, and nothing else taken for one.
struct BackupFileNameTests {
    @Test func timesAreUTCInISO8601BasicFormWithMilliseconds() {
        #expect(BackupTime.text(0) == "19700101T000000.000Z")
        // 2024-05-01T12:34:56.789Z (a leap year, after February).
        #expect(BackupTime.text(1_714_566_896_789) == "20240501T123456.789Z")
        #expect(BackupTime.text(951_782_400_000) == "20000229T000000.000Z")
        #expect(BackupTime.text(BackupTime.latest) == "99991231T235959.999Z")
        #expect(BackupTime.text(-5) == "19700101T000000.000Z")
        for time: Int64 in [0, 1, 86_399_999, 951_782_400_000, 1_714_566_896_789, 4_102_444_800_000, BackupTime.latest] {
            #expect(BackupTime.parse(Substring(BackupTime.text(time))) == time)
        }
        for bad in ["20240230T000000.000Z", "20241301T000000.000Z", "20240501T240000.000Z", "20240501 123456.789Z", "2024-05-01T12:34:56Z", ""] {
            #expect(BackupTime.parse(Substring(bad)) == nil, "\(bad)")
        }
    }

    @Test func namesReadBackAndSortAsTheirTimes() throws {
        let data = BackupFileName(time: 1_714_566_896_789, namespace: "chat-app", kind: .data)
        #expect(data.description == "20240501T123456.789Z_chat-app_data.json.gz")
        #expect(data.sibling(.rules).description == "20240501T123456.789Z_chat-app_rules.json")
        #expect(BackupFileName(parsing: data.description) == data)
        #expect(BackupFileName(parsing: data.sibling(.rules).description) == data.sibling(.rules))
        let temporary = try #require(BackupFileName(parsing: data.description + ".tmp"))
        #expect(temporary.isTemporary && temporary.time == data.time && temporary.kind == .data)
        let earlier = BackupFileName(time: 999_999_999_999, namespace: "chat-app", kind: .data)
        #expect(earlier.description < data.description)
        for other in [
            "kindling.lock", "20240501T123456.789Z_chat-app_data.json", "20240501T123456.789Z__data.json.gz", "x_chat_data.json.gz",
            "20240501T123456.789Z_a_b_data.json.gz",
        ] {
            #expect(BackupFileName(parsing: other) == nil, "\(other)")
        }
    }

    @Test func retentionKeepsTheNewestAndClearsWhatAKilledBackupLeft() {
        func name(_ time: Int64, _ namespace: String = "a", kind: BackupFileName.Kind = .data, temporary: Bool = false) -> BackupFileName {
            BackupFileName(time: time, namespace: namespace, kind: kind, isTemporary: temporary)
        }
        let names = [
            name(1), name(1, kind: .rules), name(2), name(2, kind: .rules), name(3), name(3, kind: .rules),
            // A process died between a backup's rules and its data, then one mid-data.
            name(4, kind: .rules), name(5, kind: .rules), name(5, temporary: true),
            name(6), name(6, kind: .rules),
            // Another namespace's files are not this one's to delete.
            name(1, "b"), name(1, "b", kind: .rules), name(7, "b", temporary: true),
        ]
        let deleted = BackupRetention(keep: 2).deletions(among: names, namespace: "a")
        #expect(
            Set(deleted.map(\.description))
                == Set(
                    [
                        name(5, temporary: true), name(1), name(2), name(1, kind: .rules), name(2, kind: .rules), name(4, kind: .rules),
                        name(5, kind: .rules),
                    ].map(\.description)))
        // A rules file newer than every data file (its data still being written) stays.
        let pending = [name(1), name(1, kind: .rules), name(2, kind: .rules)]
        #expect(BackupRetention(keep: 1).deletions(among: pending, namespace: "a").isEmpty)
        #expect(BackupRetention(keep: 48).deletions(among: names, namespace: "b").map(\.description) == [name(7, "b", temporary: true).description])
    }
}
