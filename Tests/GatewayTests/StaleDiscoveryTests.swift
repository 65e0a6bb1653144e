import Bluetooth
import Configuration
import Gateway
import Testing

@Suite struct StaleDiscoveryTests {
    static func topic(_ device: String, _ object: String) -> String {
        "homeassistant/sensor/blebridge_\(device)/\(object)/config"
    }

    static let thermometer = [
        "temperature", "intermediate_temperature", "temperature_intermediate_temperature", "temperature_temperature",
        "environmental_sensing_temperature", "humidity", "battery", "rssi", "humidity_pressure", "body_temperature",
    ].map { topic("thermometer", $0) }

    /// Services with assigned names only (as the simulated thermometer resolves).
    static let named = [0x1809, 0x181A, 0x180F, 0x1800].map { BluetoothUUID(UInt16($0)) }

    @Test func oldQualifiedNamesGoOnlyWhenNoSubscriptionCanStillProduceThem() throws {
        let configuration = try GatewayModelTests.repositoryConfiguration()
        let announced = [
            "thermometer": Self.thermometer,
            // The lamp's services have no assigned names: `<field>_<uuid>` is still a current name.
            "lamp": [Self.topic("lamp", "power_6b1e0003-3c4d-4e5f-8a9b-0c1d2e3f4a5b"), Self.topic("lamp", "power")],
            // Not configured: left to the whole-device removal.
            "oven": [Self.topic("oven", "temperature_intermediate_temperature")],
        ]
        // Services unknown: the thermometer also subscribes to `temperature` (2a6e), whose field
        // `temperature_intermediate` could be named `temperature_intermediate_temperature` if its
        // service had no assigned name. Only the Environmental Sensing name of the previous
        // version can be proven stale: `temperature` (2a6e) now keeps the plain name, and
        // Environmental Sensing is never a prefix any more (`ambient_…`).
        let environmental = Self.topic("thermometer", "environmental_sensing_temperature")
        #expect(
            StaleDiscovery.topics(announced: announced, configuration: configuration, live: [])
                == ["thermometer": [environmental]])

        // Every service the thermometer resolved has an assigned name: qualified names are the
        // characteristic's or the service's, never `<field>_<characteristic>`. `body_temperature`
        // (a layout's field, say) and the lamp's `power_…` are kept: no subscribed characteristic
        // owns `body` or `power`, so no collision can have earned them an old name.
        #expect(
            StaleDiscovery.topics(
                announced: announced, configuration: configuration, live: [],
                resolvedServices: ["thermometer": Self.named, "lamp": Self.named])
                == [
                    "thermometer": [
                        "temperature_intermediate_temperature", "temperature_temperature",
                        "environmental_sensing_temperature", "humidity_pressure",
                    ]
                    .map { Self.topic("thermometer", $0) }
                ])
        // One vendor service could hold a characteristic: back to keeping everything.
        let vendor = Self.named + [BluetoothUUID("6b1e0101-3c4d-4e5f-8a9b-0c1d2e3f4a5b")!]
        #expect(
            StaleDiscovery.topics(
                announced: announced, configuration: configuration, live: [], resolvedServices: ["thermometer": vendor]
            ) == ["thermometer": [environmental]])
    }

    @Test func theConfigurationAloneCanProveANameOld() throws {
        var configuration = try GatewayModelTests.repositoryConfiguration()
        let index = try #require(configuration.devices.firstIndex { $0.id == "thermometer" })
        // Temperature Measurement and Intermediate Temperature: the latter's `temperature` is
        // `intermediate_temperature` (or plain `temperature`), whatever the services.
        configuration.devices[index].subscribe = [
            Subscription(characteristic: BluetoothUUID(UInt16(0x2A1C))),
            Subscription(characteristic: BluetoothUUID(UInt16(0x2A1E))),
        ]
        #expect(
            StaleDiscovery.topics(announced: ["thermometer": Self.thermometer], configuration: configuration, live: [])
                == [
                    "thermometer": ["temperature_intermediate_temperature", "environmental_sensing_temperature"].map {
                        Self.topic("thermometer", $0)
                    }
                ])

        // A subscription naming a service with an assigned name is named after it.
        configuration.devices[index].subscribe = [
            Subscription(characteristic: BluetoothUUID(UInt16(0x2A1C))),
            Subscription(characteristic: BluetoothUUID(UInt16(0x2A6E)), service: BluetoothUUID(UInt16(0x181A))),
            Subscription(characteristic: BluetoothUUID(UInt16(0x2A6E)), service: BluetoothUUID(UInt16(0x1809))),
        ]
        let topics = ["temperature_temperature", "environmental_sensing_temperature", "temperature_measurement"]
            .map { Self.topic("thermometer", $0) }
        #expect(
            StaleDiscovery.topics(announced: ["thermometer": topics], configuration: configuration, live: [])
                == [
                    "thermometer": ["temperature_temperature", "environmental_sensing_temperature"].map {
                        Self.topic("thermometer", $0)
                    }
                ])
        // The same characteristic once more without a service: `temperature_temperature` is current again.
        configuration.devices[index].subscribe.append(Subscription(characteristic: BluetoothUUID(UInt16(0x2A6E))))
        #expect(
            StaleDiscovery.topics(announced: ["thermometer": topics], configuration: configuration, live: [])
                == ["thermometer": [Self.topic("thermometer", "environmental_sensing_temperature")]])
    }

    @Test func topicsAnnouncedNowAreNeverStale() throws {
        let configuration = try GatewayModelTests.repositoryConfiguration()
        let renamed = Self.topic("thermometer", "temperature_intermediate_temperature")
        let stale = StaleDiscovery.topics(
            announced: ["thermometer": [renamed]], configuration: configuration, live: [renamed],
            resolvedServices: ["thermometer": Self.named])
        #expect(stale.isEmpty)
    }
}
