import Foundation
import Timekeeping

/// Produces successive values for a characteristic or advertised data from a ``ScenarioGenerator``.
///
/// Pure: time comes in as the elapsed duration since the scenario started, randomness from a seeded
/// generator, so the values are reproducible and testable.
package struct ValueGenerator: Sendable {
    package let spec: ScenarioGenerator
    private var random: SimulatorRandom
    private var heartRate: Double
    private var sinceLastBeat: Double = 0
    private var lastElapsed: Double?
    private var energy: Double = 0
    private var packetID: UInt8 = 0

    package init(spec: ScenarioGenerator, seed: UInt64) {
        self.spec = spec
        self.random = SimulatorRandom(seed: seed)
        self.heartRate = spec.resting
    }

    /// The value at `elapsed` since the scenario started.
    package mutating func next(elapsed: Duration) -> [UInt8] {
        let t = elapsed.inSeconds
        let step = max(0, t - (lastElapsed ?? t))
        lastElapsed = t
        switch spec.kind {
        case .heartRate: return heartRateMeasurement(t: t, step: step)
        case .temperature:
            let value = drifting(t: t, noise: 0.02)
            var writer = ByteWriter()
            switch spec.format {
            case .ieee11073:
                writer.uint8(spec.fahrenheit ? 0x01 : 0x00)
                writer.ieee11073Float(spec.fahrenheit ? value * 9 / 5 + 32 : value)
            case .ess:
                writer.int16(Int16(clamping: Int((value * 100).rounded())))
            }
            return writer.bytes
        case .humidity:
            var writer = ByteWriter()
            writer.uint16(UInt16(clamping: Int((min(100, max(0, drifting(t: t, noise: 0.1))) * 100).rounded())))
            return writer.bytes
        case .pressure:
            var writer = ByteWriter()
            writer.uint32(UInt32(clamping: Int((drifting(t: t, noise: 2) * 10).rounded())))
            return writer.bytes
        case .battery:
            return [batteryLevel(t: t)]
        case .bthome:
            packetID &+= 1
            var writer = ByteWriter()
            writer.uint8(0x40)  // device information: BTHome v2, unencrypted, regular interval
            writer.uint8(0x00)  // packet id
            writer.uint8(packetID)
            writer.uint8(0x01)  // battery, %
            writer.uint8(batteryLevel(t: t))
            writer.uint8(0x02)  // temperature, sint16 × 0.01 °C
            writer.int16(Int16(clamping: Int((drifting(t: t, noise: 0.02) * 100).rounded())))
            writer.uint8(0x03)  // humidity, uint16 × 0.01 %
            let humidity = spec.humidity + 3 * sin(2 * .pi * t / spec.period.inSeconds + 1) + random.uniform(-0.1...0.1)
            writer.uint16(UInt16(clamping: Int((min(100, max(0, humidity)) * 100).rounded())))
            return writer.bytes
        case .ibeacon:
            var writer = ByteWriter(capacity: 23)
            writer.uint8(0x02)  // iBeacon type
            writer.uint8(0x15)  // remaining length: 21
            writer.append(spec.proximityUUID.littleEndianBytes.reversed())
            writer.uint16BigEndian(spec.major)
            writer.uint16BigEndian(spec.minor)
            writer.int8(spec.measuredPower)
            return writer.bytes
        }
    }

    private mutating func drifting(t: Double, noise: Double) -> Double {
        spec.base + spec.drift * sin(2 * .pi * t / spec.period.inSeconds) + random.uniform(-noise...noise)
    }

    private func batteryLevel(t: Double) -> UInt8 {
        UInt8(max(0, min(100, (spec.start - spec.drainPerHour * t / 3600).rounded())))
    }

    /// Heart Rate Measurement (0x2A37): flags, heart rate (uint8, or uint16 above 255), optional energy
    /// expended (uint16 kJ) and RR intervals (uint16, 1/1024 s) for the beats since the previous value.
    private mutating func heartRateMeasurement(t: Double, step: Double) -> [UInt8] {
        // Activity: a slow swell between resting and ~60 % of the reserve, plus small beat-to-beat noise.
        let reserve = spec.maximum - spec.resting
        let target = spec.resting + reserve * 0.3 * (1 - cos(2 * .pi * t / 300))
        heartRate += (target - heartRate) * min(1, step / 8) + random.uniform(-1.2...1.2)
        heartRate = min(spec.maximum, max(spec.resting - 8, heartRate))
        let contactDetected: Bool
        var flags: UInt8 = 0
        switch spec.contact {
        case .detected: contactDetected = true
        case .lost: contactDetected = false
        case .unsupported: contactDetected = true
        case .intermittent: contactDetected = t.truncatingRemainder(dividingBy: 60) < 55
        }
        if spec.contact != .unsupported { flags |= contactDetected ? 0x06 : 0x04 }
        let bpm = Int(heartRate.rounded())
        if bpm > 255 { flags |= 0x01 }
        if spec.energy { flags |= 0x08 }
        var intervals: [UInt16] = []
        if spec.rrIntervals, contactDetected {
            sinceLastBeat += step
            // Beats that completed since the last value, each ~60/HR s with a few percent of variability.
            while true {
                let interval = 60 / heartRate * random.uniform(0.96...1.04)
                guard sinceLastBeat >= interval, intervals.count < 8 else { break }
                sinceLastBeat -= interval
                intervals.append(UInt16((interval * 1024).rounded()))
            }
            if intervals.count == 8 { sinceLastBeat = 0 }
        }
        if !intervals.isEmpty { flags |= 0x10 }
        var writer = ByteWriter()
        writer.uint8(flags)
        if bpm > 255 { writer.uint16(UInt16(bpm)) } else { writer.uint8(UInt8(bpm)) }
        if spec.energy {
            energy += step * heartRate / 60 * 0.08
            writer.uint16(UInt16(min(65535, energy)))
        }
        for interval in intervals { writer.uint16(interval) }
        return writer.bytes
    }
}
