// The base64url fuzz target's entry: libFuzzer drives Base64URLFuzzer.swift's LLVMFuzzerTestOneInput.
import FuzzSupport

runFuzzer(testOneInput)
