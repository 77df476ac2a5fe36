extension Node {
    /// True when the child (or, for `.priority`, the priority) is present. Package-wide for the
    /// client's event engine (`KindlingSync`), which asks it of every cached child.
    package func hasChild(_ key: Key) -> Bool { !child(key).isEmpty }

    /// This node with `key` replaced by `node` (an empty node removes it; `.priority` sets the
    /// priority).
    package func settingChild(_ key: Key, _ node: Node) -> Node {
        setting(node, at: Path(keys: [key]))
    }
}
