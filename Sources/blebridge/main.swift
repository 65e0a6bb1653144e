import Foundation
import Gateway

// Thin entry point: the commands live in the modules; this file only dispatches.
let arguments = Array(CommandLine.arguments.dropFirst())
let usage = """
    Usage: blebridge <command> [options]

    Commands:
      run            Run the gateway (BLE -> MQTT, commands back)
      check-config   Validate a configuration file and print a summary
      scan           Show nearby BLE devices
      simulate       Run the BlueZ simulator on a D-Bus bus
      demo           Run the gateway against the simulator and a local broker
      decode         Decode a characteristic value given in hex

    Options:
      -h, --help     Show this help
      --version      Show the version
    """
switch arguments.first {
case "--version":
    print("blebridge \(BLEBridgeVersion.string)")
case "-h", "--help", "help":
    print(usage)
default:
    FileHandle.standardError.write(Data((usage + "\n").utf8))
    exit(64)
}
