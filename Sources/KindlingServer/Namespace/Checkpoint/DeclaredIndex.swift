import KindlingCore

/// An index the rules declare with `.indexOn`: its order and its location.
struct DeclaredIndex: Hashable, Sendable {
    let index: Index
    let path: Path
}
