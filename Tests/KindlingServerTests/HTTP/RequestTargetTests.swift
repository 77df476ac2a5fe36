import Testing

@testable import KindlingServer

/// Percent-decoding of request URIs: an escape is `%` and two hexadecimal digits, nothing else.
struct RequestTargetTests {
    @Test(arguments: [("a%2Fb", "a/b"), ("%e2%82%ac", "€"), ("%41%5a", "AZ"), ("plain", "plain")])
    func escapesDecodeAsUTF8(_ text: String, _ expected: String) {
        #expect(RequestTarget.percentDecode(Substring(text), plusIsSpace: false) == expected)
    }

    /// `UInt8(_:radix:)` would take a sign: "%+f" as 0x0F and "%-0" as a NUL byte.
    @Test(arguments: ["%+f", "%-0", "%+0", "%zz", "%4", "%", "%g0", "%ff"])
    func malformedEscapesAndInvalidUTF8AreRefused(_ text: String) {
        #expect(RequestTarget.percentDecode(Substring(text), plusIsSpace: false) == nil)
    }

    @Test func aPlusIsASpaceOnlyInFormEncoding() {
        #expect(RequestTarget.percentDecode("a+b", plusIsSpace: true) == "a b")
        #expect(RequestTarget.percentDecode("a+b", plusIsSpace: false) == "a+b")
        #expect(RequestTarget(uri: "/x%2By.json?orderBy=%22%24key%22&a=1+2", plusIsSpace: false).parameters == ["orderBy": "\"$key\"", "a": "1+2"])
        #expect(RequestTarget(uri: "/x%2By.json").path == "/x+y.json")
    }

    @Test func aPathSegmentThatDoesNotDecodeIsNamedAndKeptAsItCame() {
        let target = RequestTarget(uri: "/ok%20/a%ZZb/a%C3b.json")
        #expect(target.undecodableSegment == "a%ZZb")
        #expect(target.path == "/ok /a%ZZb/a%C3b.json")
        #expect(RequestTarget(uri: "/caf%C3%A9.json").undecodableSegment == nil)
    }
}
