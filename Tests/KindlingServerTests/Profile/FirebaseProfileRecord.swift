import Foundation

/// A profiler record as the Firebase CLI's `database:profile` reads it, decoded by this test's
/// own reader from the documented format (firebase-tools' `src/profileReport.ts` and the
/// operation types of firebase.google.com/docs/cli/database-profile), not by the server's
/// encoder: every `data: ` line of the stream is one JSON object; `name` and `timestamp` are
/// always there, the rest where the kind has them. Decoded with Foundation's `JSONDecoder`, so
/// a field of the wrong JSON type fails the read.
struct FirebaseProfileRecord: Decodable, Equatable {
    struct Query: Decodable, Equatable {
        struct Index: Decodable, Equatable {
            var path: [String]?
        }

        var index: Index?
        var orderBy: String?
    }

    struct Client: Decodable, Equatable {
        var remoteAddress: String?
    }

    var name: String
    var timestamp: Double
    var path: [String]?
    var millis: Double?
    var pendingTime: Double?
    var bytes: Double?
    var allowed: Bool?
    var querySet: [Query]?
    var unIndexed: Bool?
    var clientsUpdated: Double?
    var client: Client?

    /// The path as the report names it.
    var pathString: String { "/" + (path ?? []).joined(separator: "/") }

    /// The records in server-sent event blocks, read as the Firebase CLI reads its saved stream:
    /// line by line, every line that starts with `data: ` taken as JSON, `null` (a keep-alive)
    /// and objects without a `name` (Kindling's `gap`) passed over.
    static func records(in blocks: [String]) throws -> [FirebaseProfileRecord] {
        var records: [FirebaseProfileRecord] = []
        for block in blocks {
            for line in block.split(separator: "\n") where line.hasPrefix("data: ") {
                let json = Data(line.dropFirst(6).utf8)
                guard let object = try JSONSerialization.jsonObject(with: json, options: .fragmentsAllowed) as? [String: Any], object["name"] != nil
                else {
                    continue
                }
                records.append(try JSONDecoder().decode(FirebaseProfileRecord.self, from: json))
            }
        }
        return records
    }
}
