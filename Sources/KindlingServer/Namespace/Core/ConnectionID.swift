import KindlingCore

/// A client connection's identity within one server process: the subscriber of the namespaces'
/// `DatabaseState`s (defined in KindlingCore, which compiles `DatabaseState` for it).
public typealias ConnectionID = SubscriberID
