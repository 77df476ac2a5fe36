import Foundation
import Testing

/// For the tests of every target: where the shared conformance data (`sync-point-spec.json`, `rules-fixtures.json`, recorded
/// from the Firebase SDKs and live Firebase) is, and whether a test that reads it runs.
///
/// The data is not copied into the repository. It is looked for in `KINDLING_CONFORMANCE_DIR`
/// when that is set, else in `shared/conformance` beside the clone
/// (`<package root>/../shared/conformance`). A test that needs a missing file is skipped, with the
/// reason; with `KINDLING_REQUIRE_CONFORMANCE=1` (CI sets it) it runs and fails instead.
public enum ConformanceData {
    /// The folder: `$KINDLING_CONFORMANCE_DIR`, else `<package root>/../shared/conformance`.
    public static var directory: URL {
        if let configured = ProcessInfo.processInfo.environment["KINDLING_CONFORMANCE_DIR"], !configured.isEmpty {
            return URL(fileURLWithPath: configured, isDirectory: true)
        }
        // This file is <package root>/Sources/KindlingTesting/ConformanceData.swift.
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.deletingLastPathComponent().appendingPathComponent("shared/conformance", isDirectory: true)
    }

    /// The path of one file of the data.
    public static func path(_ name: String) -> String {
        directory.appendingPathComponent(name).path
    }

    /// True when a missing file must fail its test rather than skip it.
    public static var isRequired: Bool {
        ProcessInfo.processInfo.environment["KINDLING_REQUIRE_CONFORMANCE"] == "1"
    }

    /// The trait a test reading `name` carries: it runs when the file exists or the data is
    /// required, and is otherwise skipped with a comment naming the file and how to provide it.
    public static func enabled(ifPresent name: String) -> ConditionTrait {
        let path = path(name)
        let present = FileManager.default.fileExists(atPath: path)
        return .enabled(
            if: present || isRequired,
            Comment(
                rawValue:
                    "conformance data not found at \(path): put the shared conformance folder beside the clone (../shared/conformance) or set KINDLING_CONFORMANCE_DIR; KINDLING_REQUIRE_CONFORMANCE=1 makes this a failure"
            )
        )
    }
}
