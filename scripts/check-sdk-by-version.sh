#!/usr/bin/env bash
# Checks that an app can depend on the Swift SDK by version: a throwaway package that depends on
# a tag of this repository named after the release (`.package(url: "file://…", from: VERSION)`,
# VERSION being `KindlingVersion.current`) builds `KindlingClient`, and the app it makes says the
# SDK is that release (`Database.sdkVersion()`).
# SwiftPM refuses, for a package depended on by version, any product whose targets carry unsafe
# flags, so this is where such a flag would show.
#
# The tag is made in a temporary clone of the working tree (tracked and new files, as they are
# now), never in this repository. Usage: scripts/check-sdk-by-version.sh [debug|release]
# (default debug). The build folder .build-sdk-check is kept, so later runs build only what
# changed; KINDLING_SDK_CHECK_DIR puts it elsewhere. KINDLING_SDK_CHECK_SCRATCH builds the app
# in another build folder: scripts/test.sh gives it this package's own in a fresh clone, so the
# dependencies both builds compile (SwiftNIO, swift-crypto, swift-nio-ssl) compile once.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
configuration=${1:-debug}
work=${KINDLING_SDK_CHECK_DIR:-$root/.build-sdk-check}
mkdir -p "$work"
repo="$work/kindling"
app="$work/app"
scratch=${KINDLING_SDK_CHECK_SCRATCH:-$work/build}
[[ $scratch == /* ]] || scratch=$root/$scratch
rm -rf "$repo" "$app"
# The release this tree is, as a tag of it would be named.
version=$(sed -n 's/^ *public static let current = "\([0-9]*\.[0-9]*\.[0-9]*\)"$/\1/p' Sources/KindlingCore/KindlingVersion.swift)
[ -n "$version" ] || { echo "check-sdk-by-version: no MAJOR.MINOR.PATCH version in Sources/KindlingCore/KindlingVersion.swift" >&2; exit 1; }

# The working tree as one commit of a fresh repository, tagged with the release.
mkdir -p "$repo"
git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' file; do [ -e "$file" ] && printf '%s\0' "$file"; done |
    tar --null -T - -cf - | tar -C "$repo" -xf -
git -C "$repo" init -q
git -C "$repo" add -A
git -C "$repo" -c user.name=check -c user.email=check@localhost commit -q -m "working tree"
git -C "$repo" tag "$version"

# The app: an executable that uses the SDK.
mkdir -p "$app/Sources/App"
cat > "$app/Package.swift" << EOF
// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "App",
    platforms: [.macOS(.v15), .iOS(.v18)],
    dependencies: [.package(url: "file://$repo", from: "$version")],
    targets: [
        .executableTarget(name: "App", dependencies: [.product(name: "KindlingClient", package: "kindling")])
    ]
)
EOF
cat > "$app/Sources/App/main.swift" << 'EOF'
import KindlingClient

let db = try Database(url: "http://127.0.0.1:9000?ns=sdk-check")
print(try db.reference("greeting"))
print("sdk \(Database.sdkVersion())")
EOF

# The versions this checkout has pinned, if it has (Package.resolved), so the app builds what
# the tests build and a shared build folder keeps its dependencies' checkouts.
[ -f Package.resolved ] && cp Package.resolved "$app/Package.resolved"
build=(swift build --package-path "$app" --scratch-path "$scratch" -c "$configuration" --product App)
"${build[@]}"
said=$("$("${build[@]}" --show-bin-path)/App" | sed -n 's/^sdk //p')
[ "$said" = "$version" ] || { echo "check-sdk-by-version: the app's SDK says it is ${said:-nothing}, its tag $version" >&2; exit 1; }
echo "check-sdk-by-version: a package depending on tag $version of this repository by version builds KindlingClient ($configuration), which says it is $version"
