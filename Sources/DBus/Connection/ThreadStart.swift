/// What the new thread needs to begin.
final class ThreadStart: Sendable {
    let loop: ConnectionLoop
    let address: String
    let ready: CheckedContinuation<String, any Error>

    init(loop: ConnectionLoop, address: String, ready: CheckedContinuation<String, any Error>) {
        self.loop = loop
        self.address = address
        self.ready = ready
    }

    func run() {
        let state = LoopState(loop: loop)
        do throws(DBusError) {
            let name = try state.connect(address: address)
            ready.resume(returning: name)
        } catch {
            for command in loop.closeInbox() { command(state) }
            ready.resume(throwing: error)
            return
        }
        state.run()
        // Anything submitted after the end sees a closed state and fails cleanly.
        for command in loop.closeInbox() { command(state) }
    }
}
