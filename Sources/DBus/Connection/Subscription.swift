internal import CDBus

#if canImport(Glibc)
    import Glibc
#endif

/// One signal subscription: its rule, compiled to C strings for cheap matching, and where the
/// matching signals go. Confined to the connection thread.
final class Subscription {
    let id: UInt64
    let rule: DBusMatchRule
    /// Receives the signals of one dispatch round, in order.
    let deliver: @Sendable ([DBusSignal]) -> Void
    /// Signals matched during the current dispatch round, not yet delivered.
    var batch: [DBusSignal] = []
    let finish: @Sendable () -> Void
    let ownerCell: OwnerCell?

    private let sender: ContiguousArray<CChar>?
    private let interface: ContiguousArray<CChar>?
    private let member: ContiguousArray<CChar>?
    private let path: ContiguousArray<CChar>?
    private let pathNamespace: ContiguousArray<CChar>?
    private let arg0: ContiguousArray<CChar>?

    init(
        id: UInt64, rule: DBusMatchRule, ownerCell: OwnerCell?, deliver: @escaping @Sendable ([DBusSignal]) -> Void,
        finish: @escaping @Sendable () -> Void
    ) {
        self.id = id
        self.rule = rule
        self.deliver = deliver
        self.finish = finish
        self.ownerCell = ownerCell
        func c(_ string: String?) -> ContiguousArray<CChar>? { string.map { ContiguousArray($0.utf8CString) } }
        sender = ownerCell == nil ? c(rule.sender) : nil
        interface = c(rule.interface)
        member = c(rule.member)
        path = c(rule.path?.rawValue)
        pathNamespace = rule.pathNamespace?.rawValue == "/" ? nil : c(rule.pathNamespace?.rawValue)
        arg0 = c(rule.arg0)
    }

    /// Whether a signal with these header fields matches; `arg0` is read lazily.
    func matches(_ header: SignalHeader, arg0 readArg0: () -> UnsafePointer<CChar>?) -> Bool {
        if let ownerCell {
            guard let owner = ownerCell.owner, Self.equal(owner, header.sender) else { return false }
        } else if let sender, !Self.equal(sender, header.sender) {
            return false
        }
        if let interface, !Self.equal(interface, header.interface) { return false }
        if let member, !Self.equal(member, header.member) { return false }
        if let path, !Self.equal(path, header.path) { return false }
        if let pathNamespace {
            guard let actual = header.path else { return false }
            let matched = pathNamespace.withUnsafeBufferPointer { prefix -> Bool in
                let length = prefix.count - 1
                guard strncmp(prefix.baseAddress!, actual, length) == 0 else { return false }
                let next = actual[length]
                return next == 0 || next == CChar(UInt8(ascii: "/"))
            }
            if !matched { return false }
        }
        if let arg0 {
            guard let actual = readArg0(), Self.equal(arg0, actual) else { return false }
        }
        return true
    }

    @inline(__always)
    private static func equal(_ expected: ContiguousArray<CChar>, _ actual: UnsafePointer<CChar>?) -> Bool {
        guard let actual else { return false }
        return expected.withUnsafeBufferPointer { strcmp($0.baseAddress!, actual) == 0 }
    }
}
