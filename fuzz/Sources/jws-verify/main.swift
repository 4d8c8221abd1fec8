// The jws-verify fuzz target's entry: libFuzzer drives JWSVerifyFuzzer.swift's LLVMFuzzerTestOneInput.
import FuzzSupport

runFuzzer(testOneInput)
