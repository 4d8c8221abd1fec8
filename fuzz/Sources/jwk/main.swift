// The jwk fuzz target's entry: libFuzzer drives JWKFuzzer.swift's LLVMFuzzerTestOneInput.
import FuzzSupport

runFuzzer(testOneInput)
