/// The life of one realtime WebSocket connection, as a value: which phase it is in, and what the
/// handler (`WebSocketSessionHandler`, the shell that owns the socket) must do at each event.
/// No I/O here, so every transition is tested without a socket (`WebSocketSessionStateTests`).
struct WebSocketSessionState {
    /// What the connection is to its namespace.
    enum Role {
        /// A session of its own; `lastSession` is the one the client says it had before (`ls`).
        case session(lastSession: SessionID?)
        /// The carrier of a long-polling session it takes over (`s=`).
        case takeover(LongPollSession)
    }

    enum Phase: Equatable {
        /// Not in a pipeline yet.
        case idle
        /// Reading requests and sending.
        case open
        /// The reader fell behind its pause mark: no requests are read until it catches up.
        case readingPaused
        /// Closing: nothing more is taken from the client or given to it (but a close frame).
        case closing
        /// The socket closed.
        case closed
    }

    /// What the handler must do when the connection joins its pipeline.
    enum Start {
        /// Attach to the namespace as a new session (closing `lastSession` if still open) and
        /// send the handshake.
        case attach(lastSession: SessionID?)
        /// Offer to take the long-polling session over (it answers with `a`, or closes this).
        case takeOver(LongPollSession)
    }

    /// What the handler must do when the reader fell behind.
    enum Backlog: Equatable {
        /// Nothing more than before.
        case none
        /// Stop reading requests until the reader catches up.
        case stopReading
        /// Disconnect without a close frame (it would queue behind what the reader does not take),
        /// after stopping reading if it had not.
        case disconnect(DisconnectCause, stopReading: Bool)
    }

    /// Why a reader that fell behind is disconnected.
    enum DisconnectCause: Equatable {
        /// More than its own limit waits for it.
        case overLimit
        /// The server-wide budget of bytes waiting for slow readers cannot hold its backlog.
        case budget
    }

    /// What the handler must do when the socket closed.
    enum End {
        /// Hand the namespace what the connection sent, then detach it (its onDisconnect writes run).
        case detach
        /// Tell the long-polling session its WebSocket is gone.
        case loseTakeover(LongPollSession)
    }

    private(set) var phase = Phase.idle
    let role: Role

    init(role: Role) { self.role = role }

    /// Whether what the client sends is taken, and the server's messages go out.
    var isOpen: Bool { phase == .open || phase == .readingPaused }

    /// Whether the connection is counted among the open ones (from its start to its end).
    var isCounted: Bool { phase != .idle && phase != .closed }

    /// The connection joined its pipeline.
    mutating func start() -> Start {
        phase = .open
        switch role {
        case .session(let lastSession): return .attach(lastSession: lastSession)
        case .takeover(let session): return .takeOver(session)
        }
    }

    /// The socket holds more than the pause mark unsent: over the connection's limit
    /// (`overLimit`) or not, and held against the server-wide budget or not.
    mutating func fellBehind(overLimit: Bool, budgetHolds: Bool) -> Backlog {
        guard isOpen else { return .none }
        let stops = phase == .open
        phase = .readingPaused
        let cause: DisconnectCause
        if overLimit {
            cause = .overLimit
        } else if !budgetHolds {
            cause = .budget
        } else {
            return stops ? .stopReading : .none
        }
        phase = .closing
        return .disconnect(cause, stopReading: stops)
    }

    /// The reader caught up (below half the pause mark); true when reading must start again.
    mutating func caughtUp() -> Bool {
        guard phase == .readingPaused else { return false }
        phase = .open
        return true
    }

    /// The server closes the connection with a close frame: nil when it is closing already,
    /// else whether reading must resume first (requests sent while reading was paused must be
    /// read, and dropped: closing a socket with unread bytes resets it, and the reset throws away
    /// what the client had not yet read of its answers and of the close frame).
    mutating func close() -> Bool? {
        guard isOpen else { return nil }
        let paused = phase == .readingPaused
        phase = .closing
        return paused
    }

    /// The connection is closed without a close frame (silent too long, or a socket error);
    /// false when it is closing already.
    mutating func closeAbruptly() -> Bool {
        guard isOpen else { return false }
        phase = .closing
        return true
    }

    /// The socket closed. Nil when it was never started (nothing to undo).
    mutating func end() -> End? {
        let started = isCounted
        phase = .closed
        guard started else { return nil }
        switch role {
        case .session: return .detach
        case .takeover(let session): return .loseTakeover(session)
        }
    }
}
