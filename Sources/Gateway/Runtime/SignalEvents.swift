import Dispatch
import Foundation
import Synchronization

/// POSIX signals as an `AsyncStream`, delivered by a dispatch source (not an async-signal
/// handler), so the gateway can react to SIGTERM / SIGINT / SIGHUP on its own terms.
package enum SignalEvents {
    /// Ignores the default action of `signals` and yields each delivery.
    package static func stream(_ signals: [Int32]) -> AsyncStream<Int32> {
        AsyncStream { continuation in
            let queue = DispatchQueue(label: "blebridge.signals")
            let sources = signals.map { number in
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { continuation.yield(number) }
                source.resume()
                return source
            }
            // The sources are only touched again to cancel them, under the mutex.
            let owned = Mutex(sources)
            continuation.onTermination = { _ in
                owned.withLock { sources in
                    for source in sources { source.cancel() }
                }
            }
        }
    }
}
