#!/usr/bin/env bash
# Runs the whole test suite: installs what is missing, builds with -Werror, checks formatting,
# then runs every test (unit, binary/HTTP/promtool) through CTest, then the sanitizer tier.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh --tests
./scripts/build.sh
./scripts/check-format.sh
cd build
ctest --output-on-failure -j"$(nproc)" --timeout 300
# Sanitizer tier (clang): the fuzz targets and the unit, binary and hardening tests under
# ASan+UBSan (one tree), the poller, binary and HTTP concurrency tests under TSan.
cd ..
./scripts/sanitize.sh --all
