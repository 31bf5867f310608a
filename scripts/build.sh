#!/usr/bin/env bash
# Configures and builds into ./build: everything (exporter, simulator, tests), or only the named
# targets (build.sh rdma_exporter rdma_fabric_sim).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} \
  -DBUILD_TESTING=${BUILD_TESTING:-ON} -DRDMA_EXPORTER_WERROR=ON >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$BUILD_DIR" -j"$(nproc)" "${targets[@]}"
