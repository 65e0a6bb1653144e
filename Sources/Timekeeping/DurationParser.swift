import Foundation

/// Parses the human durations used throughout the configuration: `"250ms"`, `"30s"`, `"10m"`,
/// `"2h"`, `"7d"`, and combinations such as `"1h30m"`.
package enum DurationParser {
    /// What the configuration accepts, for error messages.
    package static let acceptedForms = "a number followed by ms, s, m, h or d, e.g. \"500ms\", \"30s\", \"10m\", \"7d\""

    package static func parse(_ text: String) -> Duration? {
        var total: Duration = .zero
        var digits = ""
        var sawPart = false
        let characters = Array(text.trimmingCharacters(in: .whitespaces))
        guard !characters.isEmpty else { return nil }
        var index = 0
        while index < characters.count {
            let character = characters[index]
            if character.isASCII, character.isNumber {
                digits.append(character)
                index += 1
                continue
            }
            guard let value = Int64(digits), value >= 0 else { return nil }
            digits = ""
            let unit: Duration
            if character == "m", index + 1 < characters.count, characters[index + 1] == "s" {
                unit = .milliseconds(1)
                index += 2
            } else {
                switch character {
                case "s": unit = .seconds(1)
                case "m": unit = .seconds(60)
                case "h": unit = .seconds(3600)
                case "d": unit = .seconds(86400)
                default: return nil
                }
                index += 1
            }
            guard value < 1_000_000_000 else { return nil }
            total += unit * value
            sawPart = true
        }
        guard digits.isEmpty, sawPart else { return nil }
        return total
    }

    /// Formats a duration back in the shortest unit that is exact: `30s`, `10m`, `250ms`.
    package static func format(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        if attoseconds != 0 || seconds == 0 {
            return "\(duration.inMilliseconds)ms"
        }
        for (unit, suffix) in [(Int64(86400), "d"), (3600, "h"), (60, "m")] where seconds % unit == 0 {
            return "\(seconds / unit)\(suffix)"
        }
        return "\(seconds)s"
    }
}
