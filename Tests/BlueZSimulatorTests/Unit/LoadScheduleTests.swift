import Testing

@testable import BlueZSimulator

/// Load mode's devices are not phase-locked: their values are spread evenly over each period.
@Suite struct LoadScheduleTests {
    @Test func devicesFallDueOneAfterAnotherSpreadEvenlyOverThePeriod() {
        let schedule = LoadSchedule(devices: 8, rate: 10)  // 80 values a second, one every 12.5 ms
        // The moment (in 0.1 ms steps) each device's first value falls due.
        var first: [Int: Int] = [:]
        for step in 0...1000 {
            for device in 0..<8
            where first[device] == nil && schedule.due(device: device, after: Double(step) / 1e4) >= 1 {
                first[device] = step
            }
        }
        let moments = (0..<8).compactMap { first[$0] }.sorted()
        #expect(moments.count == 8)
        #expect(Set(moments).count == 8)  // never two devices at once
        let gaps = zip(moments.dropFirst(), moments).map { $0 - $1 }
        #expect(gaps.allSatisfy { (124...126).contains($0) }, "gaps \(gaps) (0.1 ms)")
    }

    @Test func everyDeviceKeepsTheRequestedRate() {
        let schedule = LoadSchedule(devices: 50, rate: 20)
        for device in 0..<50 {
            #expect(schedule.due(device: device, after: 10) == 200)
            #expect(schedule.due(device: device, after: 0) == 0)
        }
        let total = (0..<50).reduce(0) { $0 + schedule.due(device: $1, after: 0.5) }
        #expect((495...505).contains(total))  // 1,000/s in total, evenly: half a second is about 500
    }

    @Test func nothingIsDueWithoutDevicesOrRate() {
        #expect(LoadSchedule(devices: 0, rate: 10).due(device: 0, after: 5) == 0)
        #expect(LoadSchedule(devices: 4, rate: 0).due(device: 1, after: 5) == 0)
    }
}
