import Foundation
import KindlingCore
import Synchronization

/// The data a transaction block reads and changes, as Firebase's `MutableData`: set `value` (or
/// the typed `jsonValue`) and return `TransactionResult.success(withValue:)`. A child's
/// `MutableData` (`childData(byAppendingPath:)`) writes through to its parent, as in Firebase.
public final class MutableData: Sendable {
    /// The whole transaction's data, shared by a `MutableData` and its children.
    private final class Tree: Sendable {
        let state: Mutex<(root: JSONValue, error: DatabaseError?)>
        init(_ root: JSONValue) { state = Mutex((root, nil)) }
    }

    private let tree: Tree
    private let keys: [String]
    /// The location's key (nil at the root of the database).
    public let key: String?

    init(value: JSONValue, key: String?) {
        tree = Tree(value)
        keys = []
        self.key = key
    }

    private init(tree: Tree, keys: [String]) {
        self.tree = tree
        self.keys = keys
        key = keys.last
    }

    /// The data as Firebase's `value` holds it (`[String: Any]`, `[Any]`, `String`, `NSNumber`;
    /// `NSNull` for none). Set it to any of those, or to nil to delete; a value JSON cannot hold
    /// fails the transaction with `.invalidArgument`.
    public var value: Any? {
        get { jsonValue.foundationObject }
        set {
            do throws(DatabaseError) {
                jsonValue = try JSONValue(foundationObject: newValue)
            } catch {
                tree.state.withLock { $0.error = error }
            }
        }
    }

    /// The data, typed.
    public var jsonValue: JSONValue {
        get { tree.state.withLock { Self.value(in: $0.root, at: keys[...]) } }
        set { tree.state.withLock { $0.root = Self.replacing(in: $0.root, at: keys[...], with: newValue) } }
    }

    /// The number of children.
    public var childrenCount: UInt {
        if case .object(let members) = jsonValue { return UInt(members.count) }
        if case .array(let elements) = jsonValue { return UInt(elements.count) }
        return 0
    }

    /// Whether the data has children.
    public func hasChildren() -> Bool { childrenCount > 0 }

    /// Whether the child at the relative path (`"a/b"`) has data.
    public func hasChild(atPath path: String) -> Bool {
        childData(byAppendingPath: path).jsonValue != .null
    }

    /// The child at a relative path, whose changes are changes to this data.
    public func childData(byAppendingPath path: String) -> MutableData {
        MutableData(tree: tree, keys: keys + path.split(separator: "/").map(String.init))
    }

    /// The children, each writing through to this data.
    public var children: [MutableData] {
        guard case .object(let members) = jsonValue else { return [] }
        return members.map { MutableData(tree: tree, keys: keys + [$0.key]) }
    }

    /// The whole data and the first value set that JSON could not hold.
    var result: (value: JSONValue, error: DatabaseError?) { tree.state.withLock { ($0.root, $0.error) } }

    private static func value(in root: JSONValue, at keys: ArraySlice<String>) -> JSONValue {
        guard let first = keys.first else { return root }
        switch root {
        case .object(let members): return members.first { $0.key == first }.map { value(in: $0.value, at: keys.dropFirst()) } ?? .null
        case .array(let elements):
            guard let index = Int(first), elements.indices.contains(index) else { return .null }
            return value(in: elements[index], at: keys.dropFirst())
        default: return .null
        }
    }

    private static func replacing(in root: JSONValue, at keys: ArraySlice<String>, with value: JSONValue) -> JSONValue {
        guard let first = keys.first else { return value }
        var members: [JSONMember]
        switch root {
        case .object(let existing): members = existing
        case .array(let elements): members = elements.enumerated().map { JSONMember(String($0.offset), $0.element) }
        default: members = []
        }
        let child = members.first { $0.key == first }?.value ?? .null
        let replaced = replacing(in: child, at: keys.dropFirst(), with: value)
        members.removeAll { $0.key == first }
        if replaced != .null { members.append(JSONMember(first, replaced)) }
        return members.isEmpty ? .null : .object(members)
    }
}
