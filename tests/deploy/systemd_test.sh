#!/usr/bin/env bash
# deploy/systemd/rdma_exporter.service: `systemd-analyze verify` prints nothing (an unknown or
# misspelt directive is only a warning there, so any output fails), the offline security review
# rates it at most 2.0 ("OK"), the hardening the README promises is present, and --nccl.ib-tc
# comes from the one NCCL_IB_TC default with the verbs collector left on.
# Usage: systemd_test.sh SOURCE_DIR RDMA_EXPORTER_BINARY WORK_DIR
# shellcheck disable=SC2016  # ${NCCL_IB_TC} and $ARGS in quotes are systemd's, not the shell's
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
# The NCCL-priority and RoCE checks exist only with --nccl.ib-tc: it comes from one default,
# Environment=NCCL_IB_TC (0..255, overridable in /etc/default/rdma_exporter), and the verbs
# collector (active-MTU check) is not switched off.
grep -qxF 'ExecStart=/usr/bin/rdma_exporter --nccl.ib-tc=${NCCL_IB_TC} $ARGS' "$UNIT_SRC" ||
  { echo 'FAIL: ExecStart must pass --nccl.ib-tc=${NCCL_IB_TC} before $ARGS'; fail=1; }
tc=$(sed -n 's/^Environment=NCCL_IB_TC=//p' "$UNIT_SRC")
if ! [[ $tc =~ ^[0-9]{1,3}$ ]] || [ "$tc" -gt 255 ]; then
  echo "FAIL: want one Environment=NCCL_IB_TC=<0..255>, found '${tc//$'\n'/ }'"
  fail=1
fi
if grep -qE -- '--no-collector\.verbs|--collector\.verbs=false' "$UNIT_SRC"; then
  echo "FAIL: the unit disables the verbs collector"
  fail=1
fi
# The flags in ExecStart are the exporter's: its command line as systemd expands it with the
# unit's defaults (an empty ARGS), parsed by the binary (--help exits after parsing).
read -ra cmd <<<"$(sed -n 's/^ExecStart=//p' "$UNIT")"
argv=()
for w in "${cmd[@]}"; do
  [ "$w" = '$ARGS' ] && continue
  argv+=("${w//'${NCCL_IB_TC}'/$tc}")
done
echo "ExecStart with the defaults: ${argv[*]}"
"${argv[@]}" --help >/dev/null || { echo "FAIL: ${argv[*]} --help"; fail=1; }
if [ "$fail" -ne 0 ]; then
  echo "systemd unit: FAILED"
  exit 1
fi
echo "systemd unit: verified"
