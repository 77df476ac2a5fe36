import ArgumentParser
import Foundation
import KindlingCore
import KindlingServer
import Logging

/// Where `export` and `import` find the data: a running server, or a data directory.
struct DataLocation: ParsableArguments {
    @OptionGroup var remote: RemoteOptions

    @Option(help: "Path inside the namespace.")
    var path = "/"

    @Option(name: .customLong("data-dir"), help: "Work on this data directory directly (no server may be running on it).")
    var dataDirectory: String?
}

/// `kindling export`: the data at a path as JSON, streamed to standard output or a file.
struct Export: AsyncParsableCommand {
    /// What the output holds.
    enum Format: String, ExpressibleByArgument, CaseIterable {
        /// Priorities included (`.priority`, `.value`): imports back to exactly the same tree.
        case export
        /// Plain JSON, without priorities.
        case plain
    }

    static let configuration = CommandConfiguration(
        abstract: "Write the data at a path as JSON (export form, with priorities) to standard output or a file.",
        discussion: """
            Through a server the data is read in many small reads (a shallow walk, then the \
            children in batches of about --chunk-kb) and written as it comes, so a namespace of \
            any size is exported in bounded memory; the export form is byte for byte what one \
            GET ?format=export would give. The walk is not a snapshot: writes during it may show \
            in part (stop writers, or export a backup, for a consistent copy).

            --output FILE writes FILE.tmp and renames it when complete; FILE ending in .gz, or \
            --gzip, writes gzip.
            Examples:
              kindling export --ns chat > chat.json                     # from the server at KINDLING_URL
              kindling export --ns chat -o chat.json.gz                 # gzipped, with a progress bar
              kindling export --data-dir ./kindling-data --ns chat      # from a stopped server's files
            """
    )

    @OptionGroup var location: DataLocation

    @Option(name: [.short, .customLong("output")], help: "The file to write ('-', the default, for standard output).")
    var output = "-"

    @Flag(help: "Gzip the output (the default when --output ends in .gz).")
    var gzip = false

    @Option(help: "export (with priorities) or plain.")
    var format = Format.export

    @Option(name: .customLong("chunk-kb"), help: "About how much one read of a batch of children holds, in KB (1 to 262144).")
    var chunkKilobytes = 1024

    func validate() throws {
        guard (1...256 * 1024).contains(chunkKilobytes) else { throw ValidationError("--chunk-kb must be between 1 and 262144 (256 MB).") }
        _ = try parsePath(location.path)
    }

    func run() async throws {
        let target = try location.remote.target()
        let writer: ExportFileWriter
        do {
            writer = try ExportFileWriter(path: output, gzip: gzip || output.hasSuffix(".gz"))
        } catch {
            printError("error: \(error)")
            throw ExitCode(64)
        }
        let path = try parsePath(location.path)
        do {
            if let directory = location.dataDirectory {
                try writer.write(
                    try OfflineDataDirectory.export(
                        directory: directory, namespace: target.namespace, path: path, format: format == .export ? .export : .plain,
                        logger: quietLogger()))
            } else {
                var export = StreamingExport(target: target, exportForm: format == .export, chunkBytes: chunkKilobytes * 1024, output: writer)
                try await export.run(path: path.keys.map(\.string))
            }
            // A line end on standard output, as the other commands print; a file holds the JSON alone.
            if output == "-" { try writer.write(Array("\n".utf8)) }
            try writer.finish()
        } catch let error as ExitCode {
            throw error
        } catch {
            printError("error: \(error)")
            throw ExitCode(74)
        }
    }
}

/// `kindling import`: replace the data at a path with a JSON file, in atomic steps.
struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replace the data at a path with a JSON file of any size, in atomic steps that resume after an interruption.",
        discussion: """
            FILE is plain JSON or export-form JSON (with .priority and .value), gzipped or not \
            (told by its first bytes), '-' for standard input; a hosted Firebase backup \
            (<name>_data.json.gz) brings its rules file (<name>_rules.json) along; a directory \
            is read as the emulator's export (firebase emulators:export): each \
            database_export/<namespace>.json goes to its namespace, or only the one --ns names.

            Through a server the file is read a piece at a time and sent in steps of about \
            --chunk-kb (1 MB, as firebase database:import does), each one atomic write: the \
            first replaces the data at --path, the others are multi-path updates. A file is \
            first read through once to check it (--no-check skips this), so a truncated file or \
            an invalid key is reported with its byte offset before anything is written. The \
            position is saved after every step (--position-file, by default FILE.import-position); \
            after an interruption, run the same command with --resume.
            Examples:
              kindling import chat.json --ns chat                       # through the server at KINDLING_URL
              kindling import backups/2024-05-01T12:00:00Z_chat_data.json.gz --ns chat
              kindling import ./emulator-export                         # every namespace in it
              kindling import big.json.gz --ns app --resume             # go on after an interruption
              kindling import chat.json --data-dir ./kindling-data      # into a stopped server's files
            Exit codes: 0 ok, 1 refused by the server, 2 server unreachable, 64 bad arguments or \
            input, 130 interrupted (resumable).
            """
    )

    @Argument(help: "The JSON file, gzipped or not, or an emulator export directory ('-' for standard input).")
    var file: String

    @OptionGroup var location: DataLocation

    @Option(name: .customLong("chunk-kb"), help: "The size of one atomic step, in KB of the file's JSON (1 to 262144).")
    var chunkKilobytes = 1024

    @Flag(help: "Go on with an interrupted import from its position file.")
    var resume = false

    @Option(name: .customLong("position-file"), help: "Where the position is saved after each step (default: FILE.import-position).")
    var positionFile: String?

    @Flag(name: .customLong("no-check"), help: "Send steps while reading, without reading the file through first.")
    var noCheck = false

    @Option(help: "A rules file to set as the namespace's rules after the data (default: a backup's own rules file beside it).")
    var rules: String?

    @Flag(name: .customLong("no-rules"), help: "Import the data only, even when the backup has a rules file.")
    var noRules = false

    func validate() throws {
        guard (1...256 * 1024).contains(chunkKilobytes) else { throw ValidationError("--chunk-kb must be between 1 and 262144 (256 MB).") }
        if rules != nil, noRules { throw ValidationError("--rules and --no-rules contradict each other; give one.") }
        if resume, location.dataDirectory != nil { throw ValidationError("--resume goes with an import through a server, not --data-dir.") }
        _ = try parsePath(location.path)
    }

    func run() async throws {
        let target = try location.remote.target()
        let files = try ImportFile.resolve(file, namespace: target.isNamespaceNamed ? target.namespace : nil)
        if files.count > 1, positionFile != nil {
            throw ValidationError("--position-file names one file; an export directory of \(files.count) namespaces keeps one beside each.")
        }
        for file in files {
            var destination = target
            if let namespace = file.namespace { destination.namespace = namespace }
            let rules = try rulesToSet(with: file)
            if let directory = location.dataDirectory {
                try importOffline(file, into: destination, directory: directory)
                if let rules {
                    do {
                        try OfflineRules.replace(rules.text, directory: directory, namespace: destination.namespace)
                    } catch {
                        printError("error: the data is imported, but not the rules in \(rules.path): \(error)")
                        throw ExitCode(64)
                    }
                }
            } else {
                printError("import: \(file.path) into \(destination.server) namespace \(destination.namespace) at \(location.path)")
                try await StreamingImport(
                    file: file, target: destination, path: location.path, chunkBytes: chunkKilobytes * 1024,
                    positionFile: positionFile ?? ImportFile.defaultPositionFile(file.path), resume: resume, check: !noCheck
                ).run()
                if let rules { _ = try await restRequest("PUT", destination.settingsURL("rules"), bytes: Data(rules.text.utf8)) }
            }
            if let rules { printError("import: rules of namespace \(destination.namespace) set from \(rules.path)") }
        }
        if file != "-", files.allSatisfy({ $0.namespace != nil }) {
            printError("import: an emulator export holds no rules (the emulator takes them from firebase.json); set them with kindling rules set")
        }
    }

    /// The rules to set after the data: `--rules`, else a backup's own rules file (only when the
    /// import replaces the whole namespace), unless `--no-rules`; read and checked before any
    /// data is written.
    private func rulesToSet(with file: ImportFile) throws -> (path: String, text: String)? {
        var path = rules
        if path == nil, !noRules, let beside = file.rules {
            guard try parsePath(location.path).isRoot else {
                printError("import: not setting the backup's rules (\(beside)): --path is not the root; name them with --rules to set them")
                return nil
            }
            printError("import: the backup's rules file \(beside) will be set too (--no-rules leaves the rules as they are)")
            path = beside
        }
        return try path.map { ($0, try readRulesFile($0)) }
    }

    /// `--data-dir`: the file read whole (the data directory's tree is loaded whole anyway) and
    /// written as one write.
    private func importOffline(_ file: ImportFile, into target: RemoteTarget, directory: String) throws {
        let json: [UInt8]
        do throws(BackupError) {
            json = file.path == "-" ? [UInt8](FileHandle.standardInput.readDataToEndOfFile()) : try BackupFile.read(file.path)
        } catch {
            printError("error: \(error)")
            throw ExitCode(64)
        }
        let progress: (String) -> Void = { printError("import: \($0)") }
        progress("read \(json.count) bytes of JSON from \(file.path)")
        try OfflineDataDirectory.importJSON(
            json, directory: directory, namespace: target.namespace, path: try parsePath(location.path), logger: quietLogger(), progress: progress)
    }
}

/// A rules file's text, checked: a backup's own, or one named on the command line.
func readRulesFile(_ path: String) throws -> String {
    let text: String
    do throws(BackupError) {
        text = String(decoding: try BackupFile.read(path), as: UTF8.self)
    } catch {
        printError("error: \(error)")
        throw ExitCode(64)
    }
    do throws(RulesError) {
        _ = try RulesDocument.parse(text)
    } catch {
        printError("error: \(path): \(error)")
        throw ExitCode(64)
    }
    return text
}

/// A logger that only reports errors, for the command-line tools.
func quietLogger() -> Logger {
    var logger = Logger(label: "kindling")
    logger.logLevel = .error
    return logger
}
