import Foundation
import Synchronization
import Testing

@testable import BlueZ

/// The fan-out of one characteristic's notifications, driven as the notify socket's reader drives it.
struct NotificationChannelTests {
    /// What a handler listener received.
    final class Received: Sendable {
        private let values = Mutex<[UInt8]>([])
        var listener: NotificationChannel.Listener {
            .handler(onValue: { data in self.values.withLock { $0.append(contentsOf: data) } }, onEnd: { _ in })
        }
        var all: [UInt8] { values.withLock { $0 } }
    }

    /// The reader starts when `AcquireNotify` answers and a streaming peer notifies at once, while
    /// the subscribing call is still on its way to add its listener: those values reach it, first.
    @Test func valuesBeforeTheFirstListenerReachItInOrder() throws {
        let channel = NotificationChannel()
        for value in 1...3 { channel.yield(Data([UInt8(value)])) }
        let first = Received()
        _ = try #require(channel.add(first.listener))
        channel.yield(Data([4]))
        #expect(first.all == [1, 2, 3, 4])
        // A second listener joins a running stream: it gets only what comes after it.
        let second = Received()
        _ = try #require(channel.add(second.listener))
        channel.yield(Data([5]))
        #expect(first.all == [1, 2, 3, 4, 5])
        #expect(second.all == [5])
    }

    /// Once every listener left, nothing is kept for a later one (the subscription is ending).
    @Test func nothingIsKeptAfterTheListenersLeft() throws {
        let channel = NotificationChannel()
        let first = Received()
        let id = try #require(channel.add(first.listener))
        #expect(channel.remove(id) == 0)
        channel.yield(Data([1]))
        let later = Received()
        _ = try #require(channel.add(later.listener))
        #expect(later.all.isEmpty)
    }

    /// At most `earlyLimit` values wait for the first listener: the newest.
    @Test func theEarlyValuesAreBounded() throws {
        let channel = NotificationChannel()
        let count = NotificationChannel.earlyLimit + 10
        for value in 0..<count { channel.yield(Data([UInt8(value % 256)])) }
        let first = Received()
        _ = try #require(channel.add(first.listener))
        #expect(first.all.count == NotificationChannel.earlyLimit)
        #expect(first.all.first == UInt8(10 % 256))
        #expect(first.all.last == UInt8((count - 1) % 256))
    }

    /// A finished channel keeps nothing and takes no listener.
    @Test func aFinishedChannelKeepsNothing() {
        let channel = NotificationChannel()
        channel.yield(Data([1]))
        channel.finish(throwing: nil)
        #expect(channel.add(Received().listener) == nil)
    }

    /// The `AcquireNotify` reader lends each packet's bytes for the call: a stream, a `Data` handler and a
    /// bytes handler each get a copy that outlives the reader's buffer, and values kept for the first
    /// listener are copies too.
    @Test func lentBytesReachEveryKindOfListenerAsCopies() async throws {
        let channel = NotificationChannel()
        var buffer: [UInt8] = [1, 2]
        buffer.withUnsafeBytes { channel.yield(bytes: $0) }  // before any listener: kept
        let bytes = Mutex<[[UInt8]]>([])
        _ = try #require(
            channel.add(.bytes(onValue: { value in bytes.withLock { $0.append(value) } }, onEnd: { _ in })))
        let handled = Received()
        _ = try #require(channel.add(handled.listener))
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Data.self)
        _ = try #require(channel.add(.stream(continuation)))
        buffer = [3, 4, 5]
        buffer.withUnsafeBytes { channel.yield(bytes: $0) }
        buffer.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) }  // the reader reuses it
        channel.yield(Data([6]))  // a value from a `PropertiesChanged` signal
        channel.finish(throwing: nil)
        #expect(bytes.withLock { $0 } == [[1, 2], [3, 4, 5], [6]])
        #expect(handled.all == [3, 4, 5, 6])
        var streamed: [Data] = []
        for try await value in stream { streamed.append(value) }
        #expect(streamed == [Data([3, 4, 5]), Data([6])])
    }
}
