/// The k children a limited query keeps, chosen while scanning all n in O(n log k) instead of
/// sorting all n: a heap whose top is the worst child kept, replaced whenever a better one comes.
///
/// Written here because no kept library offers a bounded selection over a custom comparison.
struct WindowSelection {
    private let capacity: Int
    private let fromEnd: Bool
    private var heap: [ScannedChild] = []

    /// Keeps the `capacity` first children in query order, or the last ones when `fromEnd`.
    init(keeping capacity: Int, fromEnd: Bool) {
        self.capacity = capacity
        self.fromEnd = fromEnd
        heap.reserveCapacity(min(capacity, 4096))
    }

    /// True when `a` is a worse pick than `b`: later in query order when keeping the first,
    /// earlier when keeping the last. The heap's top is its worst pick.
    private func isWorse(_ a: ScannedChild, _ b: ScannedChild) -> Bool {
        let order = ScannedChild.compare(a, b)
        return fromEnd ? order < 0 : order > 0
    }

    mutating func offer(_ child: ScannedChild) {
        if heap.count < capacity {
            heap.append(child)
            siftUp(heap.count - 1)
        } else if isWorse(heap[0], child) {
            heap[0] = child
            siftDown(0)
        }
    }

    /// The children kept, in query order.
    func window() -> [ScannedChild] {
        heap.sorted { ScannedChild.compare($0, $1) < 0 }
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard isWorse(heap[child], heap[parent]) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            var worst = left
            if left + 1 < heap.count, isWorse(heap[left + 1], heap[left]) { worst = left + 1 }
            guard isWorse(heap[worst], heap[parent]) else { return }
            heap.swapAt(worst, parent)
            parent = worst
        }
    }
}
