#!/usr/bin/env bash
# The node page (/) in a real browser: Debian's headless Chromium (installed by
# scripts/install-deps.sh --tests) loads it from an exporter reading the fabric simulator, in
# the healthy, link-down, pfc-storm and misconfig scenarios, and we assert what an engineer sees
# in the DOM Chromium rendered (--dump-dom). Also: the page without JavaScript, the in-place
# refresh (no reload), and both over TLS with basic auth. Screenshots are kept as artefacts in
# $ARTIFACT_DIR (default BUILD_DIR/test-artifacts/browser). Everything listens on 127.0.0.1;
# every process started here is stopped by its PID.
# usage: node_page_test.sh BUILD_DIR
set -euo pipefail
BUILD_DIR=$(readlink -f "$1")
ARTIFACTS=${ARTIFACT_DIR:-$BUILD_DIR/test-artifacts}/browser
mkdir -p "$ARTIFACTS"
CHROMIUM=$(command -v chromium || true)
if [ -z "$CHROMIUM" ]; then
  echo "FAIL: chromium is not installed (scripts/install-deps.sh --tests installs it)"
  exit 1
fi
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  # KEEP_TMP=1 keeps the dumped DOMs and logs for a look after a failure.
  if [ "${KEEP_TMP:-}" = 1 ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
fail=0

# shellcheck source=../lib/free_port.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/free_port.sh"

# browser URL OUT [chromium flags...]: the DOM after scripts ran (and virtual time passed).
browser() {
  local url=$1 out=$2
  shift 2
  timeout 90 "$CHROMIUM" --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --no-first-run --user-data-dir="$tmp/profile-$RANDOM" --window-size=1500,1000 "$@" \
    --dump-dom "$url" >"$out" 2>"$out.log" || {
    echo "FAIL: chromium failed on $url:"
    tail -5 "$out.log"
    fail=1
  }
}

screenshot() {
  local url=$1 png=$2
  shift 2
  timeout 90 "$CHROMIUM" --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --no-first-run --user-data-dir="$tmp/profile-$RANDOM" --window-size=1500,1000 \
    --hide-scrollbars "$@" --screenshot="$png" "$url" >/dev/null 2>&1 || true
  if [ ! -s "$png" ]; then
    echo "FAIL: no screenshot $png"
    fail=1
  fi
}

expect() {  # expect NAME FILE PATTERN: the DOM has PATTERN (grep -E)
  if grep -Eq "$3" "$2"; then
    echo "ok: $1"
  else
    echo "FAIL: $1: /$3/ not in $2"
    fail=1
  fi
}
expect_not() {
  if grep -Eq "$3" "$2"; then
    echo "FAIL: $1: /$3/ in $2"
    fail=1
  else
    echo "ok: $1"
  fi
}

# The row of one port in a dumped DOM (one line: Chromium writes each <tr> on its own line, as
# the server does).
row() { grep -F "data-port=\"$2\"" "$1" || true; }

# start SCENARIO [exporter flags...]: a simulator and an exporter on it; sets $port and $root.
start() {
  local scenario=$1 sim exporter i
  shift
  root=$tmp/$scenario
  mkdir -p "$root"
  "$BUILD_DIR"/tools/fabric_sim/rdma_fabric_sim --root "$root" --interval 500ms \
    --scenario "$scenario" 2>"$root/sim.log" &
  sim=$!
  pids+=("$sim")
  for i in $(seq 100); do
    grep -q serving "$root/sim.log" && break
    sleep 0.1
  done
  port=$(free_port)
  "$BUILD_DIR"/exporter/rdma_exporter --path.sysfs="$root/sys" --path.fixtures="$root/fixtures" \
    --nccl.ib-tc=106 --poll-interval=1s --web.listen-address="127.0.0.1:$port" "$@" \
    2>"$root/exporter.log" &
  exporter=$!
  pids+=("$exporter")
  scheme=http
  curl_auth=()
  for arg in "$@"; do
    case $arg in --web.config.file=*) scheme=https curl_auth=(-k -u "engineer:night-shift") ;; esac
  done
  # Three polls: the scenario's fault is in (link-down takes 3 ticks) and rates exist.
  for i in $(seq 100); do
    seq=$(curl -sf "${curl_auth[@]}" "$scheme://127.0.0.1:$port/api/v1/status" |
      sed -n 's/.*"sequence":\([0-9]*\),.*/\1/p' || true)
    [ -n "$seq" ] && [ "$seq" -ge 3 ] && break
    sleep 0.2
  done
  if [ -z "$seq" ] || [ "$seq" -lt 3 ]; then
    echo "FAIL: $scenario: the exporter did not reach its third poll"
    tail -5 "$root/exporter.log" "$root/sim.log"
    fail=1
  fi
}

stop() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
}

# ---- healthy: green, every port ACTIVE, the checks and the collectors listed -----------------
start healthy
url=http://127.0.0.1:$port/
browser "$url" "$tmp/healthy.html"
expect "healthy: the node is green" "$tmp/healthy.html" '<main id="status"[^>]*data-level="ok"'
expect "healthy: the headline says NCCL can run" "$tmp/healthy.html" 'healthy: ready for NCCL traffic'
expect "healthy: a RoCE port row, ACTIVE" "$tmp/healthy.html" 'data-port="mlx5_0/1".*ACTIVE<br><small>LinkUp'
expect "healthy: its traffic as a share of line rate" "$tmp/healthy.html" 'data-port="mlx5_0/1".*<td>[0-9.]+% / [0-9.]+%</td>'
expect "healthy: its RoCE checks pass" "$tmp/healthy.html" 'data-port="mlx5_0/1".*7/7 pass'
expect "healthy: the doctor's port_active check" "$tmp/healthy.html" 'data-check="port_active".*PASS'
expect "healthy: the collectors table" "$tmp/healthy.html" '<td>ethtool</td><td class="ok">ok</td>'
expect_not "healthy: no red or amber port" "$tmp/healthy.html" '<tr class="(critical|warning)"'
# JSON for scripts: valid, and the same level.
curl -sf "http://127.0.0.1:$port/api/v1/status" >"$tmp/healthy.json"
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["level"]=="ok" and len(d["ports"])>5 else 1)' "$tmp/healthy.json"; then
  echo "ok: healthy: /api/v1/status is JSON with the same level"
else
  echo "FAIL: healthy: /api/v1/status"
  fail=1
fi
# Without JavaScript the server-rendered page is all there is: the page as served, opened from
# a file so that its script (/node-page.js) cannot load, shows every row and never refreshes.
# (New headless Chromium runs scripts despite --disable-javascript, and --dump-dom needs them.)
curl -sf "$url" >"$tmp/served.html"
browser "file://$tmp/served.html" "$tmp/nojs.html" --virtual-time-budget=3000
for p in mlx5_0/1 mlx5_1/1 mlx5_bond_0/1 rocep51s0f0/1; do
  expect "no JavaScript: row $p" "$tmp/nojs.html" "data-port=\"$p\".*(ACTIVE|DOWN)"
done
expect_not "no JavaScript: nothing refreshed it" "$tmp/nojs.html" 'data-refreshes='
screenshot "file://$tmp/served.html" "$ARTIFACTS/node-page-no-javascript.png"
# The script swaps <main> in place every poll interval (1 s); virtual time runs 4.5 s. A reload
# would drop data-refreshes, which only the script sets.
browser "$url" "$tmp/refresh.html" --virtual-time-budget=4500
expect "auto-refresh: <main> replaced in place" "$tmp/refresh.html" 'data-refreshes="[2-9]"'
expect_not "auto-refresh: no failed refresh" "$tmp/refresh.html" 'refresh failed'
screenshot "$url" "$ARTIFACTS/node-page-healthy.png"
# The page's cost per request over one keep-alive connection: the status is built once per
# poll (the first request after a poll pays it), then served. Printed, not asserted.
args=()
for _ in $(seq 100); do args+=(-o /dev/null "$url"); done
curl -s -w '%{time_total}\n' "${args[@]}" | sort -n |
  awk -v bytes="$(curl -sf "$url" | wc -c)" '{t[NR] = $1 * 1e6} END {
    printf "figure: node page %d bytes; per request over keep-alive: median %.0f us, max %.0f us (a request after a poll builds the status)\n", bytes, t[int(NR / 2)], t[NR] }'
stop

# ---- link-down: the InfiniBand port mlx5_1/1 goes DOWN at tick 3: red --------------------
start link-down
browser "http://127.0.0.1:$port/" "$tmp/down.html"
expect "link-down: the node is red" "$tmp/down.html" '<main id="status"[^>]*data-level="critical"'
expect "link-down: the headline says NCCL fails" "$tmp/down.html" 'failing: NCCL jobs'
row "$tmp/down.html" mlx5_1/1 >"$tmp/down.row"
expect "link-down: its row is red" "$tmp/down.row" '<tr class="critical"'
expect "link-down: DOWN and Disabled in red" "$tmp/down.row" '<td class="critical">DOWN<br><small>Disabled'
expect "link-down: the doctor's port_active FAILs" "$tmp/down.html" 'data-check="port_active".*FAIL.*mlx5_1/1'
row "$tmp/down.html" mlx5_3/1 >"$tmp/up.row"
expect "link-down: the other ports stay green" "$tmp/up.row" '<tr class="ok"'
screenshot "http://127.0.0.1:$port/" "$ARTIFACTS/node-page-link-down.png"
stop

# ---- pfc-storm: mlx5_0 sends pause 50-80 % of the time: amber or red -----------------------
start pfc-storm
browser "http://127.0.0.1:$port/" "$tmp/storm.html"
row "$tmp/storm.html" mlx5_0/1 >"$tmp/storm.row"
expect "pfc-storm: the port is amber or red" "$tmp/storm.row" '<tr class="(warning|critical)"'
expect "pfc-storm: it says the NIC sends pause" "$tmp/storm.row" 'sends PFC pause [0-9]+% of the time'
expect "pfc-storm: the tx pause share is shown" "$tmp/storm.row" '<td>[0-9.]+% / [0-9.]+%<br><small>NCCL priority 3'
screenshot "http://127.0.0.1:$port/" "$ARTIFACTS/node-page-pfc-storm.png"
stop

# ---- misconfig: PFC on the wrong priority, trust PCP, MTU 1500 on mlx5_0 -------------------
start misconfig
browser "http://127.0.0.1:$port/" "$tmp/misconfig.html"
row "$tmp/misconfig.html" mlx5_0/1 >"$tmp/misconfig.row"
expect "misconfig: the port is amber" "$tmp/misconfig.row" '<tr class="warning"'
expect "misconfig: the failing RoCE check is named" "$tmp/misconfig.row" '✗ (mtu_at_least_4200|trust_dscp)'
expect "misconfig: the doctor's pfc or trust check FAILs" "$tmp/misconfig.html" 'data-check="(pfc|trust_dscp|netdev_mtu)"><td>[a-z_]+</td><td class="critical">FAIL'
screenshot "http://127.0.0.1:$port/" "$ARTIFACTS/node-page-misconfig.png"
stop

# ---- TLS and basic auth: the page, its script and its refresh all authenticated -------------
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$tmp/key.pem" \
  -out "$tmp/cert.pem" -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
  >/dev/null 2>&1
hash=$(python3 -W ignore -c 'import crypt; print(crypt.crypt("night-shift", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))')
cat >"$tmp/web.yml" <<EOF
tls_server_config:
  cert_file: $tmp/cert.pem
  key_file: $tmp/key.pem
basic_auth_users:
  engineer: '$hash'
EOF
start healthy --web.config.file="$tmp/web.yml"
browser "https://127.0.0.1:$port/" "$tmp/noauth.html" --ignore-certificate-errors
expect_not "tls+auth: no page without credentials" "$tmp/noauth.html" 'data-port='
browser "https://engineer:night-shift@127.0.0.1:$port/" "$tmp/tls.html" \
  --ignore-certificate-errors --virtual-time-budget=3500
expect "tls+auth: the page with credentials" "$tmp/tls.html" 'data-port="mlx5_0/1"'
expect "tls+auth: the refresh is authenticated too" "$tmp/tls.html" 'data-refreshes="[1-9]"'
expect_not "tls+auth: no failed refresh" "$tmp/tls.html" 'refresh failed'
stop

echo "screenshots in $ARTIFACTS"
exit $fail
