extension FuzzInput {
    /// Picks one of `choices` for the input: by name when the input is `name NUL rest` with a
    /// known name (the seed corpora's form, from the tests' vectors), else by the first byte,
    /// with the rest after it.
    public func choose<T>(among choices: [T], name: (T) -> String) -> (choice: T, rest: [UInt8])? {
        let (head, tail) = splitAtNUL
        if let named = choices.first(where: { Array(name($0).utf8) == head }) {
            return (named, tail)
        }
        guard let (selector, rest) = selectorAndRest, !choices.isEmpty else { return nil }
        return (choices[Int(selector) % choices.count], rest)
    }
}
