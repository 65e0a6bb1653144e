// The built-in scenarios, embedded so the release binary needs no resource files.
// Each is identical to docs/scenarios/NAME.json (ScenarioTests checks it); regenerate with
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
        "discovery": #"""
        {
          "name": "discovery",
          "description": "Zero-configuration discovery (issue 17): 30 passive sensors of 18 decoders — 4 BTHome, 2 ATC1441, 2 pvvx, 2 Ruuvi, 1 MiBeacon, 1 encrypted MiBeacon v5 LYWSD03MMC with bind key 814aac74c4f17b6c1581e1ab87816b99, 1 iBeacon, 1 Eddystone, 2 Govee, 2 SwitchBot, 2 INKBIRD, 2 Qingping, 1 ThermoPro, 2 SensorPush, 1 Oral-B, 1 Mopeka, 1 Victron SmartSolar with advertisement key 0df4d0617b6c4e1b9d3f1a2b3c4d5e6f, 1 Mi Smart Scale and 1 Mi Body Composition Scale — and 1,000 phones with random private addresses walking by. Scenario ids are <decoder>_<n>; add a family by appending devices with its payload.",
          "passing": {"rate": 200, "total": 1000, "lifetime": "2s", "start": "5s"},
          "devices": [
            {"id": "bthome_1", "address": "C0:FF:EE:11:00:01", "name": "BTHome 1", "connectable": false, "rssi": -60, "rssi_jitter": 4, "advertisement": {"service_data": [{"uuid": "fcd2", "generator": {"kind": "bthome", "base": 18.0, "drift": 0.5, "humidity": 40, "start": 90}}], "update_interval": "2s"}},
            {"id": "bthome_2", "address": "C0:FF:EE:11:00:02", "name": "BTHome 2", "connectable": false, "rssi": -61, "rssi_jitter": 4, "advertisement": {"service_data": [{"uuid": "fcd2", "generator": {"kind": "bthome", "base": 19.0, "drift": 0.5, "humidity": 41, "start": 89}}], "update_interval": "2s"}},
            {"id": "bthome_3", "address": "C0:FF:EE:11:00:03", "name": "BTHome 3", "connectable": false, "rssi": -62, "rssi_jitter": 4, "advertisement": {"service_data": [{"uuid": "fcd2", "generator": {"kind": "bthome", "base": 20.0, "drift": 0.5, "humidity": 42, "start": 88}}], "update_interval": "2s"}},
            {"id": "bthome_4", "address": "C0:FF:EE:11:00:04", "name": "BTHome 4", "connectable": false, "rssi": -63, "rssi_jitter": 4, "advertisement": {"service_data": [{"uuid": "fcd2", "generator": {"kind": "bthome", "base": 21.0, "drift": 0.5, "humidity": 43, "start": 87}}], "update_interval": "2s"}},
            {"id": "atc1441_1", "address": "A4:C1:38:12:00:01", "name": "ATC_120001", "connectable": false, "rssi": -65, "rssi_jitter": 4, "advertisement": {"service_data": [{"uuid": "181a", "value": "a4c13812000100c82d500b5400"}]}},
            {"id": "atc1441_2", "address": "A4:C1:38:12:00:02", "name": "ATC_120002", "connectable": false, "rssi": -66, "rssi_jitter": 4, "advertisement": {"service_data": [{"uuid": "181a", "value": "a4c13812000200d22e510b5501"}]}},
            {"id": "pvvx_1", "address": "A4:C1:38:13:00:01", "name": "ATC_130001", "connectable": false, "rssi": -66, "rssi_jitter": 4, "advertisement": {"service_data": [{"uuid": "181a", "value": "01001338c1a434088813b80b5a000f"}]}},
            {"id": "pvvx_2", "address": "A4:C1:38:13:00:02", "name": "ATC_130002", "connectable": false, "rssi": -67, "rssi_jitter": 4, "advertisement": {"service_data": [{"uuid": "181a", "value": "02001338c1a44d08ec13b90b59010f"}]}},
            {"id": "ruuvi_1", "address": "CB:B8:33:14:00:01", "name": "Ruuvi 0001", "connectable": false, "rssi": -75, "rssi_jitter": 4, "advertisement": {"manufacturer_data": [{"company": 1177, "value": "050fa04e20c37c0004fffc040cac364200cdcbb833140001"}]}},
            {"id": "ruuvi_2", "address": "CB:B8:33:14:00:02", "name": "Ruuvi 0002", "connectable": false, "rssi": -76, "rssi_jitter": 4, "advertisement": {"manufacturer_data": [{"company": 1177, "value": "0510684fb0c3860004fffc040cac364300cecbb833140002"}]}},
            {"id": "mibeacon_1", "address": "58:2D:34:15:00:01", "name": "MJ_HT_V1", "connectable": false, "rssi": -70, "rssi_jitter": 4, "advertisement": {"service_data": [{"uuid": "fe95", "value": "5020aa010a010015342d580d1004d300f301"}]}},
            {"id": "lywsd03mmc", "address": "A4:C1:38:56:53:84", "name": "LYWSD03MMC", "connectable": false, "rssi": -68, "rssi_jitter": 4, "advertisement": {"service_data": [{"uuid": "fe95", "value": "58585b05a084535638c1a475dbc33f642301004a1668a5"}]}},
            {"id": "ibeacon_1", "address": "C0:FF:EE:16:00:01", "connectable": false, "rssi": -80, "rssi_jitter": 4, "advertisement": {"manufacturer_data": [{"company": 76, "generator": {"kind": "ibeacon", "uuid": "e2c56db5-dffb-48d2-b060-d0f5a71096e0", "major": 7, "minor": 1, "measured_power": -59}}]}},
            {"id": "eddystone_1", "address": "C0:FF:EE:17:00:01", "connectable": false, "rssi": -82, "rssi_jitter": 4, "advertisement": {"service_data": [{"uuid": "feaa", "value": "00ee000102030405060708090000000017010000"}]}},
            {"id": "govee_1", "address": "C0:FF:EE:00:01:01", "name": "GVH5075_0101", "connectable": false, "rssi": -66, "advertisement": {"manufacturer_data": [{"company": 60552, "value": "0003a2d45c00"}]}, "rssi_jitter": 4},
            {"id": "govee_2", "address": "C0:FF:EE:00:01:02", "name": "GVH5179_0102", "connectable": false, "rssi": -71, "advertisement": {"manufacturer_data": [{"company": 34817, "value": "010101013c09a0135a"}]}, "rssi_jitter": 4},
            {"id": "switchbot_1", "address": "C0:FF:EE:17:02:01", "connectable": false, "rssi": -66, "advertisement": {"service_data": [{"uuid": "fd3d", "value": "5400e407992d"}]}, "rssi_jitter": 4},
            {"id": "switchbot_2", "address": "C0:FF:EE:17:02:04", "connectable": false, "rssi": -72, "advertisement": {"service_data": [{"uuid": "fd3d", "value": "644055030000000002"}]}, "rssi_jitter": 4},
            {"id": "inkbird_1", "address": "C0:FF:EE:00:01:04", "name": "sps", "connectable": false, "rssi": -74, "advertisement": {"manufacturer_data": [{"company": 2345, "value": "2e160000005508"}]}, "rssi_jitter": 4},
            {"id": "inkbird_2", "address": "C0:FF:EE:00:01:05", "name": "ITH-11-B", "connectable": false, "rssi": -69, "advertisement": {"manufacturer_data": [{"company": 9289, "value": "01020304d700e3014000000000000000"}]}, "rssi_jitter": 4},
            {"id": "qingping_1", "address": "C0:FF:EE:17:02:11", "connectable": false, "rssi": -68, "advertisement": {"service_data": [{"uuid": "fdcd", "value": "0807110217eeffc00104e600f401020155"}]}, "rssi_jitter": 4},
            {"id": "qingping_2", "address": "C0:FF:EE:17:02:14", "connectable": false, "rssi": -62, "advertisement": {"service_data": [{"uuid": "fdcd", "value": "080e140217eeffc012040a0014001302e8030201ff"}]}, "rssi_jitter": 4},
            {"id": "thermopro_1", "address": "C0:FF:EE:00:01:03", "name": "TP357 (0103)", "connectable": false, "rssi": -62, "advertisement": {"manufacturer_data": [{"company": 58818, "value": "002f2c02"}]}, "rssi_jitter": 4},
            {"id": "sensorpush_1", "address": "C0:FF:EE:17:02:21", "name": "SensorPush HT.w 1A2B", "connectable": false, "rssi": -64, "advertisement": {"service_uuids": ["ef090000-11d6-42ba-93b8-9dd7ec090ab0"], "manufacturer_data": [{"company": 3076, "value": "cd3447"}]}, "rssi_jitter": 4},
            {"id": "sensorpush_2", "address": "C0:FF:EE:17:02:22", "name": "SensorPush HTP.xw 3C4D", "connectable": false, "rssi": -70, "advertisement": {"service_uuids": ["ef090000-11d6-42ba-93b8-9dd7ec090ab0"], "manufacturer_data": [{"company": 64768, "value": "c9b155d5ba"}]}, "rssi_jitter": 4},
            {"id": "oralb_1", "address": "C0:FF:EE:17:02:31", "name": "Oral-B Toothbrush", "connectable": true, "rssi": -58, "advertisement": {"manufacturer_data": [{"company": 220, "value": "0320010380011e01020f04"}]}, "rssi_jitter": 4},
            {"id": "mopeka_1", "address": "C0:FF:EE:17:02:41", "connectable": false, "rssi": -69, "advertisement": {"service_uuids": ["fee5"], "manufacturer_data": [{"company": 89, "value": "03603ce8c317024105fa"}]}, "rssi_jitter": 4},
            {"id": "victron_1", "address": "C0:FF:EE:17:03:01", "connectable": false, "rssi": -66, "advertisement": {"manufacturer_data": [{"company": 737, "value": "100253a00134120ddaeaf04a3eb8b7f42fc70e49"}]}, "rssi_jitter": 4},
            {"id": "miscale_v1_1", "address": "C0:FF:EE:17:04:01", "connectable": false, "rssi": -70, "advertisement": {"service_data": [{"uuid": "181d", "value": "22b036e907011e0c2e0a"}]}, "rssi_jitter": 4},
            {"id": "miscale_v2_1", "address": "C0:FF:EE:17:04:02", "connectable": false, "rssi": -74, "advertisement": {"service_data": [{"uuid": "181b", "value": "0222e907011e0c2e0af401a438"}]}, "rssi_jitter": 4}
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
          "description": "Passive Govee, ThermoPro and INKBIRD sensors whose readings are in manufacturer data (some in the company-id bytes), and two Govee meat thermometers: an H5181 (one probe at 27 °C, alarm 75 °C) and an H5182 (probe 1 at 23.5 °C, probe 2 unplugged).",
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
            },
            {
              "id": "govee_h5181", "address": "C0:FF:EE:00:01:07", "name": "GVH5181_0107", "connectable": false, "rssi": -63,
              "advertisement": {"manufacturer_data": [{"company": 63585, "value": "01020304050607080a8c1d4c0000"}]}
            },
            {
              "id": "govee_h5182", "address": "C0:FF:EE:00:01:08", "name": "GVH5182_0108", "connectable": false, "rssi": -67,
              "advertisement": {"manufacturer_data": [{"company": 10032, "value": "0102030405060708092e196400ffff1ce8"}]}
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
        "mibeacon": #"""
        {
          "name": "mibeacon",
          "description": "Xiaomi MiBeacon (service data 0xFE95, plain v5 frames): a LYWSDCGQ thermometer, an MCCGQ02HL door sensor (open), an RTCGQ02LM motion sensor's button pressed, a K9B-2BTN wall switch (left button double-pressed), a YLKG07YL dimmer turned right 3 steps and a Magic Cube turned left.",
          "devices": [
            {
              "id": "mibeacon_thermometer", "address": "C0:FF:EE:17:05:01", "name": "MJ_HT_V1", "connectable": false, "rssi": -66,
              "advertisement": {"service_data": [{"uuid": "fe95", "value": "5050aa0107010517eeffc00d1004d7000b02"}]}
            },
            {
              "id": "mibeacon_door", "address": "C0:FF:EE:17:05:02", "connectable": false, "rssi": -70,
              "advertisement": {"service_data": [{"uuid": "fe95", "value": "50508b0907020517eeffc019100100"}]}
            },
            {
              "id": "mibeacon_motion", "address": "C0:FF:EE:17:05:03", "connectable": false, "rssi": -72,
              "advertisement": {"service_data": [{"uuid": "fe95", "value": "50508d0a07030517eeffc0011003000000"}]}
            },
            {
              "id": "mibeacon_switch", "address": "C0:FF:EE:17:05:04", "connectable": false, "rssi": -64,
              "advertisement": {"service_data": [{"uuid": "fe95", "value": "5050691507040517eeffc0011003000002"}]}
            },
            {
              "id": "mibeacon_dimmer", "address": "C0:FF:EE:17:05:05", "connectable": false, "rssi": -68,
              "advertisement": {"service_data": [{"uuid": "fe95", "value": "5050b60307050517eeffc0011003000304"}]}
            },
            {
              "id": "mibeacon_cube", "address": "C0:FF:EE:17:05:06", "connectable": false, "rssi": -74,
              "advertisement": {"service_data": [{"uuid": "fe95", "value": "5050e10407060517eeffc0011003010000"}]}
            }
          ]
        }
        """#,
        "mopeka": #"""
        {
          "name": "mopeka",
          "description": "Mopeka Pro Check tank sensors under propane bottles (manufacturer data 0x0059, service 0xFEE5): one with a good reading (384 mm at 20 °C), one whose reading quality is 0.",
          "devices": [
            {
              "id": "mopeka_full", "address": "C0:FF:EE:17:02:41", "connectable": false, "rssi": -69,
              "advertisement": {"service_uuids": ["fee5"], "manufacturer_data": [{"company": 89, "value": "03603ce8c317024105fa"}]}
            },
            {
              "id": "mopeka_poor", "address": "C0:FF:EE:17:02:42", "connectable": false, "rssi": -81,
              "advertisement": {"service_uuids": ["fee5"], "manufacturer_data": [{"company": 89, "value": "0c5550e80317024200fe"}]}
            }
          ]
        }
        """#,
        "oralb": #"""
        {
          "name": "oralb",
          "description": "Oral-B toothbrushes advertising manufacturer data 0x00DC: a Genius D701 brushing (1:30, high pressure, quadrant 2 of 4) and an idle iO Series 5.",
          "devices": [
            {
              "id": "oralb_genius", "address": "C0:FF:EE:17:02:31", "name": "Oral-B Toothbrush", "connectable": true, "rssi": -58,
              "advertisement": {"manufacturer_data": [{"company": 220, "value": "0320010380011e01020f04"}]}
            },
            {
              "id": "oralb_io", "address": "C0:FF:EE:17:02:32", "name": "Oral-B Toothbrush", "connectable": true, "rssi": -66,
              "advertisement": {"manufacturer_data": [{"company": 220, "value": "043510020000000903"}]}
            }
          ]
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
        "qingping": #"""
        {
          "name": "qingping",
          "description": "Qingping sensors advertising service data 0xFDCD: a CGG1 thermometer, a CGH1 door sensor left open, a CGPR1 motion and light sensor, a CGDN1 air monitor and a CGP23W barometer.",
          "devices": [
            {
              "id": "qingping_cgg1", "address": "C0:FF:EE:17:02:11", "connectable": false, "rssi": -68,
              "advertisement": {"service_data": [{"uuid": "fdcd", "value": "0807110217eeffc00104e600f401020155"}]}
            },
            {
              "id": "qingping_door", "address": "C0:FF:EE:17:02:12", "connectable": false, "rssi": -71,
              "advertisement": {"service_data": [{"uuid": "fdcd", "value": "0804120217eeffc0040102020164"}]}
            },
            {
              "id": "qingping_motion", "address": "C0:FF:EE:17:02:13", "connectable": false, "rssi": -73,
              "advertisement": {"service_data": [{"uuid": "fdcd", "value": "0812130217eeffc008040164000a110101"}]}
            },
            {
              "id": "qingping_air", "address": "C0:FF:EE:17:02:14", "connectable": false, "rssi": -62,
              "advertisement": {"service_data": [{"uuid": "fdcd", "value": "080e140217eeffc012040a0014001302e8030201ff"}]}
            },
            {
              "id": "qingping_baro", "address": "C0:FF:EE:17:02:15", "connectable": false, "rssi": -75,
              "advertisement": {"service_data": [{"uuid": "fdcd", "value": "0826150217eeffc00104e600f4010702c826"}]}
            }
          ]
        }
        """#,
        "scales": #"""
        {
          "name": "scales",
          "description": "Xiaomi bathroom scales: a Mi Smart Scale (service data 0x181D) showing a final 70 kg, and a Mi Body Composition Scale (0x181B) with a final 72.5 kg and 500 Ω impedance.",
          "devices": [
            {
              "id": "miscale_v1", "address": "C0:FF:EE:17:04:01", "connectable": false, "rssi": -70,
              "advertisement": {"service_data": [{"uuid": "181d", "value": "22b036e907011e0c2e0a"}]}
            },
            {
              "id": "miscale_v2", "address": "C0:FF:EE:17:04:02", "connectable": false, "rssi": -74,
              "advertisement": {"service_data": [{"uuid": "181b", "value": "0222e907011e0c2e0af401a438"}]}
            }
          ]
        }
        """#,
        "sensorpush": #"""
        {
          "name": "sensorpush",
          "description": "SensorPush sensors: an HT.w, an HTP.xw and a TC.x advertising their service UUID with readings packed into the manufacturer data's company-id bytes and after, and an HT1 (local name s).",
          "devices": [
            {
              "id": "sensorpush_htw", "address": "C0:FF:EE:17:02:21", "name": "SensorPush HT.w 1A2B", "connectable": false, "rssi": -64,
              "advertisement": {"service_uuids": ["ef090000-11d6-42ba-93b8-9dd7ec090ab0"], "manufacturer_data": [{"company": 3076, "value": "cd3447"}]}
            },
            {
              "id": "sensorpush_htpxw", "address": "C0:FF:EE:17:02:22", "name": "SensorPush HTP.xw 3C4D", "connectable": false, "rssi": -70,
              "advertisement": {"service_uuids": ["ef090000-11d6-42ba-93b8-9dd7ec090ab0"], "manufacturer_data": [{"company": 64768, "value": "c9b155d5ba"}]}
            },
            {
              "id": "sensorpush_tcx", "address": "C0:FF:EE:17:02:23", "name": "SensorPush TC.x 5E6F", "connectable": false, "rssi": -74,
              "advertisement": {"service_uuids": ["ef090000-11d6-42ba-93b8-9dd7ec090ab0"], "manufacturer_data": [{"company": 8456, "value": "1c00"}]}
            },
            {
              "id": "sensorpush_ht1", "address": "C0:FF:EE:17:02:24", "name": "s", "connectable": false, "rssi": -77,
              "advertisement": {"service_uuids": ["ef090000-11d6-42ba-93b8-9dd7ec090aa9"], "manufacturer_data": [{"company": 26411, "value": "8b05"}]}
            }
          ]
        }
        """#,
        "switchbot": #"""
        {
          "name": "switchbot",
          "description": "SwitchBot devices advertising as they do: a Meter and a Meter Plus in service data 0xFD3D, an Outdoor Meter whose reading is in manufacturer data 0x0969, a Contact Sensor, a Motion Sensor and a Bot in switch mode.",
          "devices": [
            {
              "id": "switchbot_meter", "address": "C0:FF:EE:17:02:01", "connectable": false, "rssi": -66,
              "advertisement": {"service_data": [{"uuid": "fd3d", "value": "5400e407992d"}]}
            },
            {
              "id": "switchbot_meter_plus", "address": "C0:FF:EE:17:02:02", "connectable": false, "rssi": -70,
              "advertisement": {
                "service_data": [{"uuid": "fd3d", "value": "6900e4069531"}],
                "manufacturer_data": [{"company": 2409, "value": "c0ffee1702020e0006953100"}]
              }
            },
            {
              "id": "switchbot_outdoor", "address": "C0:FF:EE:17:02:03", "connectable": false, "rssi": -78,
              "advertisement": {
                "service_data": [{"uuid": "fd3d", "value": "770058"}],
                "manufacturer_data": [{"company": 2409, "value": "c0ffee170203220003033c00"}]
              }
            },
            {
              "id": "switchbot_contact", "address": "C0:FF:EE:17:02:04", "connectable": false, "rssi": -72,
              "advertisement": {"service_data": [{"uuid": "fd3d", "value": "644055030000000002"}]}
            },
            {
              "id": "switchbot_motion", "address": "C0:FF:EE:17:02:05", "connectable": false, "rssi": -74,
              "advertisement": {"service_data": [{"uuid": "fd3d", "value": "73c05a000026"}]}
            },
            {
              "id": "switchbot_bot", "address": "C0:FF:EE:17:02:06", "rssi": -60,
              "advertisement": {"service_data": [{"uuid": "fd3d", "value": "48805f"}]}
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
        "victron": #"""
        {
          "name": "victron",
          "description": "Victron Instant Readout (manufacturer data 0x02E1, AES-128-CTR), all seven with the advertisement key 0df4d0617b6c4e1b9d3f1a2b3c4d5e6f (give it as bind_key): a SmartSolar charger in bulk at 13.45 V, 71 W; a SmartShunt at 12.87 V, -2.345 A, 87.5 %, 25 °C; a Phoenix inverter at 230.1 V, 420 VA; an Orion Smart DC-DC converter 14.1 V in, 13.8 V out; a Smart Lithium battery, four cells at 3.32-3.34 V, 13.31 V, balanced, 22 °C; a SmartShunt as DC energy meter (wind charger) at 12.87 V, -2.345 A; an Orion XS in bulk, 14.1 V in, 13.8 V and 12.3 A out.",
          "devices": [
            {
              "id": "victron_solar", "address": "C0:FF:EE:17:03:01", "connectable": false, "rssi": -66,
              "advertisement": {"manufacturer_data": [{"company": 737, "value": "100253a00134120ddaeaf04a3eb8b7f42fc70e49"}]}
            },
            {
              "id": "victron_shunt", "address": "C0:FF:EE:17:03:02", "connectable": false, "rssi": -71,
              "advertisement": {"manufacturer_data": [{"company": 737, "value": "100289a302b0400d896c8f2dd6a21251f6e8f4039900da"}]}
            },
            {
              "id": "victron_inverter", "address": "C0:FF:EE:17:03:03", "connectable": false, "rssi": -75,
              "advertisement": {"manufacturer_data": [{"company": 737, "value": "100231a20301000dff860c401005c221227552"}]}
            },
            {
              "id": "victron_orion", "address": "C0:FF:EE:17:03:04", "connectable": false, "rssi": -78,
              "advertisement": {"manufacturer_data": [{"company": 737, "value": "1002c0a304efbe0d98ba2884827d5dc78cdb"}]}
            },
            {
              "id": "victron_lithium", "address": "C0:FF:EE:17:03:05", "connectable": false, "rssi": -69,
              "advertisement": {"manufacturer_data": [{"company": 737, "value": "1002e5a005ee0b0dd0d04527d39734411fa2ed728d05a30b"}]}
            },
            {
              "id": "victron_meter", "address": "C0:FF:EE:17:03:06", "connectable": false, "rssi": -73,
              "advertisement": {"manufacturer_data": [{"company": 737, "value": "1002a8a30dee0b0d282f4222d397039a1380ed"}]}
            },
            {
              "id": "victron_orion_xs", "address": "C0:FF:EE:17:03:07", "connectable": false, "rssi": -77,
              "advertisement": {"manufacturer_data": [{"company": 737, "value": "1002f0a30fee0b0dd3d02122a8977e60b2a4128d7236"}]}
            }
          ]
        }
        """#,
    ]
}
