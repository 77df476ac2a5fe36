import KindlingCore

/// A snapshot prints as its data's JSON text (`{"free":2}`), and in the debugger with its key the
/// way the Firebase SDKs show one (`Snap (library-3) {"free":2}`), instead of dumping the tree.
extension DataSnapshot: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { jsonValue.description }

    public var debugDescription: String { "Snap (\(key.isEmpty ? "/" : key)) \(exportText)" }
}
