import BlueZ
import Bluetooth
import Testing

@Suite struct DeviceCachePolicyTests {
    let now = ContinuousClock.now

    func entry(_ last: UInt8, type: BluetoothAddress.AddressType, age: Int, protected: Bool = false)
        -> DeviceCachePolicy.Entry
    {
        DeviceCachePolicy.Entry(
            address: BluetoothAddress(bytes: [0xC0, 0, 0, 0, 0, last], type: type)!,
            lastSeen: now - .seconds(age), isProtected: protected)
    }

    @Test func removesStaleUnprotectedDevices() {
        let policy = DeviceCachePolicy(timeToLive: .seconds(60), maximumDevices: 100)
        let entries = [
            entry(1, type: .random, age: 120), entry(2, type: .random, age: 10),
            entry(3, type: .public, age: 600, protected: true), entry(4, type: .public, age: 61),
        ]
        #expect(policy.devicesToRemove(entries, now: now).map { $0.bytes[5] } == [1, 4])
    }

    @Test func capRemovesOldestRandomFirst() {
        let policy = DeviceCachePolicy(timeToLive: .seconds(3600), maximumDevices: 3)
        let entries = [
            entry(1, type: .public, age: 50), entry(2, type: .random, age: 5), entry(3, type: .random, age: 30),
            entry(4, type: .public, age: 1, protected: true), entry(5, type: .random, age: 10),
        ]
        #expect(policy.devicesToRemove(entries, now: now).map { $0.bytes[5] } == [3, 5])
    }

    @Test func neverRemovesProtectedDevicesEvenOverTheCap() {
        let policy = DeviceCachePolicy(timeToLive: .seconds(1), maximumDevices: 1)
        let entries = (1...5).map { entry(UInt8($0), type: .random, age: 100, protected: true) }
        #expect(policy.devicesToRemove(entries, now: now).isEmpty)
    }
}
