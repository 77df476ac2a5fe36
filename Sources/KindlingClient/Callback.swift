/// An app's block, carried to the queue where the SDK calls it.
///
/// `@unchecked Sendable`, and why that is safe: the SDK calls an app's block only on the queue
/// the app named for it (the database's `callbackQueue`, the main queue unless the app sets
/// another, or the queue given to `observe`), a serial `DispatchQueue`, one call at a time, and
/// reaches nothing the block captures. That is Firebase's contract for its blocks, which are not
/// `Sendable` either: an app's block written inside a `@MainActor` type (a view controller)
/// keeps that isolation and compiles unchanged, and it runs on the main queue it expects.
struct Callback<Block>: @unchecked Sendable {
    let block: Block
}
