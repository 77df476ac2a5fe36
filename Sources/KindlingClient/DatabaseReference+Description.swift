/// A reference prints as its URL, as Firebase's does.
extension DatabaseReference: CustomStringConvertible {
    public var description: String { url }
}
