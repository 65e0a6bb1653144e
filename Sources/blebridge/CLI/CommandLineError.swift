/// What a command throws to end the process with a message.
///
/// The dispatcher prints `usage` errors followed by the command's usage text to standard error
/// and exits 64; `failure` prints one line (`blebridge: <message>`) and exits with `status`.
enum CommandLineError: Error, Equatable {
    /// The arguments were wrong: say which and what is accepted.
    case usage(String)
    /// The command could not do its job: say what happened and what to do about it.
    case failure(String, status: ExitStatus = .failure)
}
