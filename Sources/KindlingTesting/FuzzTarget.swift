import KindlingServer

/// The inputs Kindling is fuzzed on, each with seeds (valid and near-valid inputs the mutations
/// start from) and the entry point that must survive any bytes.
public enum FuzzTarget: String, Sendable, CaseIterable {
    case json
    case webSocket = "websocket"
    case rest

    /// Runs one input.
    @discardableResult
    public func run(_ bytes: [UInt8]) -> Bool {
        switch self {
        case .json: FuzzEntryPoints.json(bytes)
        case .webSocket: FuzzEntryPoints.webSocket(bytes)
        case .rest: FuzzEntryPoints.rest(bytes)
        }
    }

    /// Valid inputs, and some famous for breaking parsers.
    public var seeds: [String] {
        switch self {
        case .json:
            return [
                #"{"a":1,"b":[true,false,null],"c":{"d":"e\u00e9\ud83d\ude00"}}"#, "[]", "{}", "0", "-0", "1e308", "-1.5e-308",
                "9223372036854775807", "1e400", #""\uD800""#, #"{".value":1,".priority":"p"}"#, #"{".sv":"timestamp"}"#,
                #"{"x":{".sv":{"increment":1.7976931348623157e308}}}"#, "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
                #"{"1":1,"2":2,"0":0}"#, " \t\n true ", "nul", #"{"a":}"#,
            ]
        case .webSocket:
            return [
                #"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/s","q":{"i":".value","sp":2,"l":9223372036854775807,"vf":"l"},"t":1,"h":""}}}"#,
                #"{"t":"d","d":{"r":2,"a":"g","b":{"p":"/s","q":{"i":".key","sp":"b","sn":"x","l":2147483647,"vf":"r"}}}}"#,
                #"{"t":"d","d":{"r":3,"a":"p","b":{"p":"/n","d":{".sv":{"increment":9007199254740993}}}}}"#,
                #"{"t":"d","d":{"r":4,"a":"m","b":{"p":"/s","d":{"a/b":1,"e":null,"x/.priority":5}}}}"#,
                #"{"t":"d","d":{"r":5,"a":"p","b":{"p":"/s","d":{"v":1},"h":"abc"}}}"#,
                #"{"t":"d","d":{"r":6,"a":"o","b":{"p":"/s/a","d":{".sv":"timestamp"}}}}"#,
                #"{"t":"d","d":{"r":7,"a":"om","b":{"p":"/s","d":{"z":{".value":1,".priority":1e308}}}}}"#,
                #"{"t":"d","d":{"r":1e300,"a":"n","b":{"p":"/s","q":{"i":"e/h","ep":9,"en":"[MAX_NAME]","ein":false}}}}"#,
                #"{"t":"d","d":{"r":8,"a":"auth","b":{"cred":"eyJhbGciOiJub25lIn0.eyJ1aWQiOiJ1In0."}}}"#,
                #"{"t":"d","d":{"r":9,"a":"g","b":{"p":"/.info/serverTimeOffset"}}}"#,
                #"{"t":"c","d":{"t":"p","d":{}}}"#,
                "2\u{0}{\"t\":\"d\",\"d\":{\"r\":1,\0\"a\":\"s\",\"b\":{}}}", "0", "999999",
            ]
        case .rest:
            return [
                "GET /s.json?ns=t&orderBy=%22$key%22&startAt=%22b%22&limitToFirst=9223372036854775807\n\n",
                "GET /s.json?orderBy=%22$value%22&startAfter=1,%22a%22&limitToLast=2&print=pretty\nAccept: text/event-stream\n\n",
                "GET /s.json?orderBy=%22e/h%22&equalTo=9&shallow=true&format=export\nX-Firebase-ETag: true\n\n",
                "GET /.json?shallow=true&limitToFirst=2&startAfter=a\nHost: mydb.localhost:9000\n\n",
                "PUT /n.json?print=silent\nContent-Type: application/json\n\n{\".sv\":{\"increment\":-1e308}}",
                "POST /s.json?x-http-method-override=PATCH\n\n{\"a/b\":1,\"c\":null}",
                "PATCH /s.json\n\n{\"d/.priority\":3}",
                "DELETE /s/a.json\nIf-Match: \"abc\"\n\n",
                "PUT /s/x.json?auth=eyJhbGciOiJub25lIn0.eyJleHAiOjFlMzAwfQ.&auth_variable_override=%7B%22uid%22:1%7D\n\n[1,2,{\"3\":3}]",
                "GET /%ZZ/%C3%28.json?ns=%0A&print=%\n\n", "FOO /a.json\n\n", "GET /a\n\n",
            ]
        }
    }
}
