/// When load mode's devices send. Real devices are not phase-locked, so each device has its own phase,
/// spread evenly over one period: device `i`'s `n`-th value falls due `(n + i / devices) / rate` seconds after
/// the start. `devices` devices at `rate` each thus send one value every `1 / (rate · devices)` seconds, not
/// all of them in the same instant.
struct LoadSchedule: Sendable {
    let devices: Int
    /// Values per second per device.
    let rate: Double

    /// How many values device `index` should have sent `elapsed` seconds after the start.
    func due(device index: Int, after elapsed: Double) -> Int {
        guard devices > 0, rate > 0, elapsed >= 0 else { return 0 }
        return Int(elapsed * rate + Double(index) / Double(devices))
    }
}
