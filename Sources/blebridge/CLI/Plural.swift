/// `1 device`, `2 devices`: a count with its noun in the right number (regular plurals only).
func counted(_ count: Int, _ noun: String) -> String {
    "\(count) \(noun)\(count == 1 ? "" : "s")"
}
