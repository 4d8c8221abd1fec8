// The dpop fuzz target's entry: libFuzzer drives DPoPFuzzer.swift's LLVMFuzzerTestOneInput.
import FuzzSupport

runFuzzer(testOneInput)
