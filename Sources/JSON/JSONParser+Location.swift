extension JSONParser.Failure {
    /// Where the failure is in `bytes` (the text that was parsed): 1-based line, and 1-based
    /// column counted in characters (a multi-byte UTF-8 character is one column).
    public func location(in bytes: [UInt8]) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for byte in bytes.prefix(offset) {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }
}
