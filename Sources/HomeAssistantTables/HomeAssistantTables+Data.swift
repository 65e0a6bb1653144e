// The Home Assistant tables BLEBridge checks discovery against, as facts (names and units),
// read from Home Assistant 2026.11.0 (the `homeassistant` package on PyPI:
// components/sensor/const.py DEVICE_CLASS_UNITS, DEVICE_CLASS_STATE_CLASSES, STATE_CLASS_UNITS;
// components/binary_sensor/const.py BinarySensorDeviceClass). Raise `version` with the tables.
extension HomeAssistantTables {
    /// The Home Assistant release these tables come from.
    package static let version = "2026.11.0"

    /// Every sensor device class, with the units Home Assistant accepts for it (`nil`: no unit);
    /// nil for classes that take any unit or none (`date`, `enum`, `monetary`, `timestamp`, `uptime`).
    package static let sensorUnits: [String: [String?]?] = [
        "absolute_humidity": ["g/m³", "mg/m³"],
        "apparent_power": ["VA", "kVA", "mVA"],
        "aqi": [nil],
        "area": ["ac", "cm²", "ft²", "ha", "in²", "km²", "mi²", "mm²", "m²", "yd²"],
        "atmospheric_pressure": [
            "Pa", "atm", "bar", "cbar", "hPa", "inHg", "inH₂O", "kPa", "mPa", "mbar", "mmHg", "psi",
        ],
        "battery": ["%"],
        "blood_glucose_concentration": ["mg/dL", "mmol/L"],
        "carbon_dioxide": ["ppm"],
        "carbon_monoxide": ["mg/m³", "ppb", "ppm", "μg/m³"],
        "conductivity": ["S/cm", "mS/cm", "μS/cm"],
        "current": ["A", "mA", "μA"],
        "data_rate": ["B/s", "GB/s", "Gbit/s", "GiB/s", "KiB/s", "MB/s", "Mbit/s", "MiB/s", "bit/s", "kB/s", "kbit/s"],
        "data_size": [
            "B", "EB", "EiB", "GB", "Gbit", "GiB", "KiB", "MB", "Mbit", "MiB", "PB", "PiB", "TB", "TiB", "YB", "YiB",
            "ZB", "ZiB", "bit", "kB", "kbit",
        ],
        "date": nil,
        "distance": ["cm", "ft", "in", "km", "m", "mi", "mm", "nmi", "yd"],
        "duration": ["d", "h", "min", "ms", "s", "μs"],
        "energy": [
            "GJ", "GWh", "Gcal", "J", "MJ", "MWh", "Mcal", "TWh", "Wh", "cal", "kJ", "kWh", "kcal", "mWh", "thm",
        ],
        "energy_distance": ["Wh/km", "kWh/100km", "km/kWh", "mi/kWh"],
        "energy_storage": [
            "GJ", "GWh", "Gcal", "J", "MJ", "MWh", "Mcal", "TWh", "Wh", "cal", "kJ", "kWh", "kcal", "mWh", "thm",
        ],
        "enum": nil,
        "frequency": ["GHz", "Hz", "MHz", "kHz", "mHz"],
        "gas": ["CCF", "L", "MCF", "ft³", "m³"],
        "humidity": ["%"],
        "illuminance": ["lx"],
        "irradiance": ["BTU/(h⋅ft²)", "W/m²"],
        "moisture": ["%"],
        "monetary": nil,
        "nitrogen_dioxide": ["ppb", "ppm", "μg/m³"],
        "nitrogen_monoxide": ["ppb", "μg/m³"],
        "nitrous_oxide": ["μg/m³"],
        "ozone": ["ppb", "ppm", "μg/m³"],
        "ph": [nil],
        "pm1": ["μg/m³"],
        "pm10": ["μg/m³"],
        "pm25": ["μg/m³"],
        "pm4": ["μg/m³"],
        "power": ["GW", "MW", "TW", "W", "kW", "mW"],
        "power_factor": ["%", nil],
        "precipitation": ["cm", "in", "mm"],
        "precipitation_intensity": ["in/d", "in/h", "mm/d", "mm/h"],
        "pressure": ["Pa", "atm", "bar", "cbar", "hPa", "inHg", "inH₂O", "kPa", "mPa", "mbar", "mmHg", "psi"],
        "radon": ["Bq/m³", "pCi/L"],
        "reactive_energy": ["kvarh", "varh"],
        "reactive_power": ["kvar", "mvar", "var"],
        "signal_strength": ["dB", "dBm"],
        "sound_pressure": ["dB", "dBA"],
        "speed": [
            "Beaufort", "ft/s", "in/d", "in/h", "in/s", "km/h", "kn", "m/min", "m/s", "mm/d", "mm/h", "mm/s", "mph",
        ],
        "sulphur_dioxide": ["ppb", "μg/m³"],
        "temperature": ["K", "°C", "°F"],
        "temperature_delta": ["K", "°C", "°F"],
        "timestamp": nil,
        "uptime": nil,
        "volatile_organic_compounds": ["mg/m³", "μg/m³"],
        "volatile_organic_compounds_parts": ["ppb", "ppm"],
        "voltage": ["MV", "V", "kV", "mV", "μV"],
        "volume": ["CCF", "L", "MCF", "fl. oz.", "ft³", "gal", "mL", "m³"],
        "volume_flow_rate": [
            "L/h", "L/min", "L/s", "ft³/min", "gal/d", "gal/h", "gal/min", "mL/s", "m³/h", "m³/min", "m³/s",
        ],
        "volume_storage": ["CCF", "L", "MCF", "fl. oz.", "ft³", "gal", "mL", "m³"],
        "water": ["CCF", "L", "MCF", "ft³", "gal", "m³"],
        "weight": ["g", "kg", "lb", "mg", "oz", "st", "μg"],
        "wind_direction": ["°"],
        "wind_speed": ["Beaufort", "ft/s", "in/s", "km/h", "kn", "m/min", "m/s", "mm/s", "mph"],
    ]

    /// The state classes Home Assistant allows per sensor device class (empty: none).
    package static let sensorStateClasses: [String: [String]] = [
        "absolute_humidity": ["measurement"],
        "apparent_power": ["measurement"],
        "aqi": ["measurement"],
        "area": ["measurement", "measurement_angle", "total", "total_increasing"],
        "atmospheric_pressure": ["measurement"],
        "battery": ["measurement"],
        "blood_glucose_concentration": ["measurement"],
        "carbon_dioxide": ["measurement"],
        "carbon_monoxide": ["measurement"],
        "conductivity": ["measurement"],
        "current": ["measurement"],
        "data_rate": ["measurement"],
        "data_size": ["measurement", "measurement_angle", "total", "total_increasing"],
        "date": [],
        "distance": ["measurement", "measurement_angle", "total", "total_increasing"],
        "duration": ["measurement", "measurement_angle", "total", "total_increasing"],
        "energy": ["total", "total_increasing"],
        "energy_distance": ["measurement"],
        "energy_storage": ["measurement"],
        "enum": [],
        "frequency": ["measurement"],
        "gas": ["total", "total_increasing"],
        "humidity": ["measurement"],
        "illuminance": ["measurement"],
        "irradiance": ["measurement"],
        "moisture": ["measurement"],
        "monetary": ["total"],
        "nitrogen_dioxide": ["measurement"],
        "nitrogen_monoxide": ["measurement"],
        "nitrous_oxide": ["measurement"],
        "ozone": ["measurement"],
        "ph": ["measurement"],
        "pm1": ["measurement"],
        "pm10": ["measurement"],
        "pm25": ["measurement"],
        "pm4": ["measurement"],
        "power": ["measurement"],
        "power_factor": ["measurement"],
        "precipitation": ["measurement", "measurement_angle", "total", "total_increasing"],
        "precipitation_intensity": ["measurement"],
        "pressure": ["measurement"],
        "radon": ["measurement"],
        "reactive_energy": ["total", "total_increasing"],
        "reactive_power": ["measurement"],
        "signal_strength": ["measurement"],
        "sound_pressure": ["measurement"],
        "speed": ["measurement"],
        "sulphur_dioxide": ["measurement"],
        "temperature": ["measurement"],
        "temperature_delta": ["measurement"],
        "timestamp": [],
        "uptime": [],
        "volatile_organic_compounds": ["measurement"],
        "volatile_organic_compounds_parts": ["measurement"],
        "voltage": ["measurement"],
        "volume": ["total", "total_increasing"],
        "volume_flow_rate": ["measurement"],
        "volume_storage": ["measurement"],
        "water": ["total", "total_increasing"],
        "weight": ["measurement", "total", "total_increasing"],
        "wind_direction": ["measurement_angle"],
        "wind_speed": ["measurement"],
    ]

    /// State classes that accept only some units, whatever the device class.
    package static let stateClassUnits: [String: [String?]] = [
        "measurement_angle": ["°"]
    ]

    package static let stateClasses: [String] = ["measurement", "measurement_angle", "total", "total_increasing"]

    package static let binarySensorDeviceClasses: Set<String> = [
        "battery", "battery_charging", "carbon_monoxide", "cold", "connectivity", "door", "garage_door", "gas",
        "glass_break", "heat", "light", "lock", "moisture", "motion", "moving", "occupancy", "opening", "plug",
        "power", "presence", "problem", "running", "safety", "smoke", "sound", "tamper", "update", "vibration",
        "window",
    ]

    /// `EventDeviceClass` (homeassistant/components/event/const.py).
    package static let eventDeviceClasses: Set<String> = ["button", "doorbell", "motion"]
}
