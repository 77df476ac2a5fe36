import KindlingTesting

#if KINDLING_LIBFUZZER
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// libFuzzer's entry point, when built with `-Xswiftc -sanitize=fuzzer,address -Xswiftc
/// -DKINDLING_LIBFUZZER` (libFuzzer then supplies `main`). The target comes from the
/// `KINDLING_FUZZ_TARGET` environment variable: `json`, `websocket` or `rest`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    LibFuzzerTarget.selected.run(bytes)
    return 0
}

/// libFuzzer's driver, which parses its options and calls the entry point for each input.
@_silgen_name("LLVMFuzzerRunDriver")
func runLibFuzzer(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// The process's `main`: SwiftPM links an executable with `main` defined as
/// `<module>_main`, so libFuzzer's own `main` is not used; this starts its driver instead.
@_cdecl("kindling_fuzz_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return runLibFuzzer(&count, &arguments) { data, size in fuzzOneInput(data, size) }
}

enum LibFuzzerTarget {
    static let selected: FuzzTarget = {
        let name = getenv("KINDLING_FUZZ_TARGET").map { String(cString: $0) } ?? "json"
        return FuzzTarget(rawValue: name) ?? .json
    }()
}
#else
import ArgumentParser
import Dispatch
import Foundation

/// Runs the seeded mutation fuzzer on one target for a number of inputs, printing progress, so
/// long runs need no libFuzzer. A crash ends the process; the seed and the count reached replay it.
@main
struct FuzzCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kindling-fuzz",
        abstract: "Feed seeded random and mutated inputs to Kindling's parsers."
    )

    @Argument(help: "The target: json, websocket or rest.")
    var target: String

    @Option(help: "How many inputs to run.")
    var count: Int = 100_000

    @Option(help: "The random seed (the same seed replays the same inputs).")
    var seed: UInt64 = 1

    @Option(name: .customLong("write-seeds"), help: "Write the target's seed inputs as files into this directory (a libFuzzer corpus) and stop.")
    var seedDirectory: String?

    func run() throws {
        guard let target = FuzzTarget(rawValue: target) else {
            throw ValidationError("unknown target \(target); use json, websocket or rest")
        }
        if let seedDirectory {
            try FileManager.default.createDirectory(atPath: seedDirectory, withIntermediateDirectories: true)
            for (index, seed) in target.seeds.enumerated() {
                try Data(seed.utf8).write(to: URL(fileURLWithPath: seedDirectory).appendingPathComponent("seed-\(index)"))
            }
            return
        }
        var driver = FuzzDriver(target: target, seed: seed)
        let started = DispatchTime.now()
        let step = max(1, count / 10)
        var done = 0
        var accepted = 0
        while done < count {
            let batch = min(step, count - done)
            accepted += driver.run(count: batch)
            done += batch
            print("\(target.rawValue): \(done) inputs, \(accepted) past the parsers")
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        print("\(target.rawValue): \(done) inputs (\(accepted) past the parsers), seed \(seed), no crash, \(Int(seconds)) s")
    }
}
#endif
