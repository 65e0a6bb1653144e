/// The configuration of a private `dbus-daemon` for the simulator, the demo and the tests: one
/// Unix socket, and a policy that lets any client own any name and send anything, like a session
/// bus, so a simulator can own `org.bluez` without root. Limits are raised for bulk tests and
/// benchmarks (large arrays, many outstanding calls and match rules).
package enum PrivateBusConfiguration {
    /// The `--config-file` text for a daemon listening on `unix:path=<socketPath>`.
    package static func text(socketPath: String) -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:path=\(socketPath)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
          <limit name="max_replies_per_connection">50000</limit>
          <limit name="max_incoming_bytes">1000000000</limit>
          <limit name="max_outgoing_bytes">1000000000</limit>
          <limit name="max_message_size">134217728</limit>
          <limit name="max_connections_per_user">10000</limit>
          <limit name="max_match_rules_per_connection">50000</limit>
        </busconfig>
        """
    }
}
