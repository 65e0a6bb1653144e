/// The arguments after the command name, consumed by the command as it parses them.
///
/// Options may appear anywhere before `--`, as `--name value` or `--name=value`; everything
/// after `--` is positional. A command reads its options and flags first, then its positionals,
/// then calls ``finish()`` so that anything left over is reported as a usage error.
struct ArgumentList {
    private(set) var remaining: [String]

    init(_ arguments: [String]) {
        self.remaining = arguments
    }

    var isEmpty: Bool { remaining.isEmpty }

    /// Index of `--` (the end of options), or the end of the list.
    private var endOfOptions: Int { remaining.firstIndex(of: "--") ?? remaining.endIndex }

    /// Removes `--name value`, `--name=value` (or `-s value`) and returns the value; nil when absent.
    /// When given more than once, the last one wins.
    mutating func option(_ name: String, short: String? = nil) throws -> String? {
        try options(name, short: short).last
    }

    /// Removes every `--name value`, `--name=value` (or `-s value`) and returns the values in order.
    mutating func options(_ name: String, short: String? = nil) throws -> [String] {
        var found: [String] = []
        var index = 0
        while index < endOfOptions {
            let argument = remaining[index]
            if argument == "--\(name)" || (short.map { argument == "-\($0)" } ?? false) {
                guard index + 1 < endOfOptions else {
                    throw CommandLineError.usage("option \(argument) needs a value")
                }
                found.append(remaining[index + 1])
                remaining.removeSubrange(index...(index + 1))
            } else if argument.hasPrefix("--\(name)=") {
                found.append(String(argument.dropFirst(name.count + 3)))
                remaining.remove(at: index)
            } else {
                index += 1
            }
        }
        return found
    }

    /// An option converted by `parse`; a value `parse` rejects is a usage error naming `expected`.
    mutating func option<Value>(
        _ name: String, short: String? = nil, expected: String, parse: (String) -> Value?
    ) throws -> Value? {
        guard let text = try option(name, short: short) else { return nil }
        guard let value = parse(text) else {
            throw CommandLineError.usage("--\(name) \(text): expected \(expected)")
        }
        return value
    }

    /// Removes every `--name` (or `-s`) and tells whether there was one.
    mutating func flag(_ name: String, short: String? = nil) -> Bool {
        var found = false
        var index = 0
        while index < endOfOptions {
            let argument = remaining[index]
            if argument == "--\(name)" || (short.map { argument == "-\($0)" } ?? false) {
                found = true
                remaining.remove(at: index)
            } else {
                index += 1
            }
        }
        return found
    }

    /// Removes and returns the first positional argument: one not starting with `-` before `--`
    /// (a lone `-` counts as positional), or the first one after `--`.
    mutating func positional() -> String? {
        let end = endOfOptions
        if let index = remaining[..<end].firstIndex(where: { $0 == "-" || !$0.hasPrefix("-") }) {
            return remaining.remove(at: index)
        }
        if end < remaining.endIndex, end + 1 < remaining.endIndex {
            return remaining.remove(at: end + 1)
        }
        return nil
    }

    /// Throws a usage error naming the first argument nobody consumed.
    func finish() throws {
        for argument in remaining where argument != "--" {
            if argument.hasPrefix("-") && argument != "-" {
                throw CommandLineError.usage("unknown option \(argument)")
            }
            throw CommandLineError.usage("unexpected argument \(argument)")
        }
    }
}
