import KindlingCore

/// A namespace's connections and what each maps to (where its messages go), looked up once
/// per recipient of every event.
///
/// Written by hand although the standard `Dictionary` does the same: `Dictionary` hashes every
/// key with the process's seeded SipHash, and those lookups were 6% of the server's CPU in a
/// fan-out to 1,000 listeners (BENCHMARKS.md, round 11). Seeded hashing guards tables whose keys
/// clients choose; a `ConnectionID` is a counter the server assigns, so a multiplicative hash
/// spreads the keys evenly and no client can crowd them together. Open addressing with linear
/// probing, at most half full; a removal shifts the entries after it back, so no tombstones
/// build up, and the table shrinks again when it is mostly empty.
struct ConnectionTable<Value>: Sequence {
    /// The keys by slot; `free` where the slot is empty.
    private var keys: [Int] = []
    private var values: [Value?] = []
    /// How many entries the table holds.
    private(set) var count = 0

    /// No connection has this identity (they count up from 1).
    private static var free: Int { Int.min }
    private static var smallest: Int { 8 }

    init() {}

    var isEmpty: Bool { count == 0 }

    subscript(key: ConnectionID) -> Value? {
        get {
            guard let slot = slot(of: key.value) else { return nil }
            return values[slot]
        }
        set {
            if let newValue {
                insert(newValue, for: key.value)
            } else {
                removeValue(forKey: key)
            }
        }
    }

    /// Removes `key`'s entry; returns its value, or nil when there was none.
    @discardableResult
    mutating func removeValue(forKey key: ConnectionID) -> Value? {
        guard let slot = slot(of: key.value) else { return nil }
        let removed = values[slot]
        count -= 1
        keys[slot] = Self.free
        values[slot] = nil
        if keys.count > Self.smallest, count * 8 < keys.count {
            // Every entry is placed again, so the gap needs no mending.
            resize(to: keys.count / 2)
            return removed
        }
        // Backward shift: each entry after the hole that may live there moves back into it.
        let mask = keys.count - 1
        var hole = slot
        var next = slot
        while true {
            next = (next + 1) & mask
            let key = keys[next]
            guard key != Self.free else { break }
            let home = self.home(of: key)
            // The entry stays when its home lies cyclically after the hole, up to where it is.
            let stays = hole <= next ? (home > hole && home <= next) : (home > hole || home <= next)
            guard !stays else { continue }
            keys[hole] = key
            values[hole] = values[next]
            keys[next] = Self.free
            values[next] = nil
            hole = next
        }
        return removed
    }

    private mutating func insert(_ value: Value, for key: Int) {
        assert(key != Self.free, "no connection has the identity that marks a free slot")
        if let slot = slot(of: key) {
            values[slot] = value
            return
        }
        if (count + 1) * 2 > keys.count { resize(to: Swift.max(Self.smallest, keys.count * 2)) }
        place(key, value)
        count += 1
    }

    /// Puts a key known to be absent in the first free slot from its home.
    private mutating func place(_ key: Int, _ value: Value) {
        let mask = keys.count - 1
        var slot = home(of: key)
        while keys[slot] != Self.free { slot = (slot + 1) & mask }
        keys[slot] = key
        values[slot] = value
    }

    private mutating func resize(to slots: Int) {
        let oldKeys = keys
        let oldValues = values
        keys = Array(repeating: Self.free, count: slots)
        values = Array(repeating: nil, count: slots)
        for (index, key) in oldKeys.enumerated() where key != Self.free {
            if let value = oldValues[index] { place(key, value) }
        }
    }

    /// The slot holding `key`, if any.
    private func slot(of key: Int) -> Int? {
        guard !keys.isEmpty else { return nil }
        let mask = keys.count - 1
        var slot = home(of: key)
        while true {
            let found = keys[slot]
            if found == key { return slot }
            if found == Self.free { return nil }
            slot = (slot + 1) & mask
        }
    }

    /// Where `key` is looked for first (Fibonacci hashing: the key times 2⁶⁴/φ, its top log2(slots)
    /// bits). Only called with slots, a power of two.
    private func home(of key: Int) -> Int {
        let shift = UInt64(64 - keys.count.trailingZeroBitCount)
        return Int(truncatingIfNeeded: (UInt64(bitPattern: Int64(key)) &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    struct Iterator: IteratorProtocol {
        fileprivate let keys: [Int]
        fileprivate let values: [Value?]
        fileprivate var index = 0

        mutating func next() -> (key: ConnectionID, value: Value)? {
            while index < keys.count {
                defer { index += 1 }
                // A slot holds a value exactly when it holds a key.
                if let value = values[index] {
                    return (ConnectionID(value: keys[index]), value)
                }
            }
            return nil
        }
    }

    /// The entries in no particular order (a copy: the table may change meanwhile).
    func makeIterator() -> Iterator {
        Iterator(keys: keys, values: values)
    }
}

extension ConnectionTable: Sendable where Value: Sendable {}
