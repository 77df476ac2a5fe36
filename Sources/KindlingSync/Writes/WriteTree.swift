import KindlingCore

/// The user's pending writes (sets, updates, transactions) that the server has not acknowledged.
///
/// Local writes show at once: every event cache is the server's data with these writes laid on
/// top. `visibleWrites` keeps that overlay ready; `allWrites` keeps each write on its own so one
/// can be dropped when acknowledged, or a transaction can compute its input with some writes
/// left out or hidden ones included.
struct WriteTree: Sendable {
    /// The union of the visible writes.
    private(set) var visibleWrites = CompoundWrite.empty
    /// Every pending write, oldest first.
    private(set) var allWrites: [WriteRecord] = []
    private(set) var lastWriteID = -1

    /// Records a `set` (or a transaction's write, hidden when `visible` is false).
    mutating func addOverwrite(_ node: Node, at path: Path, writeID: Int, visible: Bool) {
        allWrites.append(WriteRecord(writeID: writeID, path: path, change: .overwrite(node), visible: visible))
        if visible { visibleWrites = visibleWrites.adding(node, at: path) }
        lastWriteID = writeID
    }

    /// Records an `update`: each relative path below `path` gets its node.
    mutating func addMerge(_ children: [(path: Path, node: Node)], at path: Path, writeID: Int) {
        allWrites.append(WriteRecord(writeID: writeID, path: path, change: .merge(children), visible: true))
        visibleWrites = visibleWrites.adding(merge: children, at: path)
        lastWriteID = writeID
    }

    /// The pending write with this id.
    func write(_ writeID: Int) -> WriteRecord? {
        allWrites.first { $0.writeID == writeID }
    }

    /// Drops a write (acknowledged or reverted). Returns true when it may have been visible, so
    /// views must look again; false when it was hidden, unknown, or entirely covered by a later
    /// write.
    mutating func removeWrite(_ writeID: Int) -> Bool {
        guard let index = allWrites.firstIndex(where: { $0.writeID == writeID }) else { return false }
        let removed = allWrites.remove(at: index)
        var wasVisible = removed.visible
        var overlapsOthers = false
        var other = allWrites.count - 1
        while wasVisible && other >= 0 {
            let current = allWrites[other]
            if current.visible {
                if other >= index && current.covers(removed.path) {
                    // A later write hides this one completely.
                    wasVisible = false
                } else if removed.path.contains(current.path) {
                    overlapsOthers = true
                }
            }
            other -= 1
        }
        guard wasVisible else { return false }
        if overlapsOthers {
            // Writes shadow each other here: rebuild the overlay from the remaining writes.
            visibleWrites = WriteTree.layer(allWrites, at: .root) { $0.visible }
            lastWriteID = allWrites.last?.writeID ?? -1
        } else {
            switch removed.change {
            case .overwrite:
                visibleWrites = visibleWrites.removing(at: removed.path)
            case .merge(let children):
                for child in children { visibleWrites = visibleWrites.removing(at: removed.path.appending(child.path)) }
            }
        }
        return true
    }

    /// The writes that pass `include`, in order, as seen from `root`.
    static func layer(_ writes: [WriteRecord], at root: Path, include: (WriteRecord) -> Bool) -> CompoundWrite {
        var result = CompoundWrite.empty
        for write in writes where include(write) {
            switch write.change {
            case .overwrite(let node):
                if let relative = root.relative(write.path) {
                    result = result.adding(node, at: relative)
                } else if let relative = write.path.relative(root) {
                    result = result.adding(node.child(at: relative), at: .root)
                }
            case .merge(let children):
                if let relative = root.relative(write.path) {
                    result = result.adding(merge: children, at: relative)
                } else if let relative = write.path.relative(root) {
                    if relative.isRoot {
                        result = result.adding(merge: children, at: .root)
                    } else if let front = relative.first,
                        let child = children.last(where: { $0.path.count == 1 && $0.path.first == front })
                    {
                        // As in the SDKs, only a merge entry named by the single next key is
                        // looked up here; deeper entry paths (`a/b`) are not followed.
                        result = result.adding(child.node.child(at: relative.dropFirst()), at: .root)
                    }
                }
            }
        }
        return result
    }
}
