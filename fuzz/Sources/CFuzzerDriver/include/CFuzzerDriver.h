// libFuzzer's entry for a program that has its own main (LLVM's FuzzerInterface.h, "LLVMFuzzerRunDriver").
#ifndef C_FUZZER_DRIVER_H
#define C_FUZZER_DRIVER_H

#include <stddef.h>
#include <stdint.h>

/// Runs libFuzzer with the command line as its own `main` would, calling `callback` for every input.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
