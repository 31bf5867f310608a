#!/usr/bin/env bash
# Fleet scale with real Prometheus and Alertmanager: N simulated nodes x R rails, each its own
# scrape target, with the shipped rules; a leaf-switch failure must give one page. Prints the
# figures (series, rule-group evaluation time, every dashboard query's latency, the pages) and
# writes them as JSON to --out. Not part of the test suite at full size; CTest fleet.small runs
# it with --small --check. How it works and why: bench/fleet/fleet.py; figures: docs/testing.md.
#
#   bench/fleet/run.sh                              # 256 nodes x 8 rails, about 15 minutes
#   bench/fleet/run.sh --nodes 64 --duration 2m     # other flags: bench/fleet/run.sh --help
#   bench/fleet/run.sh --small --check              # what CTest runs (16 x 8, about 3 minutes)
#
# Needs python3, Debian's prometheus and prometheus-alertmanager (scripts/install-deps.sh
# --tests installs them) and the built rdma_exporter and rdma_fabric_sim (default: build/; or
# --exporter, --sim). Every process it starts is stopped by PID when it ends, however it ends.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
args=()
for a in "$@"; do
  if [ "$a" = --small ]; then
    # CI size: short intervals so the shipped 2m `for` of the page dominates the run.
    args+=(--nodes 16 --rails 8 --fail-nodes 4 --scrape-interval 5s --poll-interval 2s
      --link-layer mixed --duration 10s --group-wait 5s --group-interval 10s --settle 15s
      --page-timeout 240s)
  else
    args+=("$a")
  fi
done
exec python3 "$here/fleet.py" "${args[@]}"
