import Timekeeping

/// A rate such as `"10/s"`, `"100/m"`, `"1/h"` or `"5/10s"`: at most `count` per `period`.
package struct RateLimit: Sendable, Hashable, CustomStringConvertible {
    package var count: Int
    package var period: Duration

    package init(count: Int, period: Duration) {
        self.count = count
        self.period = period
    }

    static let accepted = "a rate such as \"10/s\", \"100/m\", \"1/h\" or \"5/10s\" (count / period)"

    init?(text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let count = Int(parts[0].trimmingCharacters(in: .whitespaces)), count > 0 else {
            return nil
        }
        let unit = parts[1].trimmingCharacters(in: .whitespaces)
        let period: Duration?
        switch unit {
        case "s": period = .seconds(1)
        case "m": period = .seconds(60)
        case "h": period = .seconds(3600)
        default: period = DurationParser.parse(unit)
        }
        guard let period, period > .zero else { return nil }
        self.init(count: count, period: period)
    }

    package var description: String {
        switch period {
        case .seconds(1): "\(count)/s"
        case .seconds(60): "\(count)/m"
        case .seconds(3600): "\(count)/h"
        default: "\(count)/\(DurationParser.format(period))"
        }
    }
}

extension ObjectReader {
    func rateLimit(_ key: String) throws -> RateLimit? {
        guard let text = try string(key, expected: RateLimit.accepted) else { return nil }
        guard let limit = RateLimit(text: text) else {
            throw error(key, .invalidValue, "\"\(text)\" is not a rate; expected \(RateLimit.accepted)")
        }
        return limit
    }
}
