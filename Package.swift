// swift-tools-version: 6.1
import PackageDescription

let strictness: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "Kindling",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "KindlingCore", targets: ["KindlingCore"]),
        .executable(name: "kindling-bench", targets: ["kindling-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
        .target(
            name: "KindlingCore",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strictness
        ),
        .executableTarget(
            name: "kindling-bench",
            dependencies: [
                "KindlingCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictness
        ),
        .testTarget(
            name: "KindlingCoreTests",
            dependencies: ["KindlingCore"],
            swiftSettings: strictness
        ),
    ],
    swiftLanguageModes: [.v6]
)
