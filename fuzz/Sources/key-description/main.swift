// The key-description fuzz target's entry: libFuzzer drives KeyDescriptionFuzzer.swift's LLVMFuzzerTestOneInput.
import FuzzSupport

runFuzzer(testOneInput)
