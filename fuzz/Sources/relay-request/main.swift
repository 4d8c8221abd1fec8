// The relay-request fuzz target's entry: libFuzzer drives RelayRequestFuzzer.swift's LLVMFuzzerTestOneInput.
import FuzzSupport

runFuzzer(testOneInput)
