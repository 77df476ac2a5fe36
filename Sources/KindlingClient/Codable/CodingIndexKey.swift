/// A coding key for array positions and for `superEncoder`.
struct CodingIndexKey: CodingKey {
    let stringValue: String
    let intValue: Int?
    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = Int(stringValue)
    }
    init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }
    static let `super` = CodingIndexKey(stringValue: "super")
}
