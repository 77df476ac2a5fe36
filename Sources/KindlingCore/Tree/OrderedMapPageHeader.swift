/// The fixed part of an `OrderedMapPage`, stored ahead of its entries in the same allocation.
struct OrderedMapPageHeader<K: OrderedKey> {
    /// The entries in the subtree below the page (its own entries for a leaf page).
    var count: Int
    /// The entries in this page: key and node for a leaf page; for an inner page, each child
    /// page's first key (its node unused and empty), so a search reads only the page's own memory.
    var entryCount: Int32
    /// The entries the allocation has room for.
    var capacity: Int32
    /// The child pages of an inner page, in key order; empty (no allocation) for a leaf page.
    var children: [OrderedMapPage<K>]
}
