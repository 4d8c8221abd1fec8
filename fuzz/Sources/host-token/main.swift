// The host-token fuzz target's entry: libFuzzer drives HostTokenFuzzer.swift's LLVMFuzzerTestOneInput.
import FuzzSupport

runFuzzer(testOneInput)
