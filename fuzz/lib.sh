# Shared by fuzz/run and fuzz/ci (sourced, not run): where things are, how the targets are built and started.
# shellcheck shell=bash

FUZZ_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ARTIFACTS="${KEYWARD_FUZZ_ARTIFACTS:-$FUZZ_DIR/artifacts}"
# New corpus entries a run finds land here, never in the committed seeds (fuzz/corpus).
SCRATCH="${KEYWARD_FUZZ_SCRATCH:-$FUZZ_DIR/.scratch}"
BUILD_PATH="$FUZZ_DIR/.build"
# Leak checks as libFuzzer does them per input, with the one known false positive suppressed (lsan.supp).
export LSAN_OPTIONS="suppressions=$FUZZ_DIR/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export ASAN_OPTIONS="detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
# A failed expectation is a Swift trap; libFuzzer and ASan report it with its stack. Swift's own backtracer would
# read memory behind ASan's back and add a second, confusing report.
export SWIFT_BACKTRACE="${SWIFT_BACKTRACE:-enable=no}"
# Per input: 10 s is a hang, 2 GiB a memory blow-up; both are failures like a crash.
LIBFUZZER_LIMITS=(-timeout=10 -rss_limit_mb=2048 -detect_leaks=1)

# The targets: every folder of Sources/ with a main.swift (the support modules have none).
fuzz_targets() {
    local dir
    for dir in "$FUZZ_DIR"/Sources/*/; do
        [[ -f "$dir/main.swift" ]] && basename "$dir"
    done
}

# What a target checks: the leading comment of its fuzzer file, as one line.
fuzz_description() {
    local file
    file="$(find "$FUZZ_DIR/Sources/$1" -name '*Fuzzer.swift' | head -n 1)"
    awk '/^\/\// { sub(/^\/\/ */, ""); printf "%s%s", sep, $0; sep = " "; next } { exit }' "$file"
    echo
}

is_fuzz_target() {
    [[ -n "$1" && -f "$FUZZ_DIR/Sources/$1/main.swift" ]]
}

# fuzz_build [PRODUCT]: release build, all targets or one (Package.swift turns the sanitizers on). The gold linker's warning about an
# ASan symbol it cannot export is noise on every link and is filtered out.
fuzz_build() {
    local product=()
    [[ -n "${1:-}" ]] && product=(--product "$1")
    swift build -c release --package-path "$FUZZ_DIR" --build-path "$BUILD_PATH" "${product[@]}" 2>&1 \
        | { grep -v "Cannot export local symbol '__asan_extra_spill_area'" || true; }
    return "${PIPESTATUS[0]}"
}

fuzz_bin_path() {
    swift build -c release --package-path "$FUZZ_DIR" --build-path "$BUILD_PATH" --show-bin-path
}
