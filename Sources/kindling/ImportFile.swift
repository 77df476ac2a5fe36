import ArgumentParser
import Foundation
import KindlingProtocol
import KindlingServer

/// One JSON file to import, with the namespace it belongs to when its place says so (an
/// emulator export names each file after its namespace) and the rules file of its backup.
struct ImportFile: Equatable {
    /// The file (`-` for standard input); plain or gzipped JSON, plain or in export form.
    var path: String
    /// The namespace the file is for; nil when the command line says.
    var namespace: String?
    /// The rules file beside a backup's data file (`<name>_rules.json`), when there is one.
    var rules: String?

    /// The emulator's description of an export directory (`firebase emulators:export DIR`).
    static let emulatorMetadata = "firebase-export-metadata.json"
    /// Where the emulator puts the database's files inside it when the metadata does not say.
    static let emulatorDatabaseFolder = "database_export"

    /// The position file of an import of `path` when `--position-file` names none.
    static func defaultPositionFile(_ path: String) -> String {
        path == "-" ? "kindling-import.position" : path + ".import-position"
    }

    /// The files `argument` names: standard input (`-`), one file (a hosted backup's data file
    /// brings its rules file), or an emulator export directory, each of whose
    /// `database_export/<namespace>.json` files goes to its own namespace, as the emulator
    /// imports them, or only `namespace`'s when the command line names one.
    static func resolve(_ argument: String, namespace named: String?) throws -> [ImportFile] {
        if argument == "-" { return [ImportFile(path: "-")] }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory) else {
            throw ValidationError("Cannot read \(argument): no such file or directory.")
        }
        guard isDirectory.boolValue else { return [ImportFile(path: argument, rules: BackupFile.rulesBeside(argument))] }
        let folder = try databaseFolder(in: argument)
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".json") }.sorted()
        } catch {
            throw ValidationError("Cannot list \(folder): \(error.localizedDescription)")
        }
        var files: [ImportFile] = []
        for name in names {
            let namespace = String(name.dropLast(".json".count))
            guard NamespaceName.isValid(namespace) else {
                throw ValidationError("\(folder)/\(name): \(namespace) is not a namespace name (\(NamespaceName.rule)).")
            }
            files.append(ImportFile(path: folder + "/" + name, namespace: namespace))
        }
        guard !files.isEmpty else { throw ValidationError("\(argument) holds no database export (no <namespace>.json files in \(folder)).") }
        guard let named else { return files }
        guard let file = files.first(where: { $0.namespace == named }) else {
            throw ValidationError(
                "\(argument) holds no export of namespace \(named); it has \(files.compactMap(\.namespace).joined(separator: ", ")).")
        }
        return [file]
    }

    /// The folder of an export directory that holds the database's files: the one its
    /// metadata names (`database.path`, relative to the directory), else `database_export`
    /// when it is there, else the directory itself (firebase-tools reads a folder of JSON
    /// files so too).
    private static func databaseFolder(in directory: String) throws -> String {
        let metadataPath = directory + "/" + emulatorMetadata
        if let data = FileManager.default.contents(atPath: metadataPath) {
            guard let metadata = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw ValidationError("\(metadataPath) is not the emulator's export metadata (not a JSON object).")
            }
            guard let database = metadata["database"] as? [String: Any] else {
                throw ValidationError("\(metadataPath) lists no database export (the export was made without the database emulator).")
            }
            let relative = database["path"] as? String ?? emulatorDatabaseFolder
            return relative.hasPrefix("/") ? relative : directory + "/" + relative
        }
        var isDirectory: ObjCBool = false
        let folder = directory + "/" + emulatorDatabaseFolder
        return FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory) && isDirectory.boolValue ? folder : directory
    }
}
