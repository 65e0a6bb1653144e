/// Derives wheel speed and crank cadence from consecutive CSC measurements, handling the
/// wrap-around of the revolution counters and of the 1/1024 s event timers.
///
/// Feed each measurement to ``update(_:)``; it returns the rates since the previous one. When the
/// event time has not moved (no new revolution) the previous rate is kept for
/// `staleAfter` identical updates, then reported as zero (the rider stopped).
package struct CyclingRateCalculator: Sendable {
    package struct Rates: Sendable, Hashable {
        /// Wheel revolutions per minute.
        package var wheelRPM: Double?
        /// Speed in m/s, from wheel RPM and the circumference.
        package var speed: Double?
        /// Crank revolutions per minute (cadence).
        package var cadence: Double?

        package init(wheelRPM: Double? = nil, speed: Double? = nil, cadence: Double? = nil) {
            self.wheelRPM = wheelRPM
            self.speed = speed
            self.cadence = cadence
        }

        package var fields: [DecodedField] {
            var fields: [DecodedField] = []
            if let speed { fields.append(.double("speed", speed, unit: "m/s", kind: .speed)) }
            if let wheelRPM { fields.append(.double("wheel_rpm", wheelRPM, unit: "rpm", kind: .measurement)) }
            if let cadence { fields.append(.double("cadence", cadence, unit: "rpm", kind: .measurement)) }
            return fields
        }
    }

    /// Wheel circumference in metres (2.105 m for a 700×25c tyre).
    package var wheelCircumference: Double
    /// Identical event times tolerated before the rate drops to zero.
    package var staleAfter: Int

    private var previous: CSCMeasurement?
    private var last = Rates()
    private var wheelStale = 0
    private var crankStale = 0

    package init(wheelCircumference: Double = 2.105, staleAfter: Int = 3) {
        self.wheelCircumference = wheelCircumference
        self.staleAfter = staleAfter
    }

    package mutating func update(_ measurement: CSCMeasurement) -> Rates {
        defer { previous = measurement }
        guard let previous else { return Rates() }
        var rates = Rates()
        if let now = measurement.wheel, let before = previous.wheel {
            let revolutions = now.count &- before.count
            rates.wheelRPM = rate(
                revolutions: Double(revolutions), ticks: now.eventTime &- before.eventTime, last: last.wheelRPM,
                stale: &wheelStale)
            rates.speed = rates.wheelRPM.map { $0 * wheelCircumference / 60 }
        }
        if let now = measurement.crank, let before = previous.crank {
            let revolutions = UInt16(truncatingIfNeeded: now.count) &- UInt16(truncatingIfNeeded: before.count)
            rates.cadence = rate(
                revolutions: Double(revolutions), ticks: now.eventTime &- before.eventTime, last: last.cadence,
                stale: &crankStale)
        }
        last = rates
        return rates
    }

    private func rate(revolutions: Double, ticks: UInt16, last: Double?, stale: inout Int) -> Double {
        guard ticks != 0 else {
            stale += 1
            return stale > staleAfter ? 0 : (last ?? 0)
        }
        stale = 0
        return revolutions * 60 * 1024 / Double(ticks)
    }
}
