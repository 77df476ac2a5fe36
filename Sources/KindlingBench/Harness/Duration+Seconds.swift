extension Duration {
    /// The duration as floating-point seconds, for rates.
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
