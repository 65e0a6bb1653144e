extension BlueZBus {
    /// The version of the bluetoothd owning `org.bluez` on this bus, or why it cannot be told
    /// (``BluetoothdVersionProbe``).
    public func bluetoothdVersion(
        timeout: Duration = BluetoothdVersionProbe.timeout
    ) async -> Result<BluetoothdVersionProbe.Found, BluetoothdVersionError> {
        await BluetoothdVersionProbe.probe(connection: connection, timeout: timeout)
    }
}
