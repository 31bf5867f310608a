#!/usr/bin/env bash
# Runs the whole test suite: installs what is missing, builds with -Werror, checks formatting,
# then runs every test (unit, binary/HTTP/promtool) through CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh --tests
./scripts/build.sh
./scripts/check-format.sh
cd build
ctest --output-on-failure -j"$(nproc)" --timeout 300
# Fuzzing tier (clang, ASan+UBSan): a separate build of only the fuzz targets.
cd ..
./scripts/sanitize.sh
