// Is Synchronization.Mutex visible to ThreadSanitizer on this toolchain? scripts/sanitize.sh
// compiles this file twice with -sanitize=thread, once as it is and once with NSLock
// (-D PROBE_NSLOCK), and runs both: four threads append to one array, always under the lock.
// There is no race. On Swift 6.3.1 for Linux the NSLock build gives 0 reports and the Mutex
// build reports "Swift access race": Mutex's contended path waits on a futex inside the
// uninstrumented Synchronization library, so TSan sees no happens-before edge. That is why
// Tests/Sanitizers/tsan.supp silences reports whose accesses are all inside `withLock`.
import Foundation
import Synchronization

final class Shared: @unchecked Sendable {  // Guarded by `lock` below; the probe's whole point.
    var values: [Int] = []
}

#if PROBE_NSLOCK
    let lock = NSLock()
    func locked(_ body: () -> Void) { lock.withLock { body() } }
#else
    let lock = Mutex(0)
    func locked(_ body: () -> Void) { lock.withLock { _ in body() } }
#endif

let shared = Shared()
let group = DispatchGroup()
for thread in 0..<4 {
    group.enter()
    Thread {
        for index in 0..<20000 {
            locked {
                shared.values.append(thread * index)
                if shared.values.count > 100 { shared.values.removeAll() }
            }
        }
        group.leave()
    }.start()
}
group.wait()
print("probe done")
