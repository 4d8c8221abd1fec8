// The accept fuzz target's entry: libFuzzer drives AcceptFuzzer.swift's LLVMFuzzerTestOneInput.
import FuzzSupport

runFuzzer(testOneInput)
