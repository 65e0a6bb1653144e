/// The life of this process's advertisement monitors with bluetoothd (doc/advertisement-monitor-api.txt,
/// src/adv_monitor.c 5.66), as a pure state machine.
///
/// The monitors are exported under one root with an object manager; `RegisterMonitor(root)` is
/// called whenever the adapter shows `AdvertisementMonitorManager1` (again after a bluetoothd
/// restart). bluetoothd answers once it has read the tree, then calls `Activate` on each monitor
/// the kernel accepted, or `Release` on one it could not use (bad content, a kernel without pattern
/// monitors, or the unregistration). The first time every monitor is active, ``Action/ready`` is
/// emitted; a `Release` or a refused registration before that is ``Action/failed(_:)``, after it a
/// ``Action/released(_:)`` to log. `DeviceFound`/`DeviceLost` track which devices the monitors
/// currently follow: only their advertisements are reported.
///
/// bluetoothd 5.66 sends an advertisement's `PropertiesChanged` and then `DeviceFound`, but a client
/// may handle the call before those signals (a signal stream and a task per method call), and
/// bluetoothd keeps devices between scans: at the first `DeviceFound` the client's copy of
/// `Device1` may be of any age (measured in the VM tier: a value 20 s old was published). So when
/// bluetoothd filters in software (a `DeviceFound` per advertisement), the first `DeviceFound` of a
/// device only starts following it: its advertisement is reported by the property changes that
/// follow, or by its next `DeviceFound`. With the controller filtering (`controller-patterns`: one `DeviceFound` per
/// device) the first one is reported, since no second comes.
package struct AdvertisementMonitorLifecycle<Device: Hashable & Sendable>: Sendable {
    package enum Phase: Sendable, Equatable {
        /// Not registered: no manager on the adapter (yet), or bluetoothd went away.
        case waitingForManager
        /// `RegisterMonitor` is on its way.
        case registering
        /// bluetoothd accepted the root.
        case registered
        /// Registration failed or a monitor was released before all were active.
        case failed
        /// ``Event/stop`` was handled.
        case stopped
    }

    package enum Event: Sendable, Equatable {
        /// The adapter shows (true) or no longer shows (false) `AdvertisementMonitorManager1`.
        case managerAvailable(Bool)
        case registerSucceeded
        case registerFailed(String)
        /// bluetoothd called `Activate` / `Release` on the monitor at this path.
        case activated(String)
        case released(String)
        case deviceFound(Device)
        case deviceLost(Device)
        case stop
    }

    package enum Action: Sendable, Equatable {
        /// Call `RegisterMonitor(root)`.
        case register
        /// Call `UnregisterMonitor(root)`.
        case unregister
        /// Every monitor is active (the first time only).
        case ready
        /// Passive scanning cannot work: the reason.
        case failed(String)
        /// A monitor was released after it had been active (logged; reports stop for its patterns).
        case released(String)
        /// Report this device's advertisement.
        case report(Device)
    }

    /// The monitor object paths this process exports.
    package let monitors: Set<String>
    package private(set) var phase: Phase = .waitingForManager
    package private(set) var active: Set<String> = []
    /// Devices a monitor found and did not lose since.
    package private(set) var found: Set<Device> = []
    /// All monitors were active once.
    package private(set) var wasReady = false
    /// The controller filters (one `DeviceFound` per device): the first `DeviceFound` is reported.
    package let controllerFiltering: Bool

    package init(monitors: Set<String>, controllerFiltering: Bool = false) {
        self.monitors = monitors
        self.controllerFiltering = controllerFiltering
    }

    package mutating func handle(_ event: Event) -> [Action] {
        guard phase != .stopped else { return [] }
        switch event {
        case .managerAvailable(true):
            guard phase == .waitingForManager else { return [] }
            phase = .registering
            return [.register]
        case .managerAvailable(false):
            // bluetoothd or the adapter went: the registration went with them.
            guard phase != .failed else { return [] }
            phase = .waitingForManager
            active = []
            found = []
            return []
        case .registerSucceeded:
            guard phase == .registering else { return [] }
            phase = .registered
            return readiness()
        case .registerFailed(let reason):
            guard phase == .registering else { return [] }
            phase = .failed
            return [.failed("RegisterMonitor failed: \(reason)")]
        case .activated(let path):
            guard monitors.contains(path), phase == .registering || phase == .registered else { return [] }
            active.insert(path)
            return readiness()
        case .released(let path):
            guard monitors.contains(path), phase == .registering || phase == .registered else { return [] }
            let wasActive = active.remove(path) != nil
            if !wasReady {
                phase = .failed
                return [
                    .failed(
                        "bluetoothd released the monitor \(path) "
                            + (wasActive ? "after activating it" : "without activating it")
                            + " (its patterns were refused, or the kernel cannot add pattern monitors)")
                ]
            }
            return [.released(path)]
        case .deviceFound(let device):
            guard phase == .registered || phase == .registering, !active.isEmpty else { return [] }
            let first = found.insert(device).inserted
            return first && !controllerFiltering ? [] : [.report(device)]
        case .deviceLost(let device):
            found.remove(device)
            return []
        case .stop:
            let registered = phase == .registered || phase == .registering
            phase = .stopped
            found = []
            return registered ? [.unregister] : []
        }
    }

    /// Whether `device`'s advertisements are reported now.
    package func follows(_ device: Device) -> Bool {
        found.contains(device) && !active.isEmpty
    }

    private mutating func readiness() -> [Action] {
        guard !wasReady, phase == .registered, active == monitors else { return [] }
        wasReady = true
        return [.ready]
    }
}
