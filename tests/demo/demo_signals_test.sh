#!/usr/bin/env bash
# scripts/demo.sh stops both of its processes (simulator and exporter) when the script alone gets
# SIGTERM (a supervisor, `timeout`) or SIGHUP (terminal closed). It used to stop only the
# simulator. (SIGINT cannot be tested this way: a background job of a script ignores it; Ctrl-C
# reaches the whole process group anyway.)
# usage: demo_signals_test.sh BUILD_DIR   (the exporter and simulator must be built there)
set -euo pipefail
BUILD_DIR=$(readlink -f "$1")
REPO=$(cd "$(dirname "$0")/../.." && pwd)
fail=0
# shellcheck source=../lib/free_port.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/free_port.sh"

run_case() {
  local sig=$1 root port demo exporter sim i
  root=$(mktemp -d)
  port=$(free_port)
  DEMO_NO_BUILD=1 BUILD_DIR="$BUILD_DIR" DEMO_ROOT="$root" DEMO_HOST=127.0.0.1 DEMO_PORT="$port" \
    "$REPO/scripts/demo.sh" --ticks 100000 >"$root/demo.log" 2>&1 &
  demo=$!
  for i in $(seq 100); do
    curl -sf "http://127.0.0.1:$port/metrics" -o /dev/null && break
    sleep 0.1
  done
  exporter=$(pgrep -f -- "--web.listen-address=127.0.0.1:$port" || true)
  sim=$(pgrep -f -- "rdma_fabric_sim --root $root" | head -1 || true)
  if [ -z "$exporter" ] || [ -z "$sim" ]; then
    echo "FAIL ($sig): demo did not start (exporter '$exporter', simulator '$sim')"
    cat "$root/demo.log"
    kill "$demo" $exporter $sim 2>/dev/null || true
    fail=1
    return
  fi
  kill -"$sig" "$demo"
  for i in $(seq 50); do
    kill -0 "$exporter" 2>/dev/null || kill -0 "$sim" 2>/dev/null || break
    sleep 0.1
  done
  wait "$demo" 2>/dev/null || true
  for p in "$exporter" "$sim"; do
    if kill -0 "$p" 2>/dev/null; then
      echo "FAIL ($sig): process $p ($(tr '\0' ' ' </proc/"$p"/cmdline | cut -c1-60)) still runs"
      kill -KILL "$p" 2>/dev/null || true
      fail=1
    fi
  done
  rm -rf "$root"
  [ $fail -eq 0 ] && echo "ok: SIG$sig to demo.sh stopped the exporter ($exporter) and the simulator ($sim)"
}

run_case TERM
run_case HUP
exit $fail
