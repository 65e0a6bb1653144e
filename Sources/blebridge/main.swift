import ProcessMemory

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Before any thread exists: one malloc arena for the whole process (ProcessMemory).
ProcessMemory.useCompactAllocator()
// Thin entry point: everything happens in CommandLineTool and the commands in Commands/.
let status = await CommandLineTool.main(arguments: Array(CommandLine.arguments.dropFirst()))
exit(status.rawValue)
