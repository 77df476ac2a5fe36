/// Waits for something the code under test makes true in its own time and signals no other
/// way (a close the server sees later, a write another node commits, a file a crash left):
/// checks `condition`, then again every `interval`, until it holds or `limit` has passed.
///
/// The tests' one way to wait for such an event: a fixed sleep waits too long on an idle
/// machine and too little on a loaded one, and every test that polled had its own loop.
/// - Parameters:
///   - limit: How long the event may take; the test fails past it, so keep it the bound the
///     test had, not a larger one.
///   - interval: The pause between checks.
/// - Returns: Whether `condition` held within `limit`.
@discardableResult
public func eventually(
    within limit: Duration = .seconds(10), every interval: Duration = .milliseconds(20), _ condition: () async throws -> Bool
) async throws -> Bool {
    let deadline = ContinuousClock.now + limit
    while true {
        if try await condition() { return true }
        guard ContinuousClock.now < deadline else { return false }
        try await Task.sleep(for: interval)
    }
}
