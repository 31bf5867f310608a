#!/usr/bin/env bash
# Fuzzing tier, run by scripts/test.sh after the main test suite: build-sanitize (clang,
# ASan+UBSan with libFuzzer coverage) builds only the fuzz targets (fuzz/) and runs each for
# RDMA_FUZZ_SECONDS (default 5) from its committed corpus (fuzz.* in CTest).
# `sanitize.sh --all` also builds and runs the unit, binary and hardening tests under
# ASan+UBSan and the poller/HTTP concurrency tests under TSan (build-tsan); not yet in CI, see
# README "Security".
set -euo pipefail
cd "$(dirname "$0")/.."
SAN_DIR=${SAN_BUILD_DIR:-build-sanitize}
TSAN_DIR=${TSAN_BUILD_DIR:-build-tsan}
jobs=$(nproc)
supp=$PWD/tests/hardening/sanitizers
all=false
if [ "${1:-}" = "--all" ]; then all=true; fi

asan="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
cmake -S . -B "$SAN_DIR" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=None \
  -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only $asan -fsanitize=fuzzer-no-link" \
  -DCMAKE_EXE_LINKER_FLAGS="$asan" -DCMAKE_SHARED_LINKER_FLAGS="$asan" \
  -DRDMA_FUZZ_SECONDS="${RDMA_FUZZ_SECONDS:-5}" -DRDMA_EXPORTER_FUZZ=ON >/dev/null
targets=(fuzz_sysfs_parse fuzz_ethtool fuzz_netlink fuzz_web_config)
if $all; then targets+=(unit_tests binary_tests hardening_tests); fi
cmake --build "$SAN_DIR" -j"$jobs" "${targets[@]/#/--target=}"

export ASAN_OPTIONS="detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$supp/tsan.supp"
(cd "$SAN_DIR" && ctest --output-on-failure -j"$jobs" --timeout 300 -L fuzz)
if ! $all; then exit 0; fi

(cd "$SAN_DIR" && ctest --output-on-failure -j"$jobs" --timeout 600 -L 'unit|binary' &&
  ctest --output-on-failure -j"$jobs" --timeout 600 -R '^(Web|WebConfig|BasicAuth)\.')
tsan="-fsanitize=thread"
cmake -S . -B "$TSAN_DIR" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=None \
  -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only $tsan" -DCMAKE_EXE_LINKER_FLAGS="$tsan" \
  -DCMAKE_SHARED_LINKER_FLAGS="$tsan" >/dev/null
cmake --build "$TSAN_DIR" -j"$jobs" --target unit_tests hardening_tests
(cd "$TSAN_DIR" && ctest --output-on-failure -j"$jobs" --timeout 600 -R '^(Poller|Concurrency)\.')
