import KindlingCore

extension DataSnapshot {
    /// The data as a `Decodable` model, as Firebase's `data(as:)` reads it.
    ///
    /// The model sees the plain value (no priorities; an object keyed `"0"`, `"1"`, … as an
    /// array). Nothing at the location is `null`, which an optional model reads as nil
    /// (`data(as: Spot?.self)`) and anything else refuses with `valueNotFound`.
    /// - Parameters:
    ///   - type: The model type.
    ///   - decoder: Carries the date strategy; by default dates are milliseconds since 1970.
    public func data<T: Decodable>(as type: T.Type = T.self, decoder: JSONValueDecoder = JSONValueDecoder())
        throws(DecodingError) -> T
    {
        try decoder.decode(type, from: jsonValue)
    }
}
