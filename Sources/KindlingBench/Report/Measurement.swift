/// One figure of a run: what, how much, and in what unit.
public struct Measurement: Codable, Sendable, Equatable {
    public var name: String
    public var value: Double
    public var unit: String

    public init(_ name: String, _ value: Double, _ unit: String) {
        self.name = name
        self.value = value
        self.unit = unit
    }
}
