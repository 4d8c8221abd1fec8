// Starts libFuzzer from a fuzz target's main.swift.
import CFuzzerDriver

#if canImport(Glibc)
import Glibc
#endif

/// Hands the command line to libFuzzer and exits with its status. SwiftPM renames an executable's `main` on Linux
/// (`--defsym main=<module>_main`), so libFuzzer's own `main` is never linked; its driver is called instead.
public func runFuzzer(_ testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> Never {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, testOneInput))
}
