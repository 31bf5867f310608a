#!/usr/bin/env bash
# deploy/systemd/rdma_exporter.service: `systemd-analyze verify` prints nothing (an unknown or
# misspelt directive is only a warning there, so any output fails), the offline security review
# rates it at most 2.0 ("OK"), and the hardening the README promises is present.
# Usage: systemd_test.sh SOURCE_DIR RDMA_EXPORTER_BINARY WORK_DIR
set -euo pipefail
UNIT_SRC=$1/deploy/systemd/rdma_exporter.service
BIN=$2
WORK=$3
command -v systemd-analyze >/dev/null || { echo "FAIL: systemd-analyze not found"; exit 1; }
mkdir -p "$WORK"
# verify also checks that ExecStart's program exists: point it at the built binary.
UNIT=$WORK/rdma_exporter.service
sed "s|^ExecStart=/usr/bin/rdma_exporter|ExecStart=$BIN|" "$UNIT_SRC" >"$UNIT"
fail=0
out=$(cd "$WORK" && systemd-analyze verify "$UNIT" 2>&1) || fail=1
if [ -n "$out" ]; then
  echo "$out"
  fail=1
fi
# Exposure 0.0-10.0; --threshold counts in tenths.
systemd-analyze security --offline=yes --threshold=20 "$UNIT" >"$WORK/security.txt" 2>&1 || {
  cat "$WORK/security.txt"
  echo "FAIL: exposure above 2.0"
  fail=1
}
grep 'Overall exposure' "$WORK/security.txt" || true
for d in DynamicUser=yes NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes \
  ProtectKernelTunables=yes ProtectKernelModules=yes ProtectKernelLogs=yes \
  ProtectControlGroups=yes CapabilityBoundingSet= MemoryDenyWriteExecute=yes \
  'RestrictAddressFamilies=AF_UNIX AF_INET AF_NETLINK' SystemCallFilter=@system-service; do
  grep -qxF "$d" "$UNIT_SRC" || { echo "FAIL: missing $d"; fail=1; }
done
# The flags in ExecStart are the exporter's (an empty ARGS, as in the unit).
"$BIN" --help >/dev/null || { echo "FAIL: $BIN --help"; fail=1; }
if [ "$fail" -ne 0 ]; then
  echo "systemd unit: FAILED"
  exit 1
fi
echo "systemd unit: verified"
