/// A server process the harness started in a temporary directory of its own: the start, the
/// clean-up after a failed start, and the stop that the Kindling server and the Redis peer share.
struct DirectoryServer: Sendable {
    let process: ChildProcess
    let directory: TemporaryDirectory

    /// Makes a directory, starts `executable` with the arguments `arguments` gives for that
    /// directory (output to `logName` in it), and waits up to `timeout` for a line `ready`
    /// accepts, which `target` turns into the bench target. Anything failing on the way stops
    /// the process and removes the directory.
    static func start(
        prefix: String,
        executable: String,
        logName: String,
        arguments: (_ directory: String) -> [String],
        timeout: Duration,
        ready: (Substring) -> Bool,
        target: (_ line: String, _ pid: Int32) throws -> BenchTarget
    ) async throws -> (server: DirectoryServer, target: BenchTarget) {
        let directory = try TemporaryDirectory(prefix: prefix)
        let process: ChildProcess
        do {
            process = try ChildProcess(executable: executable, arguments: arguments(directory.path), logPath: directory.path + "/" + logName)
        } catch {
            directory.remove()
            throw error
        }
        let server = DirectoryServer(process: process, directory: directory)
        do {
            let line = try await process.waitForLine(timeout: timeout, ready)
            return (server, try target(line, process.pid))
        } catch {
            await server.stop()
            throw error
        }
    }

    /// Stops the process and removes its directory.
    func stop() async {
        await process.stop()
        directory.remove()
    }
}
