#!/usr/bin/env bash
# Configures and builds everything (exporter, simulator, tests) into ./build.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} -DBUILD_TESTING=ON \
  -DRDMA_EXPORTER_WERROR=ON >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)"
