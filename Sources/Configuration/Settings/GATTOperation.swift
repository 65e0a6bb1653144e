/// What may be done to a characteristic through a command or a raw GATT request.
package enum GATTOperation: String, ConfigurationEnum, Comparable {
    case read
    case write
    case notify

    package static func < (lhs: GATTOperation, rhs: GATTOperation) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
