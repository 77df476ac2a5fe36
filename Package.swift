// swift-tools-version: 6.1
import PackageDescription

let strictness: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    // No unsafe flags here: SwiftPM refuses to build a product whose targets carry them for a
    // package that depends on Kindling by version. Release builds get the compiler's default
    // (conservative) cross-module optimisation, `-enable-default-cmo`, which every `-O` build has.
]

let package = Package(
    name: "Kindling",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "KindlingCore", targets: ["KindlingCore"]),
        .library(name: "KindlingProtocol", targets: ["KindlingProtocol"]),
        .library(name: "KindlingServer", targets: ["KindlingServer"]),
        .library(name: "KindlingClient", targets: ["KindlingClient"]),
        .library(name: "NATSClient", targets: ["NATSClient"]),
        .library(name: "NATSTesting", targets: ["NATSTesting"]),
        .executable(name: "kindling", targets: ["kindling"]),
        .executable(name: "kindling-bench", targets: ["kindling-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/swiftlang/swift-subprocess.git", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.8.1"),
    ],
    targets: [
        .target(
            name: "KindlingCore",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strictness
        ),
        .target(
            name: "KindlingSync",
            dependencies: ["KindlingCore"],
            swiftSettings: strictness
        ),
        .systemLibrary(name: "CZlib", path: "Sources/CZlib"),
        .systemLibrary(name: "CMalloc", path: "Sources/CMalloc"),
        .systemLibrary(name: "CEpoll", path: "Sources/CEpoll"),
        .target(name: "CCRC32", linkerSettings: [.linkedLibrary("z")]),
        .target(
            name: "KindlingConsole",
            resources: [.embedInCode("Assets")],
            swiftSettings: strictness
        ),
        .target(
            name: "KindlingProtocol",
            dependencies: ["KindlingCore"],
            swiftSettings: strictness
        ),
        .target(
            name: "KindlingServer",
            dependencies: [
                "KindlingCore",
                "KindlingProtocol",
                "KindlingConsole",
                "NATSClient",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                "CZlib",
                "CCRC32",
                "CMalloc",
            ],
            swiftSettings: strictness
        ),
        .target(
            name: "KindlingWebSocketClient",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strictness
        ),
        .target(
            name: "KindlingClient",
            dependencies: [
                "KindlingCore",
                "KindlingProtocol",
                "KindlingSync",
                "KindlingWebSocketClient",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strictness
        ),
        .target(
            name: "KindlingTesting",
            dependencies: [
                "KindlingCore",
                "KindlingProtocol",
                "KindlingServer",
                "KindlingWebSocketClient",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strictness
        ),
        .target(
            name: "NATSClient",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strictness
        ),
        .target(
            name: "NATSTesting",
            dependencies: ["KindlingTesting", .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio")],
            swiftSettings: strictness
        ),
        .executableTarget(
            name: "kindling",
            dependencies: [
                "KindlingServer",
                "KindlingClient",
                "KindlingProtocol",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            swiftSettings: strictness
        ),
        .target(
            name: "KindlingBench",
            dependencies: [
                "CEpoll",
                "KindlingCore",
                "KindlingProtocol",
                "KindlingServer",
                "KindlingWebSocketClient",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictness
        ),
        .executableTarget(
            name: "kindling-bench",
            dependencies: [
                "KindlingBench",
                "KindlingCore",
                "KindlingServer",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictness
        ),
        .executableTarget(
            name: "kindling-fuzz",
            dependencies: [
                "KindlingTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictness
        ),
        .testTarget(
            name: "KindlingCoreTests",
            dependencies: ["KindlingCore", "KindlingTesting"],
            swiftSettings: strictness
        ),
        .testTarget(
            name: "NATSClientTests",
            dependencies: [
                "NATSClient", "NATSTesting", "KindlingTesting", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: strictness
        ),
        .testTarget(
            name: "KindlingSyncTests",
            dependencies: ["KindlingSync", "KindlingCore", "KindlingTesting"],
            swiftSettings: strictness
        ),
        .testTarget(
            name: "KindlingProtocolTests",
            dependencies: ["KindlingProtocol"],
            swiftSettings: strictness
        ),
        .testTarget(
            name: "KindlingClientTests",
            dependencies: [
                "KindlingClient", "KindlingServer", "KindlingSync", "KindlingTesting", .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictness
        ),
        // Code written against the Firebase iOS SDK, in the Swift 5 language mode most such apps
        // use, with only its import changed: it must compile and run unchanged.
        .testTarget(
            name: "FirebasePortTests",
            dependencies: ["KindlingClient", "KindlingServer", "KindlingTesting"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .testTarget(
            name: "KindlingBenchTests",
            dependencies: [
                "KindlingBench",
                "KindlingServer",
                "KindlingTesting",
                "KindlingWebSocketClient",
                "NATSTesting",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: strictness
        ),
        .testTarget(
            name: "kindlingTests",
            dependencies: [
                "kindling",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strictness
        ),
        .testTarget(
            name: "KindlingServerTests",
            dependencies: [
                "KindlingServer",
                "KindlingConsole",
                "KindlingTesting",
                "NATSClient",
                "NATSTesting",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strictness
        ),
    ],
    swiftLanguageModes: [.v6]
)
