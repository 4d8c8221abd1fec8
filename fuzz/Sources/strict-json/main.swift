// The strict-json fuzz target's entry: libFuzzer drives StrictJSONFuzzer.swift's LLVMFuzzerTestOneInput.
import FuzzSupport

runFuzzer(testOneInput)
