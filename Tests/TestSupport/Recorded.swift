import Synchronization

/// Values appended by several tasks, read by the test.
package final class Recorded<Value: Sendable>: Sendable {
    package init() {}

    private let values = Mutex<[Value]>([])

    package func append(_ value: Value) { values.withLock { $0.append(value) } }
    package var all: [Value] { values.withLock { $0 } }
}
