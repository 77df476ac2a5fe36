/// This package's version, one for the server, the command-line tool and the Swift SDK, which
/// release together: what `kindling --version` prints, what the SDK's `Database.sdkVersion()`
/// answers and the server's `kindling_build_info` metric carries, so a bug report or a
/// dashboard can say which release it is about.
///
/// A release sets it and tags its commit with the same name (docs/development.md), so an app
/// that depends on the package `from:` that tag gets an SDK that says so. Commits after a tag
/// keep its version until the next release.
public enum KindlingVersion {
    /// The release, as semantic versioning writes it (`MAJOR.MINOR.PATCH`).
    public static let current = "0.1.0"
}
