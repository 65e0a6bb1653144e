import ProcessMemory
import TaskPool

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// First: glibc reads its allocator tunables only at start, so the process starts again with
// them (same PID and arguments; ProcessMemory.startWithTunedAllocator).
ProcessMemory.startWithTunedAllocator()
// Before any thread exists: one malloc arena for the whole process (ProcessMemory).
ProcessMemory.useCompactAllocator()
// Before the first task: Swift's global executor on a fixed pool of threads (TaskPool), not on
// libdispatch's, which grows when a worker waits at its once-a-second look.
TaskPool.install()
// Thin entry point: everything happens in CommandLineTool and the commands in Commands/.
let status = await CommandLineTool.main(arguments: Array(CommandLine.arguments.dropFirst()))
exit(status.rawValue)
