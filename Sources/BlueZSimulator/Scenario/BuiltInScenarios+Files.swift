// The built-in scenarios, embedded so the release binary needs no resource files.
// Each is identical to docs/scenarios/NAME.json (BuiltInScenarioTests checks it); regenerate with
// scripts/embed-scenarios.sh after editing those files.
extension BuiltInScenarios {
    static let files: [String: String] = [
        "bthome": #"""
        {
          "name": "bthome",
          "description": "A passive BTHome v2 sensor advertising temperature, humidity and battery with a packet id.",
          "devices": [
            {
              "id": "bthome", "address": "C0:FF:EE:00:00:03", "name": "BTHome SIM", "connectable": false, "rssi": -72,
              "advertisement": {
                "service_data": [{"uuid": "fcd2", "generator": {"kind": "bthome", "base": 19.5, "drift": 1.0, "humidity": 52, "start": 88}}],
                "update_interval": "2s"
              }
            }
          ]
        }
        """#,
        "commands": #"""
        {
          "name": "commands",
          "description": "Command paths: a panel with the same characteristic UUID in two services and a 512-byte writable label, next to a chest strap notifying 20 times a second and a beacon advertising twice a second.",
          "devices": [
            {
              "id": "hr_strap", "address": "C0:FF:EE:00:00:01", "name": "Polar H10 SIM", "rssi": -58,
              "advertisement": {"service_uuids": ["180d", "180f"]},
              "services": [
                {"uuid": "180d", "characteristics": [
                  {"uuid": "2a37", "flags": ["notify"], "generator": {"kind": "heart_rate", "resting": 62, "maximum": 178}, "interval": "50ms"}
                ]},
                {"uuid": "180f", "characteristics": [
                  {"uuid": "2a19", "flags": ["read", "notify"], "value": "5a"}
                ]}
              ]
            },
            {
              "id": "panel", "address": "C0:FF:EE:00:00:06", "name": "Panel SIM", "rssi": -50,
              "advertisement": {"service_uuids": ["6b1e0101-3c4d-4e5f-8a9b-0c1d2e3f4a5b"]},
              "services": [
                {"uuid": "6b1e0101-3c4d-4e5f-8a9b-0c1d2e3f4a5b", "characteristics": [
                  {"uuid": "6b1e0102-3c4d-4e5f-8a9b-0c1d2e3f4a5b", "flags": ["read", "write", "write-without-response", "notify"],
                   "text": "front", "max_length": 512, "descriptors": [{"uuid": "2901", "text": "Front label"}]}
                ]},
                {"uuid": "6b1e0201-3c4d-4e5f-8a9b-0c1d2e3f4a5b", "characteristics": [
                  {"uuid": "6b1e0102-3c4d-4e5f-8a9b-0c1d2e3f4a5b", "flags": ["read", "write", "notify"],
                   "text": "back", "max_length": 512, "descriptors": [{"uuid": "2901", "text": "Back label"}]}
                ]}
              ]
            },
            {
              "id": "beacon", "address": "C0:FF:EE:00:00:07", "connectable": false, "rssi": -70,
              "advertisement": {
                "manufacturer_data": [{"company": 76, "generator": {"kind": "ibeacon", "uuid": "e2c56db5-dffb-48d2-b060-d0f5a71096e0", "major": 2, "minor": 7, "measured_power": -59}}],
                "update_interval": "500ms"
              }
            }
          ]
        }
        """#,
        "demo": #"""
        {
          "name": "demo",
          "description": "The README demo: a heart-rate strap, a thermometer, a BTHome sensor, an iBeacon and a lamp.",
          "adapter": {"id": "hci0", "address": "00:1A:7D:DA:71:13", "name": "blebridge-sim"},
          "devices": [
            {
              "id": "hr_strap", "address": "C0:FF:EE:00:00:01", "name": "Polar H10 SIM", "appearance": 833,
              "rssi": -58, "tx_power": 0,
              "advertisement": {"service_uuids": ["180d", "180f"]},
              "services": [
                {"uuid": "180d", "characteristics": [
                  {"uuid": "2a37", "flags": ["notify"], "generator": {"kind": "heart_rate", "resting": 62, "maximum": 178}, "interval": "1s"},
                  {"uuid": "2a38", "flags": ["read"], "value": "01"}
                ]},
                {"uuid": "180f", "characteristics": [
                  {"uuid": "2a19", "flags": ["read", "notify"], "generator": {"kind": "battery", "start": 92, "drain_per_hour": 2}, "interval": "60s"}
                ]},
                {"uuid": "180a", "characteristics": [
                  {"uuid": "2a24", "flags": ["read"], "text": "H10 SIM"},
                  {"uuid": "2a25", "flags": ["read"], "text": "C0FFEE000001"},
                  {"uuid": "2a26", "flags": ["read"], "text": "5.0.0"},
                  {"uuid": "2a27", "flags": ["read"], "text": "00760690.03"},
                  {"uuid": "2a28", "flags": ["read"], "text": "3.1.1"},
                  {"uuid": "2a29", "flags": ["read"], "text": "Polar Electro Oy"}
                ]}
              ]
            },
            {
              "id": "thermometer", "address": "C0:FF:EE:00:00:02", "name": "Thermo SIM", "appearance": 768,
              "rssi": -67,
              "advertisement": {"service_uuids": ["1809", "181a"]},
              "services": [
                {"uuid": "1809", "characteristics": [
                  {"uuid": "2a1c", "flags": ["indicate"], "generator": {"kind": "temperature", "format": "ieee11073", "base": 36.8, "drift": 0.3}, "interval": "5s"},
                  {"uuid": "2a1e", "flags": ["notify"], "generator": {"kind": "temperature", "format": "ieee11073", "base": 36.8, "drift": 0.3}, "interval": "1s"}
                ]},
                {"uuid": "181a", "characteristics": [
                  {"uuid": "2a6e", "flags": ["read", "notify"], "generator": {"kind": "temperature", "format": "ess", "base": 21.5, "drift": 0.8}, "interval": "2s"},
                  {"uuid": "2a6f", "flags": ["read", "notify"], "generator": {"kind": "humidity", "base": 45, "drift": 4}, "interval": "2s"},
                  {"uuid": "2a6d", "flags": ["read", "notify"], "generator": {"kind": "pressure", "base": 101325, "drift": 150}, "interval": "2s"}
                ]},
                {"uuid": "180f", "characteristics": [
                  {"uuid": "2a19", "flags": ["read", "notify"], "generator": {"kind": "battery", "start": 77, "drain_per_hour": 1}, "interval": "60s"}
                ]}
              ]
            },
            {
              "id": "bthome", "address": "C0:FF:EE:00:00:03", "name": "BTHome SIM", "connectable": false,
              "rssi": -72,
              "advertisement": {
                "service_data": [{"uuid": "fcd2", "generator": {"kind": "bthome", "base": 19.5, "drift": 1.0, "humidity": 52, "start": 88}}],
                "update_interval": "2s"
              }
            },
            {
              "id": "ibeacon", "address": "C0:FF:EE:00:00:04", "connectable": false,
              "rssi": -80,
              "advertisement": {
                "manufacturer_data": [{"company": 76, "generator": {"kind": "ibeacon", "uuid": "e2c56db5-dffb-48d2-b060-d0f5a71096e0", "major": 1, "minor": 42, "measured_power": -59}}]
              }
            },
            {
              "id": "lamp", "address": "C0:FF:EE:00:00:05", "name": "Lamp SIM",
              "rssi": -52,
              "advertisement": {"service_uuids": ["6b1e0001-3c4d-4e5f-8a9b-0c1d2e3f4a5b"]},
              "services": [
                {"uuid": "6b1e0001-3c4d-4e5f-8a9b-0c1d2e3f4a5b", "characteristics": [
                  {"uuid": "6b1e0002-3c4d-4e5f-8a9b-0c1d2e3f4a5b", "flags": ["read", "write-without-response", "write", "notify"],
                   "value": "00", "min_length": 1, "max_length": 1, "allowed_range": [0, 1],
                   "descriptors": [{"uuid": "2901", "text": "Power"}]},
                  {"uuid": "6b1e0003-3c4d-4e5f-8a9b-0c1d2e3f4a5b", "flags": ["read", "write", "notify"],
                   "value": "64", "min_length": 1, "max_length": 1, "allowed_range": [0, 100],
                   "descriptors": [{"uuid": "2901", "text": "Brightness"}]}
                ]},
                {"uuid": "1802", "characteristics": [
                  {"uuid": "2a06", "flags": ["write-without-response"], "value": "00", "min_length": 1, "max_length": 1, "allowed_range": [0, 2]}
                ]},
                {"uuid": "180f", "characteristics": [
                  {"uuid": "2a19", "flags": ["read", "notify"], "generator": {"kind": "battery", "start": 100, "drain_per_hour": 0.5}, "interval": "60s"}
                ]}
              ]
            }
          ]
        }
        """#,
        "faults": #"""
        {
          "name": "faults",
          "description": "A flaky strap: the first two connects fail with le-connection-abort-by-local, every connection drops after 20 s, and it leaves range for 15 s after a minute.",
          "timing": {"stale_timeout": "10s"},
          "devices": [
            {
              "id": "hr_strap", "address": "C0:FF:EE:00:00:01", "name": "Polar H10 SIM", "appearance": 833, "rssi": -75, "rssi_jitter": 8,
              "advertisement": {"service_uuids": ["180d"]},
              "faults": {
                "connect_failures": [{"kind": "abort_by_local", "count": 2}],
                "disconnect_after": "20s",
                "out_of_range": [{"after": "60s", "duration": "15s"}]
              },
              "services": [
                {"uuid": "180d", "characteristics": [
                  {"uuid": "2a37", "flags": ["notify"], "generator": {"kind": "heart_rate"}, "interval": "1s"},
                  {"uuid": "2a38", "flags": ["read"], "value": "01"}
                ]},
                {"uuid": "180f", "characteristics": [
                  {"uuid": "2a19", "flags": ["read", "notify"], "generator": {"kind": "battery", "start": 15, "drain_per_hour": 30}, "interval": "10s"}
                ]}
              ]
            }
          ]
        }
        """#,
        "heart-rate": #"""
        {
          "name": "heart-rate",
          "description": "A chest strap whose contact comes and goes: heart rate with RR intervals and energy expended, body sensor location, battery, device information.",
          "devices": [
            {
              "id": "hr_strap", "address": "C0:FF:EE:00:00:01", "name": "Polar H10 SIM", "appearance": 833, "rssi": -58,
              "advertisement": {"service_uuids": ["180d"]},
              "services": [
                {"uuid": "180d", "characteristics": [
                  {"uuid": "2a37", "flags": ["notify"], "generator": {"kind": "heart_rate", "resting": 58, "maximum": 182, "contact": "intermittent", "energy": true}, "interval": "1s"},
                  {"uuid": "2a38", "flags": ["read"], "value": "01"},
                  {"uuid": "2a39", "flags": ["write"], "value": "00", "min_length": 1, "max_length": 1, "allowed_range": [1, 1], "notify_on_write": false}
                ]},
                {"uuid": "180f", "characteristics": [
                  {"uuid": "2a19", "flags": ["read", "notify"], "generator": {"kind": "battery", "start": 92, "drain_per_hour": 2}, "interval": "60s"}
                ]},
                {"uuid": "180a", "characteristics": [
                  {"uuid": "2a24", "flags": ["read"], "text": "H10 SIM"},
                  {"uuid": "2a29", "flags": ["read"], "text": "Polar Electro Oy"}
                ]}
              ]
            }
          ]
        }
        """#,
        "hygrometers": #"""
        {
          "name": "hygrometers",
          "description": "Passive Govee, ThermoPro and INKBIRD sensors whose readings are in manufacturer data (some in the company-id bytes).",
          "devices": [
            {
              "id": "govee_h5075", "address": "C0:FF:EE:00:01:01", "name": "GVH5075_0101", "connectable": false, "rssi": -66,
              "advertisement": {"manufacturer_data": [{"company": 60552, "value": "0003a2d45c00"}]}
            },
            {
              "id": "govee_h5179", "address": "C0:FF:EE:00:01:02", "name": "GVH5179_0102", "connectable": false, "rssi": -71,
              "advertisement": {"manufacturer_data": [{"company": 34817, "value": "010101013c09a0135a"}]}
            },
            {
              "id": "thermopro_tp357", "address": "C0:FF:EE:00:01:03", "name": "TP357 (0103)", "connectable": false, "rssi": -62,
              "advertisement": {"manufacturer_data": [{"company": 58818, "value": "002f2c02"}]}
            },
            {
              "id": "inkbird_ibs_th1", "address": "C0:FF:EE:00:01:04", "name": "sps", "connectable": false, "rssi": -74,
              "advertisement": {"manufacturer_data": [{"company": 2345, "value": "2e160000005508"}]}
            },
            {
              "id": "inkbird_ith_11_b", "address": "C0:FF:EE:00:01:05", "name": "ITH-11-B", "connectable": false, "rssi": -69,
              "advertisement": {"manufacturer_data": [{"company": 9289, "value": "01020304d700e3014000000000000000"}]}
            },
            {
              "id": "inkbird_ibt_4xs", "address": "C0:FF:EE:00:01:06", "name": "iBBQ", "connectable": false, "rssi": -58,
              "advertisement": {"manufacturer_data": [{"company": 0, "value": "0000000000000000fffffa00f1ffb80b"}]}
            }
          ]
        }
        """#,
        "ibeacon": #"""
        {
          "name": "ibeacon",
          "description": "An iBeacon (Apple manufacturer data 0x004c) whose RSSI wanders.",
          "devices": [
            {
              "id": "ibeacon", "address": "C0:FF:EE:00:00:04", "connectable": false, "rssi": -80, "rssi_jitter": 6,
              "advertisement": {
                "manufacturer_data": [{"company": 76, "generator": {"kind": "ibeacon", "uuid": "e2c56db5-dffb-48d2-b060-d0f5a71096e0", "major": 1, "minor": 42, "measured_power": -59}}]
              }
            }
          ]
        }
        """#,
        "lamp": #"""
        {
          "name": "lamp",
          "description": "A writable actuator: power and brightness change state and notify; an Immediate Alert takes commands.",
          "devices": [
            {
              "id": "lamp", "address": "C0:FF:EE:00:00:05", "name": "Lamp SIM", "rssi": -52,
              "advertisement": {"service_uuids": ["6b1e0001-3c4d-4e5f-8a9b-0c1d2e3f4a5b"]},
              "services": [
                {"uuid": "6b1e0001-3c4d-4e5f-8a9b-0c1d2e3f4a5b", "characteristics": [
                  {"uuid": "6b1e0002-3c4d-4e5f-8a9b-0c1d2e3f4a5b", "flags": ["read", "write-without-response", "write", "notify"],
                   "value": "00", "min_length": 1, "max_length": 1, "allowed_range": [0, 1],
                   "descriptors": [{"uuid": "2901", "text": "Power"}]},
                  {"uuid": "6b1e0003-3c4d-4e5f-8a9b-0c1d2e3f4a5b", "flags": ["read", "write", "notify"],
                   "value": "64", "min_length": 1, "max_length": 1, "allowed_range": [0, 100],
                   "descriptors": [{"uuid": "2901", "text": "Brightness"}]}
                ]},
                {"uuid": "1802", "characteristics": [
                  {"uuid": "2a06", "flags": ["write-without-response"], "value": "00", "min_length": 1, "max_length": 1, "allowed_range": [0, 2]}
                ]},
                {"uuid": "180f", "characteristics": [
                  {"uuid": "2a19", "flags": ["read", "notify"], "generator": {"kind": "battery", "start": 100, "drain_per_hour": 0.5}, "interval": "60s"}
                ]}
              ]
            }
          ]
        }
        """#,
        "load": #"""
        {
          "name": "load",
          "description": "Load mode for benchmarks: 20 devices LOAD-0000… each notifying 50 times a second with a timestamped 20-byte value.",
          "timing": {"advertising_interval": "500ms"},
          "devices": [],
          "load": {"devices": 20, "rate": 50}
        }
        """#,
        "pairing": #"""
        {
          "name": "pairing",
          "description": "Devices that need pairing: a lock with a passkey (123456) and a sensor that pairs Just Works.",
          "devices": [
            {
              "id": "lock", "address": "C0:FF:EE:00:00:06", "name": "Lock SIM", "rssi": -61,
              "pairing": "passkey", "passkey": 123456,
              "advertisement": {"service_uuids": ["6b1e1001-3c4d-4e5f-8a9b-0c1d2e3f4a5b"]},
              "services": [
                {"uuid": "6b1e1001-3c4d-4e5f-8a9b-0c1d2e3f4a5b", "characteristics": [
                  {"uuid": "6b1e1002-3c4d-4e5f-8a9b-0c1d2e3f4a5b", "flags": ["read", "write", "notify"], "value": "01",
                   "requires_pairing": true, "min_length": 1, "max_length": 1, "allowed_range": [0, 1],
                   "descriptors": [{"uuid": "2901", "text": "Locked"}]}
                ]},
                {"uuid": "180f", "characteristics": [
                  {"uuid": "2a19", "flags": ["read"], "generator": {"kind": "battery", "start": 64}, "interval": "60s"}
                ]}
              ]
            },
            {
              "id": "secure_sensor", "address": "C0:FF:EE:00:00:07", "name": "Secure SIM", "rssi": -66,
              "pairing": "just_works",
              "advertisement": {"service_uuids": ["181a"]},
              "services": [
                {"uuid": "181a", "characteristics": [
                  {"uuid": "2a6e", "flags": ["read", "notify"], "generator": {"kind": "temperature"}, "interval": "1s", "requires_pairing": true}
                ]}
              ]
            }
          ]
        }
        """#,
        "thermometer": #"""
        {
          "name": "thermometer",
          "description": "A Health Thermometer with Environmental Sensing and a battery.",
          "devices": [
            {
              "id": "thermometer", "address": "C0:FF:EE:00:00:02", "name": "Thermo SIM", "appearance": 768, "rssi": -67,
              "advertisement": {"service_uuids": ["1809", "181a"]},
              "services": [
                {"uuid": "1809", "characteristics": [
                  {"uuid": "2a1c", "flags": ["indicate"], "generator": {"kind": "temperature", "format": "ieee11073"}, "interval": "5s"},
                  {"uuid": "2a1e", "flags": ["notify"], "generator": {"kind": "temperature", "format": "ieee11073"}, "interval": "1s"}
                ]},
                {"uuid": "181a", "characteristics": [
                  {"uuid": "2a6e", "flags": ["read", "notify"], "generator": {"kind": "temperature", "format": "ess"}, "interval": "2s"},
                  {"uuid": "2a6f", "flags": ["read", "notify"], "generator": {"kind": "humidity"}, "interval": "2s"},
                  {"uuid": "2a6d", "flags": ["read", "notify"], "generator": {"kind": "pressure"}, "interval": "2s"}
                ]},
                {"uuid": "180f", "characteristics": [
                  {"uuid": "2a19", "flags": ["read", "notify"], "generator": {"kind": "battery", "start": 77}, "interval": "60s"}
                ]}
              ]
            }
          ]
        }
        """#,
    ]
}
