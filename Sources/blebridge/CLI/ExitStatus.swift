/// A process exit status. The named values follow BSD `sysexits.h`, which systemd and shell
/// scripts understand.
struct ExitStatus: RawRepresentable, Hashable, Sendable {
    var rawValue: Int32

    static let success = ExitStatus(rawValue: 0)
    /// A runtime failure with no more specific code.
    static let failure = ExitStatus(rawValue: 1)
    /// EX_USAGE: the command line was wrong; help went to standard error.
    static let usage = ExitStatus(rawValue: 64)
    /// EX_DATAERR: input data (other than the configuration) was malformed.
    static let dataError = ExitStatus(rawValue: 65)
    /// EX_NOINPUT: an input file did not exist or was unreadable.
    static let noInput = ExitStatus(rawValue: 66)
    /// EX_UNAVAILABLE: a service the command needs (D-Bus, BlueZ, the broker) is unavailable.
    static let unavailable = ExitStatus(rawValue: 69)
    /// EX_SOFTWARE: an internal error.
    static let software = ExitStatus(rawValue: 70)
    /// EX_CONFIG: the configuration is invalid.
    static let configuration = ExitStatus(rawValue: 78)
}
