/// The text that the SDKs feed to SHA-1 for a node (`priority:…:`, `number:<hex>`,
/// `string:<raw>`, `:<key>:<child hash>`…).
enum NodeHashText {
    static func appendLeaf(_ leaf: Leaf, priority: Priority?, variant: HashVariant, to output: inout [UInt8]) {
        appendPriority(priority, variant: variant, to: &output)
        appendValue(leaf, variant: variant, to: &output)
    }

    static func appendChildren(_ map: ChildMap, priority: Priority?, variant: HashVariant, to output: inout [UInt8]) {
        appendPriority(priority, variant: variant, to: &output)
        forEachChild(of: map, variant: variant) { key, child in appendChild(key, child.digest(variant), to: &output) }
    }

    @inline(__always)
    static func appendChild(_ key: Key, _ digest: SHA1Digest, to output: inout [UInt8]) {
        output.append(UInt8(ascii: ":"))
        output.append(contentsOf: key.string.utf8)
        output.append(UInt8(ascii: ":"))
        digest.appendBase64(to: &output)
    }

    /// Visits children in hash order: priority order (none first, then numbers, then strings, ties
    /// by key), which is key order when no child has a priority. The iOS variant uses key order
    /// when every child has one.
    static func forEachChild(
        of children: some Sequence<(key: Key, node: Node)>,
        variant: HashVariant,
        _ body: (Key, Node) -> Void
    ) {
        var prioritized = 0
        var count = 0
        for (_, child) in children {
            count += 1
            if child.priority != nil { prioritized += 1 }
        }
        if prioritized == 0 || (variant == .iOS && prioritized == count) {
            for (key, child) in children { body(key, child) }
            return
        }
        let sorted = children.sorted { a, b in
            let order = PriorityOrder.compare(a.node.priority, b.node.priority)
            return order != 0 ? order < 0 : Key.compare(a.key, b.key) < 0
        }
        for (key, child) in sorted { body(key, child) }
    }

    static func appendPriority(_ priority: Priority?, variant: HashVariant, to output: inout [UInt8]) {
        guard let priority else { return }
        output.append(contentsOf: "priority:".utf8)
        appendValue(Leaf(priority), variant: variant, to: &output)
        output.append(UInt8(ascii: ":"))
    }

    static func appendValue(_ leaf: Leaf, variant: HashVariant, to output: inout [UInt8]) {
        switch leaf {
        case .bool(let flag):
            output.append(contentsOf: (flag ? "boolean:true" : "boolean:false").utf8)
        case .string(let text):
            output.append(contentsOf: "string:".utf8)
            output.append(contentsOf: text.utf8)
        case .number(let number):
            output.append(contentsOf: "number:".utf8)
            let bits = variant == .javaScript ? JSDoubleEncoding.bits(number) : number.bitPattern
            appendHex64(bits, to: &output)
        }
    }

    static func appendHex64(_ bits: UInt64, to output: inout [UInt8]) {
        let digits: StaticString = "0123456789abcdef"
        for shift in stride(from: 60, through: 0, by: -4) {
            output.append(digits.utf8Start[Int((bits >> UInt64(shift)) & 0xF)])
        }
    }

    static func numberDiffersInJavaScript(_ leaf: Leaf) -> Bool {
        guard case .number(let number) = leaf else { return false }
        return JSDoubleEncoding.bits(number) != number.bitPattern
    }
}
