import Foundation
import TestSupport
import Testing

/// Issue 21's second bar: `blebridge demo --gateways 3` runs the shared-broker mode on one
/// machine (three simulated adapters, one broker) and prints a table of owners that changes when
/// one gateway is stopped. Run as a user would: the built binary, the repository's config.json,
/// `kill -KILL` of a gateway's printed pid, Ctrl-C (SIGINT) at the end.
@Suite(.serialized) struct MultiGatewayDemoTests {
    /// Each device is nearest one gateway round the ring (device k nearest gateway k % 3).
    static let nearest = [
        "hr_strap": "gw-a", "thermometer": "gw-b", "bthome": "gw-c", "ibeacon": "gw-a", "lamp": "gw-b",
    ]

    /// The demo's rooms: gw-a's is the lounge, gw-b's the kitchen, gw-c's the bedroom.
    static let rooms = ["gw-a": "lounge", "gw-b": "kitchen", "gw-c": "bedroom"]

    /// One printed table: each gateway's state, each device's owner ("-" for none) and room.
    struct Table: Equatable {
        var states: [String: String] = [:]
        var owners: [String: String] = [:]
        var rooms: [String: String] = [:]

        /// The same states and owners (the rooms aside).
        func owns(like other: Table) -> Bool { states == other.states && owners == other.owners }
    }

    /// The tables in `output`, in order, with the offset each starts at.
    static func tables(in output: String) -> [(offset: Int, table: Table)] {
        var result: [(offset: Int, table: Table)] = []
        var offset = 0
        for block in output.components(separatedBy: "\n\n") {
            defer { offset += block.utf8.count + 2 }
            let lines = block.split(separator: "\n").map(String.init)
            guard let stateLine = lines.firstIndex(where: { $0.hasPrefix("gateways: ") }),
                lines.count > stateLine + 1, lines[stateLine + 1].hasPrefix("device")
            else { continue }
            var table = Table()
            for entry in lines[stateLine].dropFirst("gateways: ".count).components(separatedBy: ", ") {
                let words = entry.split(separator: " ")
                if words.count >= 2 { table.states[String(words[0])] = String(words[1]) }
            }
            let roomColumn = lines[stateLine + 1].split(separator: " ").last == "room"
            for row in lines[(stateLine + 2)...] {
                let words = row.split(separator: " ")
                if words.count >= 2 { table.owners[String(words[0])] = String(words[1]) }
                if roomColumn, words.count >= 3, let room = words.last { table.rooms[String(words[0])] = String(room) }
            }
            result.append((offset, table))
        }
        return result
    }

    @Test func theTableOfOwnersFollowsAStoppedGatewayAndItsReturn() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let demo = try ChildProcess(
            try BinaryLocator.blebridge(),
            [
                "demo", "--config", root.appendingPathComponent("config.json").path, "--gateways", "3",
                "--restart-after", "3s",
            ])
        func output() -> String { demo.standardOutput }
        func report() -> String { "stdout:\n\(output().suffix(6000))\nstderr:\n\(demo.standardError.suffix(3000))" }
        let started = Date()

        // Every device owned by the gateway nearest it, all three online.
        let settled = Table(states: ["gw-a": "online", "gw-b": "online", "gw-c": "online"], owners: Self.nearest)
        let owned = await demo.waitForOutput(timeout: .seconds(60)) { text in
            Self.tables(in: text).contains { $0.table.owns(like: settled) }
        }
        #expect(owned, "\(report())")
        guard owned else { return await demo.stop() }
        let settledMs = Int(Date().timeIntervalSince(started) * 1000)
        // Each device in the room of the gateway nearest it (room presence; a held device keeps
        // its holder's presence although it no longer advertises).
        let nearestRooms = Self.nearest.compactMapValues { Self.rooms[$0] }
        let roomed = await demo.waitForOutput(timeout: .seconds(30)) { text in
            Self.tables(in: text).contains { $0.table.rooms == nearestRooms }
        }
        #expect(roomed, "\(report())")
        let roomsMs = Int(Date().timeIntervalSince(started) * 1000)

        // The pid of gw-a, from the banner; kill it as a user would.
        let banner = output().split(separator: "\n").first { $0.contains("gateways: gw-a pid ") } ?? ""
        let pids = banner.split(separator: ",").compactMap { part -> (String, Int32)? in
            let words = part.split(separator: " ")
            guard let pid = words.last.flatMap({ Int32($0) }), let name = words.first(where: { $0.hasPrefix("gw-") })
            else { return nil }
            return (String(name), pid)
        }
        let gatewayA = try #require(pids.first { $0.0 == "gw-a" }?.1, "\(banner)")
        let killedAt = output().utf8.count
        let killed = Date()
        kill(gatewayA, SIGKILL)

        // gw-a's devices (the strap and the iBeacon) move to the next best gateway, gw-b; the rest stay.
        var failedOver = Self.nearest
        failedOver["hr_strap"] = "gw-b"
        failedOver["ibeacon"] = "gw-b"
        let moved = Table(states: ["gw-a": "offline", "gw-b": "online", "gw-c": "online"], owners: failedOver)
        let movedSeen = await demo.waitForOutput(timeout: .seconds(30)) { text in
            Self.tables(in: text).contains { $0.offset >= killedAt && $0.table.owns(like: moved) }
        }
        #expect(movedSeen, "\(report())")
        let movedMs = Int(Date().timeIntervalSince(killed) * 1000)
        // gw-a's devices are now nearest gw-b: the kitchen (gw-a's will drops its presence at once).
        var movedRooms = nearestRooms
        movedRooms["hr_strap"] = "kitchen"
        movedRooms["ibeacon"] = "kitchen"
        let roomsMoved = await demo.waitForOutput(timeout: .seconds(15)) { text in
            Self.tables(in: text).contains { $0.offset >= killedAt && $0.table.rooms == movedRooms }
        }
        #expect(roomsMoved, "\(report())")
        let roomsMovedMs = Int(Date().timeIntervalSince(killed) * 1000)
        // The demo reports the exit when it reaps the child, which can come after the broker has
        // delivered the will and the table has moved.
        let reaped = await demo.waitForOutput(timeout: .seconds(10)) { $0.contains("gw-a stopped (signal 9)") }
        #expect(reaped, "\(report())")

        // The demo starts gw-a again (3 s later); after the switch delay it takes its devices back.
        let restarted = await demo.waitForOutput(timeout: .seconds(20)) { $0.contains("gw-a started again") }
        #expect(restarted, "\(report())")
        let backAt = output().range(of: "gw-a started again").map { output()[..<$0.lowerBound].utf8.count } ?? 0
        let handedBack = await demo.waitForOutput(timeout: .seconds(45)) { text in
            Self.tables(in: text).contains {
                $0.offset >= backAt && $0.table.owns(like: settled) && $0.table.rooms == nearestRooms
            }
        }
        #expect(handedBack, "\(report())")
        let backMs = Int(Date().timeIntervalSince(killed) * 1000)

        // No flapping: after the kill, the strap went to gw-b, then back to gw-a, once each.
        var strapOwners: [String] = []
        for (offset, table) in Self.tables(in: output()) where offset >= killedAt {
            guard let owner = table.owners["hr_strap"], owner != "-", strapOwners.last != owner else { continue }
            strapOwners.append(owner)
        }
        #expect(strapOwners == ["gw-b", "gw-a"], "\(report())")

        // Ctrl-C stops everything it started: the demo exits 0 and no gateway is left running.
        demo.signal(SIGINT)
        let status = await demo.waitForExit(timeout: .seconds(30))
        #expect(status == 0, "\(report())")
        for (name, pid) in pids where name != "gw-a" {
            #expect(kill(pid, 0) == -1 && errno == ESRCH, "\(name) (pid \(pid)) still runs after the demo stopped")
        }
        print(
            "demo --gateways 3: owners settled \(settledMs) ms after the start, rooms \(roomsMs) ms; gw-a's "
                + "devices on gw-b \(movedMs) ms after its SIGKILL, in the kitchen \(roomsMovedMs) ms; back on gw-a "
                + "(owners and rooms) \(backMs) ms after it; load "
                + "\(MultiGatewayEndToEndTests.loadAverage())")
    }

    @Test func stopAndRestartOptionsNeedGateways() async throws {
        for option in ["--stop-after", "--restart-after"] {
            let result = try await ChildProcess.run(
                try BinaryLocator.blebridge(), ["demo", option, "10s"], timeout: .seconds(20))
            #expect(result.status == 64, "\(result)")
            #expect(result.stderr.contains("need --gateways"), "\(result)")
        }
        let result = try await ChildProcess.run(
            try BinaryLocator.blebridge(), ["demo", "--gateways", "9"], timeout: .seconds(20))
        #expect(result.status == 64, "\(result)")
        #expect(result.stderr.contains("2 to 5"), "\(result)")
    }
}
