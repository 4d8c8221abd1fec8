// The app-attest fuzz target's entry: libFuzzer drives AppAttestFuzzer.swift's LLVMFuzzerTestOneInput.
import FuzzSupport

runFuzzer(testOneInput)
