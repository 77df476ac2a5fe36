/// The SDK's values are KindlingCore's (`JSONValue`, `JSONMember`, `Path`, `Node`), so an app
/// that imports `KindlingClient` gets them without a second import.
@_exported import KindlingCore
