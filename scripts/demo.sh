#!/usr/bin/env bash
# Quick start: installs what is missing, builds, and runs rdma_exporter on the built-in demo
# fabric (8 simulated ConnectX HCAs, RoCE and InfiniBand mixed, one SR-IOV VF), so that
#   curl localhost:9879/metrics
# shows live, moving RDMA metrics without RDMA hardware. Ctrl-C stops both processes.
# The RoCE netdevs also get ethtool -S and DCB fixture files (PFC, DSCP map), read by the
# exporter through --path.fixtures; --nccl.ib-tc=106 (DSCP 26 -> priority 3) is the NCCL
# traffic class of the demo cluster.
# Extra arguments go to rdma_fabric_sim, e.g.  ./scripts/demo.sh --scenario flap
#                                             ./scripts/demo.sh --scenario pfc-storm
# DEMO_NO_BUILD=1 runs the binaries already in $BUILD_DIR (default build) without installing or
# building, and DEMO_HOST=127.0.0.1 listens on loopback only (tests/demo uses both).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
if [ "${DEMO_NO_BUILD:-}" != 1 ]; then
  ./scripts/install-deps.sh
  # The demo needs only the exporter and the simulator (the tests need more packages).
  BUILD_TESTING=OFF ./scripts/build.sh rdma_exporter rdma_fabric_sim >/dev/null
fi

DEMO_ROOT=${DEMO_ROOT:-/tmp/rdma-exporter-demo}
# The simulator says "serving" once the whole tree is written; waiting for a directory instead
# would start the exporter on a half-written (or, on a re-run, the previous) tree.
mkdir -p "$DEMO_ROOT"
SIM_LOG=$DEMO_ROOT/simulator.log
: >"$SIM_LOG"
"$BUILD_DIR"/tools/fabric_sim/rdma_fabric_sim --root "$DEMO_ROOT" --interval 1s \
  --kubelet-socket "$DEMO_ROOT/pod-resources/kubelet.sock" "$@" 2> >(tee "$SIM_LOG" >&2) &
SIM_PID=$!
EXPORTER_PID=""
# Both processes stop however the script ends: Ctrl-C (SIGINT to the whole process group), or a
# SIGTERM/SIGHUP sent to this script alone by a supervisor or `timeout`.
stop_all() {
  trap - EXIT INT TERM HUP
  kill $SIM_PID $EXPORTER_PID 2>/dev/null || true
  wait $SIM_PID $EXPORTER_PID 2>/dev/null || true
}
trap 'stop_all' EXIT
trap 'stop_all; exit 143' TERM
trap 'stop_all; exit 130' INT
trap 'stop_all; exit 129' HUP
for _ in $(seq 100); do
  grep -q "serving" "$SIM_LOG" && break
  kill -0 "$SIM_PID" 2>/dev/null || exit 1
  sleep 0.1
done
echo "demo fabric in $DEMO_ROOT/sys and $DEMO_ROOT/fixtures;" \
  "metrics on http://localhost:${DEMO_PORT:-9879}/metrics" >&2
# In the background and waited for: bash runs a trap only between commands, so a foreground
# exporter would keep running after a SIGTERM to this script.
"$BUILD_DIR"/exporter/rdma_exporter --path.sysfs="$DEMO_ROOT/sys" \
  --path.fixtures="$DEMO_ROOT/fixtures" --nccl.ib-tc=106 --poll-interval=5s --collector.lldp --collector.ib_peer \
  --collector.pod_resources.socket="$DEMO_ROOT/pod-resources/kubelet.sock" \
  --web.listen-address="${DEMO_HOST:-}:${DEMO_PORT:-9879}" &
EXPORTER_PID=$!
wait $EXPORTER_PID
