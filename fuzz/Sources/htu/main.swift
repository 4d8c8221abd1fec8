// The htu fuzz target's entry: libFuzzer drives HTUFuzzer.swift's LLVMFuzzerTestOneInput.
import FuzzSupport

runFuzzer(testOneInput)
