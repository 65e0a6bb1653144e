extension Scenario {
    /// This scenario sped up for automated tests, so a test sees in milliseconds what takes seconds on a
    /// real radio: advertising every 50 ms, connecting and resolving services in 20 ms each, a 3 s connect
    /// time-out, generated values (and their notifications) every `generatorInterval`, generated
    /// advertisement data every `advertisementUpdateInterval` (nil keeps the scenario's), and unseen
    /// temporary devices removed after `staleTimeout`.
    package func accelerated(
        generatorInterval: Duration = .milliseconds(100), advertisementUpdateInterval: Duration? = nil,
        staleTimeout: Duration = .seconds(30)
    ) -> Scenario {
        var scenario = self
        scenario.timing = ScenarioTiming(
            advertisingInterval: .milliseconds(50), staleTimeout: staleTimeout, connectDelay: .milliseconds(20),
            resolveDelay: .milliseconds(20), connectTimeout: .seconds(3), mtu: timing.mtu)
        for device in scenario.devices.indices {
            if let advertisementUpdateInterval, scenario.devices[device].advertisement.updateInterval != nil {
                scenario.devices[device].advertisement.updateInterval = advertisementUpdateInterval
            }
            for service in scenario.devices[device].services.indices {
                for characteristic in scenario.devices[device].services[service].characteristics.indices
                where scenario.devices[device].services[service].characteristics[characteristic].generator != nil {
                    scenario.devices[device].services[service].characteristics[characteristic].interval =
                        generatorInterval
                }
            }
        }
        return scenario
    }
}
