// The cose-key fuzz target's entry: libFuzzer drives COSEKeyFuzzer.swift's LLVMFuzzerTestOneInput.
import FuzzSupport

runFuzzer(testOneInput)
