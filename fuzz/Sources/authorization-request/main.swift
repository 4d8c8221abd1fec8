// The authorization-request fuzz target's entry: libFuzzer drives AuthorizationRequestFuzzer.swift's LLVMFuzzerTestOneInput.
import FuzzSupport

runFuzzer(testOneInput)
