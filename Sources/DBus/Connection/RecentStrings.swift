#if canImport(Glibc)
    import Glibc
#endif

/// Remembers the last C string seen in each of a few slots with its Swift `String`, so a stream
/// of signals from the same object (a GATT characteristic notifying) reuses the same path,
/// interface and member strings instead of allocating them per signal. Confined to the
/// connection thread.
final class RecentStrings {
    enum Slot: Int, CaseIterable {
        case sender, path, interface, member, firstArgument
    }

    private var bytes = [ContiguousArray<CChar>](repeating: [0], count: Slot.allCases.count)
    private var strings = [String](repeating: "", count: Slot.allCases.count)

    func string(_ pointer: UnsafePointer<CChar>, _ slot: Slot) -> String {
        let index = slot.rawValue
        let same = bytes[index].withUnsafeBufferPointer { strcmp($0.baseAddress!, pointer) == 0 }
        if same { return strings[index] }
        let length = strlen(pointer)
        bytes[index] = ContiguousArray(UnsafeBufferPointer(start: pointer, count: length + 1))
        let string = String(cString: pointer)
        strings[index] = string
        return string
    }
}
