// The scim-filter fuzz target's entry: libFuzzer drives SCIMFilterFuzzer.swift's LLVMFuzzerTestOneInput.
import FuzzSupport

runFuzzer(testOneInput)
