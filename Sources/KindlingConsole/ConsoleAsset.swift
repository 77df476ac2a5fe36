/// One file of the web console at `/.console`, compiled into the binary so a static `kindling`
/// needs no resource bundle beside it at run time.
///
/// The console is plain HTML, CSS and ES modules with no build step; SwiftPM embeds the files of
/// `Assets/` as byte arrays (`resources: [.embedInCode("Assets")]`), and this type gives each its
/// name, content type and a strong validator for `ETag` caching.
public struct ConsoleAsset: Sendable {
    /// The file name under `/.console/`, such as `app.js`.
    public let name: String
    /// The `Content-Type` it is served with.
    public let contentType: String
    /// The file's bytes.
    public let bytes: [UInt8]
    /// A quoted strong entity tag, the FNV-1a hash of the bytes: it changes whenever the file does,
    /// so a browser revalidates cheaply and never keeps a stale console after an upgrade.
    public let etag: String

    init(name: String, bytes: [UInt8]) {
        self.name = name
        self.bytes = bytes
        self.contentType = ConsoleAsset.contentType(of: name)
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        self.etag = "\"" + String(repeating: "0", count: 16 - hex.count) + hex + "\""
    }

    /// The page itself, served at `/.console` and `/.console/`.
    public static let page = "index.html"

    /// Every file of the console, by name.
    public static let all: [String: ConsoleAsset] = {
        let files: [(String, [UInt8])] = [
            ("index.html", PackageResources.index_html),
            ("console.css", PackageResources.console_css),
            ("app.js", PackageResources.app_js),
            ("api.js", PackageResources.api_js),
            ("tree.js", PackageResources.tree_js),
            ("query.js", PackageResources.query_js),
            ("rules.js", PackageResources.rules_js),
            ("activity.js", PackageResources.activity_js),
            ("history.js", PackageResources.history_js),
            ("icon.svg", PackageResources.icon_svg),
        ]
        return Dictionary(uniqueKeysWithValues: files.map { ($0.0, ConsoleAsset(name: $0.0, bytes: $0.1)) })
    }()

    /// The content type for a file name's extension (`application/octet-stream` when unknown).
    static func contentType(of name: String) -> String {
        switch name.split(separator: ".").last {
        case "html": "text/html; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "svg": "image/svg+xml"
        default: "application/octet-stream"
        }
    }
}
