/// The system's zlib, which every machine has (`GzipWriter` and `GzipReader` use its streams).
enum Zlib {
    /// What went wrong in zlib.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }
}
