// The cbor fuzz target's entry: libFuzzer drives CBORFuzzer.swift's LLVMFuzzerTestOneInput.
import FuzzSupport

runFuzzer(testOneInput)
