// The jwe fuzz target's entry: libFuzzer drives JWEFuzzer.swift's LLVMFuzzerTestOneInput.
import FuzzSupport

runFuzzer(testOneInput)
