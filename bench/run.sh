#!/usr/bin/env bash
# Benchmark: rdma_exporter side by side with Debian's prometheus-node-exporter (infiniband
# collector) on simulated mlx5 trees of 1, 8, 64 and 256 ports, then the micro-benchmarks.
# Prints a Markdown table and the targets of issue 7. Not part of the test suite.
#
#   bench/run.sh                      # everything (about 15 minutes on 2 cores)
#   bench/run.sh --sizes 8 --rounds 1 # one size, quicker; other flags: bench/compare.py --help
#   MICRO=0 bench/run.sh              # without the Google Benchmark micro-benchmarks
#
# Installs what it needs with apt-get (wrk, strace, prometheus-node-exporter, python3,
# libbenchmark-dev) and builds into $BUILD_DIR (default build-bench, tests off).
# Run as root: strace attaches to the running exporters (ptrace), and both exporters get the
# descriptor limit of a systemd service.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-bench}
MICRO=${MICRO:-1}

tools=(wrk strace prometheus-node-exporter python3)
packages=(wrk strace prometheus-node-exporter python3)
missing=()
for i in "${!tools[@]}"; do
  command -v "${tools[$i]}" >/dev/null || missing+=("${packages[$i]}")
done
if [ "$MICRO" = 1 ] && ! dpkg-query -W -f='${Status}' libbenchmark-dev 2>/dev/null |
  grep -q "install ok installed"; then
  missing+=(libbenchmark-dev)
fi
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "bench: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
./scripts/install-deps.sh

targets=(rdma_exporter rdma_fabric_sim)
if [ "$MICRO" = 1 ]; then targets+=(rdma_micro_bench); fi
BUILD_DIR="$BUILD_DIR" BUILD_TESTING=OFF ./scripts/build.sh "${targets[@]}" \
  >/dev/null

python3 bench/compare.py --exporter "$BUILD_DIR/exporter/rdma_exporter" \
  --sim "$BUILD_DIR/tools/fabric_sim/rdma_fabric_sim" "$@"

if [ "$MICRO" = 1 ]; then
  echo
  "$BUILD_DIR/bench/rdma_micro_bench" --benchmark_min_time=0.2
fi
