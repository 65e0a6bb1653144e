// Does ThreadSanitizer see a continuation resumed from a foreign thread? scripts/sanitize.sh
// compiles this file with -sanitize=thread twice and runs both. A worker thread creates an object
// and resumes the waiting task's continuation with it; the task then reads the object. This is
// what DBus's PendingCall.completed does with a reply `Message`. The resume orders the write
// before the read in both builds, so neither has a race.
// - As it is, the worker resumes at once, often before the task has suspended. On Swift 6.3.1
//   for Linux TSan reports the task's read as racing with the initialiser's write: that resume
//   path synchronises with atomics inside the uninstrumented Concurrency runtime and carries no
//   TSan annotation.
// - With -D PROBE_LATE_RESUME the worker waits 1 ms first, so the task has suspended (unless
//   the machine is so loaded that the task has not been scheduled for a whole millisecond); that
//   path is annotated, and TSan reports nothing over 2,000 hand-overs (6 of 6 runs at load 24;
//   with a 200 µs wait over 20,000 hand-overs, 1 report in 1 of 3 runs at that load).
// That is why Tests/Sanitizers/tsan.supp silences reports against `Message.init(adopting:)`.
import Foundation

final class Payload: @unchecked Sendable {  // Written once in init, read after the hand-over.
    let pointer: UnsafeMutablePointer<Int>
    init(_ value: Int) {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: value)
    }
    deinit { pointer.deallocate() }
}

final class Worker: @unchecked Sendable {  // `jobs` is only touched under `condition`.
    private let condition = NSCondition()
    private var jobs: [(Payload) -> Void] = []

    func start() {
        Thread { [self] in
            var made = 0
            while true {
                condition.lock()
                while jobs.isEmpty { condition.wait() }
                let job = jobs.removeFirst()
                condition.unlock()
                made += 1
                #if PROBE_LATE_RESUME
                    usleep(1000)
                #endif
                job(Payload(made))
            }
        }.start()
    }

    func submit(_ job: @escaping (Payload) -> Void) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }
}

@main
struct ContinuationHandoffProbe {
    static func main() async {
        let worker = Worker()
        worker.start()
        var sum = 0
        #if PROBE_LATE_RESUME
            let rounds = 2000
        #else
            let rounds = 20000
        #endif
        for _ in 0..<rounds {
            let payload = await withCheckedContinuation { (continuation: CheckedContinuation<Payload, Never>) in
                worker.submit { continuation.resume(returning: $0) }
            }
            sum &+= payload.pointer.pointee
        }
        print("probe done", sum)
    }
}
