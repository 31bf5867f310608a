#!/usr/bin/env bash
# run_fuzz.sh FUZZER CORPUS_DIR SECONDS: replays every committed corpus file (regressions), then
# fuzzes for SECONDS from a scratch copy of the corpus. A crash, leak, sanitizer report or
# timeout fails the test; the reproducer is kept in $RDMA_FUZZ_ARTIFACTS (default /tmp) and
# belongs in the corpus once fixed.
set -euo pipefail
fuzzer=$1 corpus=$2 seconds=$3
artifacts=${RDMA_FUZZ_ARTIFACTS:-/tmp}/$(basename "$fuzzer")-artifacts
mkdir -p "$artifacts"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp -r "$corpus"/. "$scratch"/
# Replay: each committed input once.
"$fuzzer" -runs=0 -artifact_prefix="$artifacts/" "$corpus" >"$scratch/replay.log" 2>&1 || { cat "$scratch/replay.log"; exit 1; }
# Fuzz: one job, bounded input size and time per input.
"$fuzzer" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$artifacts/" -print_final_stats=1 "$scratch" >"$scratch/fuzz.log" 2>&1 ||
  { tail -60 "$scratch/fuzz.log"; exit 1; }
grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb)" "$scratch/fuzz.log" || true
