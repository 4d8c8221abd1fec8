// The device-jwt fuzz target's entry: libFuzzer drives DeviceJWTFuzzer.swift's LLVMFuzzerTestOneInput.
import FuzzSupport

runFuzzer(testOneInput)
