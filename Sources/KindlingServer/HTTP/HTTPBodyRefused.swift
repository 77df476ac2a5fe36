/// Sent down the pipeline when the body budget (`HTTPBodyBudgetHandler`) refuses a request's
/// body while it is still arriving: the REST handler lets go of what it gathered of the body at
/// once, rather than when the connection closes, which waits for the rest of the body to be
/// read and dropped (up to the body timeout).
struct HTTPBodyRefused {}
