// The qr fuzz target's entry: libFuzzer drives QRFuzzer.swift's LLVMFuzzerTestOneInput.
import FuzzSupport

runFuzzer(testOneInput)
