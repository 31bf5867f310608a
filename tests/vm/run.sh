#!/usr/bin/env bash
# VM tier ("real kernel"): boots Debian's own kernel under qemu (TCG; KVM on request),
# creates Soft-RoCE devices rxe0 (eth0) and rxe1 (eth1), runs the built rdma_exporter inside the
# guest and asserts against the live kernel (tests/vm/guest/checks.sh). Then runs promtool on the
# /metrics captures the guest wrote out.
#
# Usage: tests/vm/run.sh [path/to/rdma_exporter]     (default: build/exporter/rdma_exporter)
# Env:   RDMA_VM_CACHE   initramfs cache dir (default /var/tmp/rdma_exporter-vm)
#        RDMA_VM_OUT     keep the guest's output here (default: a temp dir, removed on success)
#        KVER            kernel version (default: newest /lib/modules/* with a /boot/vmlinuz-*)
#        QEMU_TIMEOUT    seconds (default 420); PROMTOOL (default: promtool in PATH)
#        RDMA_VM_ACCEL   tcg (default) or kvm
#        CI=true         a missing prerequisite fails instead of skipping
# Exit:  0 all passed, 1 a failure, 77 skipped (prerequisite missing and CI not set).
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
EXPORTER=${1:-$REPO/build/exporter/rdma_exporter}
CACHE=${RDMA_VM_CACHE:-/var/tmp/rdma_exporter-vm}
QEMU_TIMEOUT=${QEMU_TIMEOUT:-420}
PROMTOOL=${PROMTOOL:-promtool}
# Host packages the image is built from (scripts/install-deps.sh installs them).
VM_PACKAGES="qemu-system-x86 linux-image-amd64 busybox-static rdma-core ibverbs-utils
  ibverbs-providers rdmacm-utils perftest iproute2 infiniband-diags kmod cpio"

T0=$EPOCHREALTIME
elapsed() { awk -v a="$EPOCHREALTIME" -v b="${1:-$T0}" 'BEGIN{printf "%.1f", a-b}'; }

cannot_run() {
  echo "vm.rxe: cannot run: $*" >&2
  if [ "${CI:-}" = true ]; then
    echo "vm.rxe: CI=true, so this is a failure" >&2
    echo "0 passed, 1 failed"
    exit 1
  fi
  echo "vm.rxe: SKIPPED (install with scripts/install-deps.sh; set CI=true to make this fatal)" >&2
  exit 77
}

# ------------------------------------------------------------------ prerequisites ----
[ "$(id -u)" = 0 ] || cannot_run "not root (the initramfs build reads /lib/modules and /boot as root-only files)"
command -v qemu-system-x86_64 >/dev/null || cannot_run "qemu-system-x86_64 not found (package qemu-system-x86)"
if [ -z "${KVER:-}" ]; then
  for k in $(ls /lib/modules 2>/dev/null | sort -rV); do
    [ -r "/boot/vmlinuz-$k" ] && { KVER=$k; break; }
  done
fi
[ -n "${KVER:-}" ] && [ -r "/boot/vmlinuz-$KVER" ] && [ -d "/lib/modules/$KVER" ] ||
  cannot_run "no kernel image: /boot/vmlinuz-<kver> with /lib/modules/<kver> (package linux-image-amd64)"
KERNEL=/boot/vmlinuz-$KVER
[ -x "$EXPORTER" ] || cannot_run "exporter binary $EXPORTER not found (build it first)"
for t in busybox:busybox-static cpio:cpio depmod:kmod rdma:iproute2 ibv_devinfo:ibverbs-utils \
         ibv_rc_pingpong:ibverbs-utils ib_write_bw:perftest; do
  command -v "${t%%:*}" >/dev/null || cannot_run "${t%%:*} not found (package ${t#*:})"
done
[ -r /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so ] ||
  cannot_run "rxe verbs provider missing (package ibverbs-providers)"
file -L /bin/busybox 2>/dev/null | grep -q 'statically linked' ||
  { ldd /bin/busybox 2>&1 | grep -q 'not a dynamic' || cannot_run "/bin/busybox is not the static one (package busybox-static)"; }

# --------------------------------------------------------------------- initramfs ----
# Cache key: package versions, kernel, the harness scripts, the exporter and its libraries.
KEY=$( {
  dpkg-query -W -f='${Package} ${Version}\n' $VM_PACKAGES 2>/dev/null
  echo "$KVER"
  cat "$HERE/build-initramfs.sh" "$HERE/guest/init" "$HERE/guest/checks.sh"
  cat "$EXPORTER"
  ldd "$EXPORTER" | grep -oE '/[^ ]+' | xargs cat
} | sha256sum | cut -c1-16)
mkdir -p "$CACHE"
INITRD=$CACHE/initrd-$KEY.gz
exec 9>"$CACHE/.lock"; flock 9
if [ -s "$INITRD" ]; then
  echo "vm.rxe: initramfs cached: $INITRD"
  T_BUILD=cached
else
  tb=$EPOCHREALTIME
  "$HERE/build-initramfs.sh" "$EXPORTER" "$KVER" "$INITRD" || { flock -u 9; echo "vm.rxe: initramfs build failed"; echo "0 passed, 1 failed"; exit 1; }
  find "$CACHE" -maxdepth 1 -name 'initrd-*.gz' ! -name "initrd-$KEY.gz" -delete
  T_BUILD=$(elapsed "$tb")
  echo "vm.rxe: initramfs built in ${T_BUILD} s: $INITRD ($(du -h "$INITRD" | cut -f1))"
fi
flock -u 9

# -------------------------------------------------------------------------- boot ----
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rdma-vm-run.XXXXXX")
OUT=${RDMA_VM_OUT:-$WORK/out}
mkdir -p "$OUT"
truncate -s 64M "$WORK/out.img"
# TCG by default even when /dev/kvm exists: on nested-virtualisation machines (such as the CI
# machines, themselves microVMs) /dev/kvm opens fine but the guest hangs right after the real-mode
# boot stub, and the test would only fail at QEMU_TIMEOUT. TCG boots in ~11 s to usable devices.
ACCEL=${RDMA_VM_ACCEL:-tcg}
BIOS=(); [ -r /usr/share/qemu/qboot.rom ] && BIOS=(-bios /usr/share/qemu/qboot.rom)
echo "vm.rxe: booting $KERNEL (accel=$ACCEL, exporter $EXPORTER)"
tq=$EPOCHREALTIME
T_RXE=""
while IFS= read -r line; do
  line=${line%$'\r'}
  printf '%s\n' "$line" >> "$WORK/console.log"
  case "$line" in
    *VMSTAGE*)
      s=${line#*VMSTAGE }; t=$(elapsed "$tq")
      echo "vm.rxe: [+${t}s] $s"
      case "$s" in rxe-ready*) T_RXE=$t;; esac;;
    "ok - "*|"not ok - "*) echo "  $line";;
  esac
done < <(timeout "$QEMU_TIMEOUT" qemu-system-x86_64 \
  -machine q35,accel=$ACCEL -cpu max -smp 2 -m 1024 "${BIOS[@]}" \
  -nographic -no-reboot -nodefaults -serial stdio \
  -kernel "$KERNEL" -initrd "$INITRD" \
  -append "console=ttyS0 panic=-1 quiet loglevel=3 rdinit=/init" \
  -netdev user,id=n0 -device virtio-net-pci,netdev=n0,romfile= \
  -netdev user,id=n1,net=10.0.3.0/24 -device virtio-net-pci,netdev=n1,romfile= \
  -drive file="$WORK/out.img",format=raw,if=virtio,cache=unsafe 2>&1; echo "QEMU-EXIT $?")
T_QEMU=$(elapsed "$tq")
qrc=$(sed -n 's/^QEMU-EXIT //p' "$WORK/console.log")

# ------------------------------------------------------------------------ collect ----
if tar -C "$OUT" -xf "$WORK/out.img" 2>/dev/null && [ -s "$OUT/results.txt" ]; then
  RESULTS=$OUT/results.txt
else
  echo "vm.rxe: no results tar from the guest (qemu exit ${qrc:-?}); using the serial console"
  grep -E '^(ok|not ok) - ' "$WORK/console.log" > "$WORK/console-results.txt"
  RESULTS=$WORK/console-results.txt
fi
cp "$WORK/console.log" "$OUT/console.log"

pass=0 fail=0
while IFS= read -r l; do
  case "$l" in "ok - "*) pass=$((pass+1));; "not ok - "*) fail=$((fail+1));; esac
done < "$RESULTS"
if ! grep -q 'VMSTAGE checks-done' "$WORK/console.log"; then
  echo "not ok - guest ran all checks (qemu exit ${qrc:-?}; last console lines: $(grep -v '^QEMU-EXIT' "$WORK/console.log" | tail -3 | tr '\n' ' '))"
  fail=$((fail+1))
fi
# promtool on the host, on what the guest captured
shopt -s nullglob
proms=("$OUT"/*.prom)
if ! command -v "$PROMTOOL" >/dev/null; then
  echo "not ok - promtool check metrics: promtool not found (package prometheus)"; fail=$((fail+1))
elif [ ${#proms[@]} -eq 0 ]; then
  echo "not ok - promtool check metrics: the guest wrote no /metrics capture"; fail=$((fail+1))
else
  for p in "${proms[@]}"; do
    if msg=$("$PROMTOOL" check metrics < "$p" 2>&1); then
      echo "ok - promtool check metrics: ${p##*/} ($(grep -vc '^#' "$p") samples)"; pass=$((pass+1))
    else
      echo "not ok - promtool check metrics: ${p##*/}: $(echo "$msg" | head -5 | tr '\n' ' ')"; fail=$((fail+1))
    fi
  done
fi

T_TOTAL=$(elapsed)
echo "vm.rxe: timings: initramfs build ${T_BUILD}${T_BUILD:+$([ "$T_BUILD" = cached ] || echo ' s')}, qemu start -> rxe ready ${T_RXE:-?} s, qemu ${T_QEMU} s, total ${T_TOTAL} s" | tee "$OUT/host-timing.txt"
if [ $fail -gt 0 ] || [ -n "${RDMA_VM_OUT:-}" ]; then
  echo "vm.rxe: guest output kept in $OUT"
else
  rm -rf "$WORK"
fi
[ -z "${RDMA_VM_OUT:-}" ] && [ $fail -gt 0 ] && [ "$OUT" = "$WORK/out" ] && rm -f "$WORK/out.img"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
