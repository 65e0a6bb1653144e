import Testing

@testable import BlueZ

/// `bluetoothd --version`'s output, and the checks of `argv[0]` before it is run.
@Suite struct BluetoothdVersionTests {
    @Test(arguments: [
        ("5.66\n", BluetoothdVersion(major: 5, minor: 66)), ("5.82", BluetoothdVersion(major: 5, minor: 82)),
        ("  5.70 \n", BluetoothdVersion(major: 5, minor: 70)), ("5.71.1\n", BluetoothdVersion(major: 5, minor: 71)),
    ])
    func versionsParse(_ text: String, _ expected: BluetoothdVersion) {
        #expect(BluetoothdVersion(parsing: text) == expected)
    }

    @Test(arguments: ["", "\n", "bluetoothd 5.66", "5", "5.", ".66", "5.x", "v5.66", "5.66 beta", "-5.66", "12345.1"])
    func otherOutputIsNoVersion(_ text: String) {
        #expect(BluetoothdVersion(parsing: text) == nil)
    }

    @Test func versionsCompareByMajorThenMinor() {
        #expect(BluetoothdVersion(major: 5, minor: 9) < BluetoothdVersion(major: 5, minor: 66))
        #expect(BluetoothdVersion(major: 5, minor: 82) < BluetoothdVersion(major: 6, minor: 0))
        #expect("\(BluetoothdVersion(major: 5, minor: 70))" == "5.70")
    }

    @Test func argumentZeroIsTheFirstNulTerminatedArgument() {
        #expect(
            BluetoothdVersionProbe.argumentZero(of: Array("/usr/libexec/bluetooth/bluetoothd\0-n\0-E\0".utf8))
                == "/usr/libexec/bluetooth/bluetoothd")
        #expect(BluetoothdVersionProbe.argumentZero(of: Array("bluetoothd".utf8)) == "bluetoothd")
        #expect(BluetoothdVersionProbe.argumentZero(of: []) == nil)
        #expect(BluetoothdVersionProbe.argumentZero(of: [0, 0x61]) == nil)
    }

    @Test func onlyAnAbsolutePathNamedBluetoothdIsRun() {
        #expect(BluetoothdVersionProbe.isBluetoothdPath("/usr/libexec/bluetooth/bluetoothd"))
        #expect(BluetoothdVersionProbe.isBluetoothdPath("/usr/sbin/bluetoothd"))
        #expect(!BluetoothdVersionProbe.isBluetoothdPath("bluetoothd"))
        #expect(!BluetoothdVersionProbe.isBluetoothdPath("./bluetoothd"))
        #expect(!BluetoothdVersionProbe.isBluetoothdPath("/usr/bin/blebridge"))
        #expect(!BluetoothdVersionProbe.isBluetoothdPath("/usr/sbin/bluetoothd-old"))
        #expect(!BluetoothdVersionProbe.isBluetoothdPath("/"))
    }
}
