/// Generates `org.freedesktop.DBus.Introspectable` data for an exported path.
enum IntrospectionXML {
    static let doctype = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
        "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">

        """

    /// libdbus's own answer when no handler took an Introspect call: the child nodes only.
    static func childNodesOnly(_ children: [String]) -> String {
        doctype + "<node>\n" + children.map { "  <node name=\"\(escape($0))\"/>\n" }.joined() + "</node>\n"
    }

    static func document(
        interfaces: [DBusInterface]?, isObjectManager: Bool, children: [String]
    ) -> String {
        var xml =
            doctype + """
                <node>
                  <interface name="org.freedesktop.DBus.Introspectable">
                    <method name="Introspect"><arg name="xml" type="s" direction="out"/></method>
                  </interface>
                  <interface name="org.freedesktop.DBus.Peer">
                    <method name="Ping"/>
                    <method name="GetMachineId"><arg name="machine_uuid" type="s" direction="out"/></method>
                  </interface>

                """
        if interfaces != nil {
            xml += """
                  <interface name="org.freedesktop.DBus.Properties">
                    <method name="Get"><arg name="interface" type="s" direction="in"/><arg name="name" type="s" direction="in"/><arg name="value" type="v" direction="out"/></method>
                    <method name="GetAll"><arg name="interface" type="s" direction="in"/><arg name="properties" type="a{sv}" direction="out"/></method>
                    <method name="Set"><arg name="interface" type="s" direction="in"/><arg name="name" type="s" direction="in"/><arg name="value" type="v" direction="in"/></method>
                    <signal name="PropertiesChanged"><arg name="interface" type="s"/><arg name="changed_properties" type="a{sv}"/><arg name="invalidated_properties" type="as"/></signal>
                  </interface>

                """
        }
        if isObjectManager {
            xml += """
                  <interface name="org.freedesktop.DBus.ObjectManager">
                    <method name="GetManagedObjects"><arg name="objects" type="a{oa{sa{sv}}}" direction="out"/></method>
                    <signal name="InterfacesAdded"><arg name="object" type="o"/><arg name="interfaces" type="a{sa{sv}}"/></signal>
                    <signal name="InterfacesRemoved"><arg name="object" type="o"/><arg name="interfaces" type="as"/></signal>
                  </interface>

                """
        }
        for interface in interfaces ?? [] {
            xml += "  <interface name=\"\(escape(interface.name))\">\n"
            for method in interface.methods {
                xml += "    <method name=\"\(escape(method.name))\">"
                for type in method.inSignature.completeTypes {
                    xml += "<arg type=\"\(escape(type.rawValue))\" direction=\"in\"/>"
                }
                for type in method.outSignature.completeTypes {
                    xml += "<arg type=\"\(escape(type.rawValue))\" direction=\"out\"/>"
                }
                xml += "</method>\n"
            }
            for signal in interface.signals {
                xml += "    <signal name=\"\(escape(signal.name))\">"
                for type in signal.signature.completeTypes { xml += "<arg type=\"\(escape(type.rawValue))\"/>" }
                xml += "</signal>\n"
            }
            for property in interface.properties {
                xml +=
                    "    <property name=\"\(escape(property.name))\" type=\"\(escape(property.signature.rawValue))\" access=\"\(property.access.rawValue)\"/>\n"
            }
            xml += "  </interface>\n"
        }
        for child in children { xml += "  <node name=\"\(escape(child))\"/>\n" }
        xml += "</node>\n"
        return xml
    }

    private static func escape(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            default: result.append(character)
            }
        }
        return result
    }
}
