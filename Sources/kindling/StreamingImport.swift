import ArgumentParser
import Foundation
import KindlingCore
import KindlingServer
import NIOHTTP1

/// `kindling import` through a server: reads the file a piece at a time (`JSONStreamReader`),
/// cuts it into atomic steps of about `chunkBytes` (`ImportChunker`) and sends each as one REST
/// write, saving the position after each, so a file of any size goes in within bounded memory
/// and an interrupted import resumes where it stopped.
///
/// A file (not standard input) is first read through once without sending anything, unless
/// `check` is off: a truncated file, text that is not JSON or an invalid key is then reported
/// with its byte offset before the database is touched.
struct StreamingImport {
    /// One file to import and where it goes.
    var file: ImportFile
    var target: RemoteTarget
    /// The path inside the namespace, as given.
    var path: String
    var chunkBytes: Int
    var positionFile: String
    var resume: Bool
    var check: Bool

    /// Why a pass stopped early.
    private enum Stop: Error {
        case badInput(ImportError)
        case changedFile
        case failedStep(number: Int, reason: String, exit: ExitCode)
        case interrupted
    }

    /// What a pass over the file does with the steps.
    private enum Pass {
        case check
        /// Send the steps after the first `skip`.
        case send(skip: Int)
    }

    func run() async throws {
        let keys = try parsePath(path).keys
        let saved = try ImportPosition.load(positionFile)
        let start = position(steps: 0, offset: 0, digest: PrefixDigest())
        if let saved {
            guard resume else {
                printError(
                    "error: \(positionFile) holds the position of an interrupted import of \(saved.input) (\(saved.steps) steps applied, "
                        + "byte \(saved.offset)): add --resume to go on from there, or delete it to start over.")
                throw ExitCode(64)
            }
            guard saved.matches(start) else {
                printError(
                    "error: \(positionFile) is the position of an import into namespace \(saved.namespace) at \(saved.path) "
                        + "in steps of \(saved.chunkBytes) bytes; resume with the same --ns, --path and --chunk-kb, or delete it to start over.")
                throw ExitCode(64)
            }
            if saved.server != start.server {
                printError("import: resuming an import begun on \(saved.server), on \(start.server)")
            }
        } else if resume {
            printError("error: nothing to resume: there is no \(positionFile) (the position file of an interrupted import).")
            throw ExitCode(64)
        }
        let interrupt = InterruptSignal()
        let depthLimit = Path.maxDepth - keys.count
        do {
            if check, file.path != "-" {
                try await pass(.check, depthLimit: depthLimit, resuming: nil, interrupt: interrupt)
            }
            let started = ContinuousClock.now
            let steps = try await pass(.send(skip: saved?.steps ?? 0), depthLimit: depthLimit, resuming: saved, interrupt: interrupt)
            try? FileManager.default.removeItem(atPath: positionFile)
            let seconds = (ContinuousClock.now - started).components.seconds
            printError("import: done: \(file.path) is in namespace \(target.namespace) at \(path), in \(steps) steps (\(seconds) s)")
        } catch let stop as Stop {
            try report(stop, saved: try ImportPosition.load(positionFile))
        }
    }

    /// The position after `steps` steps.
    private func position(steps: Int, offset: Int, digest: PrefixDigest) -> ImportPosition {
        ImportPosition(
            input: file.path, server: target.server, namespace: target.namespace, path: path, chunkBytes: chunkBytes, steps: steps,
            offset: offset, hashedBytes: digest.count, digest: digest.digest)
    }

    /// Reads the whole file once; returns the number of steps.
    @discardableResult
    private func pass(_ pass: Pass, depthLimit: Int, resuming saved: ImportPosition?, interrupt: InterruptSignal) async throws -> Int {
        let reader: BackupFileReader
        do {
            reader = try BackupFileReader(path: file.path)
        } catch {
            printError("error: \(error)")
            throw ExitCode(64)
        }
        let checking: Bool
        if case .check = pass { checking = true } else { checking = false }
        var progress = ProgressBar(label: checking ? "checking" : "import", total: reader.fileSize)
        defer { progress.interrupt() }
        var json = JSONStreamReader()
        var chunker = ImportChunker(chunkBytes: chunkBytes, depthLimit: depthLimit)
        var digest = PrefixDigest(checking: checking ? nil : saved)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var number = 0

        func handle(_ step: ImportChunker.Step) async throws {
            number += 1
            guard case .send(let skip) = pass, number > skip else { return }
            try await send(step, number: number)
            try position(steps: number, offset: step.end, digest: digest).save(positionFile)
            if interrupt.isRaised { throw Stop.interrupted }
        }

        do {
            while true {
                let count = try buffer.withUnsafeMutableBytes { (raw) throws(BackupError) in try reader.read(into: raw) }
                if count == 0 {
                    json.finish()
                } else {
                    let matched = buffer.withUnsafeBytes { raw in
                        let piece = UnsafeRawBufferPointer(rebasing: raw[..<count])
                        json.feed(piece)
                        return digest.add(piece)
                    }
                    guard matched else { throw Stop.changedFile }
                }
                while let token = try json.next() {
                    if let step = try chunker.take(token) { try await handle(step) }
                }
                progress.update(reader.fileBytesRead, checking ? "" : "step \(number)")
                if count == 0 { break }
                if checking, interrupt.isRaised { throw Stop.interrupted }
            }
            guard digest.isChecked else { throw Stop.changedFile }
            if let last = chunker.finish(end: json.offset) { try await handle(last) }
        } catch let error as JSONStreamError {
            throw Stop.badInput(.json(error))
        } catch let error as ImportError {
            throw Stop.badInput(error)
        } catch let error as BackupError {
            printError("error: \(error)")
            throw ExitCode(64)
        }
        progress.finish(reader.fileBytesRead, checking ? "\(json.offset) bytes of JSON, \(number) steps" : "\(number) steps")
        return number
    }

    /// Sends one step, again after a pause when the server is busy (503) or cannot be reached
    /// (each step is idempotent: it sets the same values again).
    private func send(_ step: ImportChunker.Step, number: Int) async throws {
        let request = step.request(first: number == 1)
        let keys = (try parsePath(path).keys.map(\.string)) + request.path
        let url = try target.restURL(path: keys.joined(separator: "/"), "&print=silent")
        let body = Array(JSONWriter.string(request.body).utf8)
        var attempt = 0
        while true {
            attempt += 1
            let outcome: (status: Int, body: [UInt8])
            do {
                outcome = try await ServerRequest(
                    method: HTTPMethod(rawValue: request.method), url: url, headers: [("Authorization", "Bearer \(adminCredential)")], body: body
                ).send()
            } catch {
                guard attempt < 5 else {
                    throw Stop.failedStep(number: number, reason: "cannot reach \(target.server): \(error)", exit: ClientExit.unreachable)
                }
                try await Task.sleep(for: .seconds(1 << (attempt - 1)))
                continue
            }
            if (200..<300).contains(outcome.status) { return }
            if outcome.status == 503, attempt < 5 {
                try await Task.sleep(for: .seconds(1 << (attempt - 1)))
                continue
            }
            let message = (try? JSONParser.parse(outcome.body))?["error"]?.stringValue ?? String(decoding: outcome.body, as: UTF8.self)
            throw Stop.failedStep(number: number, reason: "the server answered \(outcome.status): \(message)", exit: ClientExit.refused)
        }
    }

    /// `text` as one word for a POSIX shell: as it is when it holds only safe characters,
    /// else in single quotes.
    static func shellQuoted(_ text: String) -> String {
        let safe = text.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || "-_./:=@%+,".unicodeScalars.contains($0) }
        return safe && !text.isEmpty ? text : "'" + text.replacingOccurrences(of: "'", with: #"'''"#) + "'"
    }

    /// Says what stopped the import, what of it is applied, and how to go on.
    private func report(_ stop: Stop, saved: ImportPosition?) throws -> Never {
        let applied =
            saved.map {
                "\($0.steps) steps are applied: the data at \(path) holds the file up to byte \($0.offset)."
            } ?? "Nothing was written."
        // The whole command, so it can be pasted as it is (the credential stays in the environment).
        var options = ["--url", target.server, "--ns", target.namespace]
        if path != "/" { options += ["--path", path] }
        if chunkBytes != 1024 * 1024 { options += ["--chunk-kb", String(chunkBytes / 1024)] }
        if positionFile != ImportFile.defaultPositionFile(file.path) { options += ["--position-file", positionFile] }
        let resume = (["kindling", "import", file.path, "--resume"] + options).map(Self.shellQuoted).joined(separator: " ")
        switch stop {
        case .badInput(let error):
            printError("error: \(file.path): \(error)")
            printError(
                saved == nil
                    ? "Nothing was written."
                    : "\(applied) Fix the file (the part before that byte must stay as it is) and resume with: \(resume)"
            )
            throw ExitCode(64)
        case .changedFile:
            printError(
                "error: \(file.path) is not the file whose import \(positionFile) saved (its first bytes differ); delete the position file to start over."
            )
            throw ExitCode(64)
        case .failedStep(let number, let reason, let exit):
            printError("error: step \(number) was not applied: \(reason)")
            printError("\(applied) Resume with: \(resume)")
            throw exit
        case .interrupted:
            printError("import: interrupted. \(applied) Resume with: \(resume)")
            throw ExitCode(130)
        }
    }
}
