// The form-body fuzz target's entry: libFuzzer drives FormBodyFuzzer.swift's LLVMFuzzerTestOneInput.
import FuzzSupport

runFuzzer(testOneInput)
