#!/usr/bin/env bash
# The Debian package: `cpack -G DEB` from the build directory, lintian without errors, then
# (root) dpkg -i, the unit verified at its installed path, /usr/bin/rdma_exporter started on a
# fixture tree and scraped once on 127.0.0.1, and dpkg -r removing every file again.
# Usage: deb_test.sh SOURCE_DIR BUILD_DIR WORK_DIR
# Needs root for dpkg: without it the test fails when CI is set and is skipped (77) otherwise.
set -euo pipefail
SRC=$(cd "$1" && pwd)
BUILD=$2
WORK=$3
if [ "$(id -u)" -ne 0 ]; then
  echo "deb test needs root (dpkg -i)"
  [ -n "${CI:-}" ] && exit 1
  exit 77
fi
for tool in lintian dpkg curl systemd-analyze; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool not found"; exit 1; }
done
if dpkg-query -W -f='${Status}' rdma-exporter 2>/dev/null | grep -q "install ok installed"; then
  echo "FAIL: rdma-exporter is already installed on this machine; the test will not replace it"
  exit 1
fi
rm -rf "$WORK"
mkdir -p "$WORK"

"${CPACK:-cpack}" -G DEB --config "$BUILD/CPackConfig.cmake" -B "$WORK" >"$WORK/cpack.log" ||
  { cat "$WORK/cpack.log"; echo "FAIL: cpack"; exit 1; }
DEB=$(ls "$WORK"/rdma-exporter_*.deb)
dpkg-deb -I "$DEB" | sed -n '/Depends:/p'
# lintian: warnings are shown, errors fail.
lintian --fail-on error "$DEB" 2>/dev/null || { echo "FAIL: lintian errors"; exit 1; }

EXP_PID=""
cleanup() {
  if [ -n "$EXP_PID" ]; then
    kill "$EXP_PID" 2>/dev/null || true
    wait "$EXP_PID" 2>/dev/null || true
  fi
  dpkg -r rdma-exporter >/dev/null 2>&1 || true
}
trap cleanup EXIT
dpkg -i "$DEB" >"$WORK/dpkg.log" 2>&1 || { cat "$WORK/dpkg.log"; echo "FAIL: dpkg -i"; exit 1; }
fail=0
for f in /usr/bin/rdma_exporter /usr/lib/systemd/system/rdma_exporter.service \
  /usr/share/doc/rdma-exporter/copyright /usr/share/doc/rdma-exporter/changelog.gz; do
  [ -e "$f" ] || { echo "FAIL: $f not installed"; fail=1; }
done
for f in "$SRC"/dashboards/out/*.rules.yaml; do
  [ -e "$f" ] || continue
  cmp -s "$f" "/usr/share/rdma-exporter/rules/$(basename "$f")" ||
    { echo "FAIL: $(basename "$f") not installed"; fail=1; }
done
# The kubelet module (dlopen()ed by path beside the binary) and every library it links.
MODULE=/usr/lib/rdma_exporter/librdma_exporter_kubelet.so
if [ -e "$MODULE" ]; then
  # grep reads a here-string, not a pipe: under pipefail, grep -q leaving early fails the
  # writer with SIGPIPE and the pipeline with it.
  if grep -q "not found" <<<"$(ldd "$MODULE")"; then
    ldd "$MODULE"
    echo "FAIL: $MODULE has unresolved libraries"
    fail=1
  fi
  grep -q 'Depends:.*libgrpc++' <<<"$(dpkg-deb -I "$DEB")" ||
    { echo "FAIL: the package does not depend on libgrpc++ (the kubelet module links it)"; fail=1; }
else
  echo "FAIL: $MODULE not installed"
  fail=1
fi
out=$(systemd-analyze verify /usr/lib/systemd/system/rdma_exporter.service 2>&1) || fail=1
[ -z "$out" ] || { echo "$out"; fail=1; }
/usr/bin/rdma_exporter --version

# Start the installed binary on the InfiniBand fixture tree; a taken port makes it exit 1
# at once, then another port is tried.
for attempt in $(seq 10); do
  PORT=$((20000 + RANDOM % 40000))
  /usr/bin/rdma_exporter --path.sysfs="$SRC/tests/fixtures/mlx5-ib" \
    --web.listen-address="127.0.0.1:$PORT" --poll-interval=1s 2>"$WORK/exporter.log" &
  EXP_PID=$!
  ready=0
  for _ in $(seq 50); do
    if curl -sf "http://127.0.0.1:$PORT/-/ready" >/dev/null; then ready=1; break; fi
    kill -0 "$EXP_PID" 2>/dev/null || break
    sleep 0.1
  done
  [ "$ready" -eq 1 ] && break
  wait "$EXP_PID" 2>/dev/null || true
  EXP_PID=""
done
if [ -z "$EXP_PID" ]; then
  cat "$WORK/exporter.log"
  echo "FAIL: the installed exporter did not become ready"
  exit 1
fi
curl -sf "http://127.0.0.1:$PORT/metrics" >"$WORK/metrics.txt"
for s in 'rdma_exporter_build_info{' 'rdma_device_info{device="mlx5_0"' 'rdma_port_up{device="mlx5_0",port="1"}'; do
  grep -qF "$s" "$WORK/metrics.txt" || { echo "FAIL: no $s in the scrape"; fail=1; }
done
echo "scraped $(grep -vc '^#' "$WORK/metrics.txt") samples from /usr/bin/rdma_exporter"
kill "$EXP_PID"
wait "$EXP_PID" || { echo "FAIL: exporter exit status $? on SIGTERM"; fail=1; }
EXP_PID=""

dpkg -r rdma-exporter >"$WORK/dpkg-r.log" 2>&1 || { cat "$WORK/dpkg-r.log"; fail=1; }
for f in /usr/bin/rdma_exporter /usr/lib/systemd/system/rdma_exporter.service; do
  [ ! -e "$f" ] || { echo "FAIL: $f left after dpkg -r"; fail=1; }
done
if [ "$fail" -ne 0 ]; then
  echo "deb package: FAILED"
  exit 1
fi
echo "deb package: built, lintian clean of errors, installed, ran, removed"
