// The webauthn-authenticator-data fuzz target's entry: libFuzzer drives AuthenticatorDataFuzzer.swift's LLVMFuzzerTestOneInput.
import FuzzSupport

runFuzzer(testOneInput)
