/// A value bound to a statement parameter.
package enum SQLiteValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

extension SQLiteValue: ExpressibleByIntegerLiteral, ExpressibleByStringLiteral, ExpressibleByNilLiteral {
    package init(integerLiteral value: Int64) { self = .integer(value) }
    package init(stringLiteral value: String) { self = .text(value) }
    package init(nilLiteral: ()) { self = .null }
}
