import Testing

@testable import KindlingServer

/// The scheduler's decisions, on times handed to it: no clock, no waiting.
struct BackupScheduleTests {
    static let minute: Int64 = 60_000
    static let hour: Int64 = 3_600_000

    @Test func withNoBackupYetTheFirstIsDueOneIntervalAfterTheStart() {
        var schedule = BackupSchedule(interval: Self.hour, now: 1_000, newestBackup: nil)
        #expect(schedule.decide(now: 1_000) == .wait(until: 1_000 + Self.hour))
        #expect(schedule.decide(now: 1_000 + Self.hour) == .backUp)
        #expect(schedule.state == .running(started: 1_000 + Self.hour))
        // While it runs, nothing else starts.
        #expect(schedule.decide(now: 2_000 + Self.hour) == .wait(until: 1_000 + 2 * Self.hour))
    }

    @Test func aRestartWaitsForTheIntervalAfterTheNewestBackupOnDisk() {
        let newest: Int64 = 10 * Self.hour
        var schedule = BackupSchedule(interval: Self.hour, now: newest + 20 * Self.minute, newestBackup: newest)
        #expect(schedule.decide(now: newest + 20 * Self.minute) == .wait(until: newest + Self.hour))
        #expect(schedule.decide(now: newest + Self.hour - 1) == .wait(until: newest + Self.hour))
        #expect(schedule.decide(now: newest + Self.hour) == .backUp)
        // An overdue one is due at once.
        var overdue = BackupSchedule(interval: Self.hour, now: newest + 5 * Self.hour, newestBackup: newest)
        #expect(overdue.decide(now: newest + 5 * Self.hour) == .backUp)
    }

    @Test func theNextBackupIsDueOneIntervalAfterTheLastStarted() {
        var schedule = BackupSchedule(interval: Self.hour, now: 0, newestBackup: -Self.hour)
        #expect(schedule.decide(now: 0) == .backUp)
        schedule.finished(now: 5 * Self.minute, succeeded: true)
        #expect(schedule.state == .waiting(due: Self.hour))
        #expect(schedule.decide(now: 30 * Self.minute) == .wait(until: Self.hour))
        #expect(schedule.decide(now: Self.hour) == .backUp)
    }

    @Test func aBackupLongerThanTheIntervalIsFollowedAtOnce() {
        var schedule = BackupSchedule(interval: Self.hour, now: 0, newestBackup: -Self.hour)
        #expect(schedule.decide(now: 0) == .backUp)
        schedule.finished(now: 90 * Self.minute, succeeded: true)
        #expect(schedule.state == .waiting(due: 90 * Self.minute))
        #expect(schedule.decide(now: 90 * Self.minute) == .backUp)
    }

    @Test func aFailedBackupIsRetriedSoonerThanADailyInterval() {
        let day = 24 * Self.hour
        var schedule = BackupSchedule(interval: day, now: 0, newestBackup: -day)
        #expect(schedule.decide(now: 0) == .backUp)
        schedule.finished(now: Self.minute, succeeded: false)
        #expect(schedule.state == .waiting(due: Self.minute + BackupSchedule.defaultRetryDelay))
        // With an interval shorter than the retry delay, the interval.
        var short = BackupSchedule(interval: 2 * Self.minute, now: 0, newestBackup: -2 * Self.minute)
        #expect(short.decide(now: 0) == .backUp)
        short.finished(now: 1_000, succeeded: false)
        #expect(short.state == .waiting(due: 1_000 + 2 * Self.minute))
    }

    @Test func aClockSetBackIsNotWaitedOut() {
        // The newest backup is named by a time ahead of the clock now.
        let schedule = BackupSchedule(interval: Self.hour, now: 0, newestBackup: 100 * Self.hour)
        #expect(schedule.state == .waiting(due: Self.hour))
        var running = BackupSchedule(interval: Self.hour, now: 50 * Self.hour, newestBackup: 49 * Self.hour)
        #expect(running.decide(now: 50 * Self.hour) == .backUp)
        running.finished(now: 50 * Self.hour, succeeded: true)
        // The clock goes back ten hours: the next is an interval from now, not eleven hours.
        #expect(running.decide(now: 40 * Self.hour) == .wait(until: 41 * Self.hour))
    }

    @Test func stoppedMeansNoMoreBackups() {
        var schedule = BackupSchedule(interval: Self.hour, now: 0, newestBackup: nil)
        schedule.stop()
        #expect(schedule.decide(now: 10 * Self.hour) == .stop)
        schedule.finished(now: 10 * Self.hour, succeeded: true)
        #expect(schedule.state == .stopped)
    }

    @Test func timesNearTheLimitsSaturate() {
        var schedule = BackupSchedule(interval: Self.hour, now: Int64.max - 10, newestBackup: Int64.max - 5)
        #expect(schedule.decide(now: Int64.max - 10) == .wait(until: Int64.max))
        #expect(BackupSchedule.adding(Int64.min, -1) == Int64.min)
    }

    @Test func intervalsReadAsTheOptionTakesThem() {
        #expect(DurationText.parse("30m") == .seconds(1800))
        #expect(DurationText.parse("1h") == .seconds(3600))
        #expect(DurationText.parse("1d") == .seconds(86_400))
        #expect(DurationText.parse("90s") == .seconds(90))
        for bad in ["", "h", "1", "1.5h", "-1h", "1w", "1 h", "9999999999999d", "１h"] {
            #expect(DurationText.parse(bad) == nil, "\(bad)")
        }
        #expect(throws: BackupError.self) { try BackupConfiguration(directory: "/tmp/x", interval: .seconds(59)).validate() }
        #expect(throws: BackupError.self) { try BackupConfiguration(directory: "/tmp/x", interval: .seconds(31 * 86_400)).validate() }
        #expect(throws: BackupError.self) { try BackupConfiguration(directory: "/tmp/x", keep: 0).validate() }
        #expect(throws: Never.self) { try BackupConfiguration(directory: "/tmp/x", interval: .seconds(60), keep: 1).validate() }
        #expect(BackupConfiguration(directory: "/tmp/x", interval: .seconds(90)).intervalMilliseconds == 90_000)
    }
}
