/// What a watched descriptor is ready for (``EventLoop/watch(fd:interest:_:)``), or what a watch
/// asks to be told about.
package struct Readiness: OptionSet, Sendable, Hashable {
    package let rawValue: UInt32
    package init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Data (or an end of file) can be read without blocking.
    package static let readable = Readiness(rawValue: 1 << 0)
    /// Data can be written without blocking.
    package static let writable = Readiness(rawValue: 1 << 1)
    /// The peer hung up (reported whether asked for or not).
    package static let hangUp = Readiness(rawValue: 1 << 2)
    /// The descriptor has an error pending, or could not be watched at all (a closed or
    /// unsupported descriptor): reported whether asked for or not.
    package static let error = Readiness(rawValue: 1 << 3)

    // Sets of the options as constants: outside this module an array literal of them is built by
    // unspecialised generic code, about three allocations each time (the MQTT thread's turn built
    // one per turn, issue 20).
    /// Data, the peer's hang-up or an error: whatever a reader must look at.
    package static let readableOrClosed: Readiness = [.readable, .hangUp, .error]
    /// Readable and writable: the interest of a watch with output waiting.
    package static let readableAndWritable: Readiness = [.readable, .writable]
}
