#!/usr/bin/env bash
# Builds the initramfs of the VM tier (tests/vm) from the host's Debian packages.
# Usage: build-initramfs.sh EXPORTER KVER OUT.cpio.gz
#   EXPORTER  the built rdma_exporter; copied to /usr/local/bin/rdma_exporter with its ldd closure
#   KVER      kernel version whose modules (/lib/modules/KVER) go into the image
# Layout is merged-/usr like the host, so the paths ldd prints copy over unchanged.
set -euo pipefail

EXPORTER=$1 KVER=$2 OUTFILE=$3
HERE=$(cd "$(dirname "$0")" && pwd)
ARCHLIB=/usr/lib/x86_64-linux-gnu
ROOT=$(mktemp -d "${TMPDIR:-/tmp}/rdma-vm-root.XXXXXX")
trap 'rm -rf "$ROOT"' EXIT

cd "$ROOT"
mkdir -p usr/bin usr/sbin usr/lib usr/lib64 usr/local/bin etc proc sys dev tmp run out vm "$ARCHLIB"
ln -s usr/bin bin; ln -s usr/sbin sbin; ln -s usr/lib lib; ln -s usr/lib64 lib64
cp /bin/busybox usr/bin/busybox
for app in $(usr/bin/busybox --list); do
  [ -e "usr/bin/$app" ] || ln -s busybox "usr/bin/$app"
done

# copy_libs FILE: the shared-library closure of FILE (ldd) into $ROOT
copy_libs() {
  local lib
  { ldd "$1" 2>/dev/null || true; } | grep -oE '/[^ ]+' | while read -r lib; do
    [ -e "$ROOT$lib" ] && continue
    mkdir -p "$ROOT$(dirname "$lib")"
    cp -L "$lib" "$ROOT$lib"
  done
}
# copy FILE [DEST]: FILE (symlinks resolved) plus its libraries; DEST defaults to FILE's real path.
# rm first: the destination may be a busybox applet symlink.
copy() {
  local f dst
  f=$(readlink -f "$1"); dst=${2:-$f}
  [ -e "$f" ] || { echo "build-initramfs: missing $1" >&2; exit 1; }
  mkdir -p "$ROOT$(dirname "$dst")"
  rm -f "$ROOT$dst"; cp -L "$f" "$ROOT$dst"
  copy_libs "$f"
}

for b in /usr/bin/rdma /usr/bin/ip /usr/bin/ibv_devinfo /usr/bin/ibv_rc_pingpong \
         /usr/bin/ib_write_bw /usr/bin/kmod; do
  copy "$b"
done
copy "$EXPORTER" /usr/local/bin/rdma_exporter
# Its private libraries (the OpenSSL shims, the kubelet module and what it links) are found
# through RUNPATH / the path $ORIGIN/../lib/rdma_exporter: keep that layout next to the copy.
shims=$(dirname "$(readlink -f "$EXPORTER")")/../lib/rdma_exporter
if [ -d "$shims" ]; then
  mkdir -p usr/local/lib/rdma_exporter
  for lib in "$shims"/*.so; do
    cp -L "$lib" usr/local/lib/rdma_exporter/
    copy_libs "$lib"
  done
fi
# glibc dlopen()s libgcc_s (pthread_exit/cancellation); ldd does not list it for C programs.
copy /lib/x86_64-linux-gnu/libgcc_s.so.1
# The rxe verbs provider is dlopen()ed by libibverbs (ibv_* tools and the exporter's verbs collector).
copy $ARCHLIB/libibverbs/librxe-rdmav34.so
mkdir -p etc/libibverbs.d; cp /etc/libibverbs.d/rxe.driver etc/libibverbs.d/
for t in modprobe insmod rmmod lsmod depmod modinfo; do
  rm -f "usr/sbin/$t" "usr/bin/$t"; ln -s /usr/bin/kmod "usr/sbin/$t"
done
echo 'root:x:0:0:root:/root:/bin/sh' > etc/passwd
echo 'root:x:0:' > etc/group
printf '127.0.0.1 localhost\n' > etc/hosts

# Kernel modules with their dependencies. crc32_generic/crc32-pclmul: rxe allocates the "crc32"
# shash for the ICRC; Debian builds it as a module, and without it `rdma link add` fails (ENOENT).
MODS="virtio_pci virtio_net virtio_blk rdma_rxe ib_uverbs rdma_ucm ib_umad crc32_generic crc32-pclmul"
for m in $MODS; do
  modprobe --show-depends -S "$KVER" "$m" | awk '$1=="insmod"{print $2}'
done | sort -u | while read -r ko; do
  mkdir -p "$ROOT$(dirname "$ko")"; cp "$ko" "$ROOT$ko"
done
cp /lib/modules/"$KVER"/modules.{order,builtin,builtin.modinfo} "$ROOT/lib/modules/$KVER/" 2>/dev/null || true
depmod -b "$ROOT" "$KVER"

cp "$HERE/guest/init" init; chmod +x init
cp "$HERE/guest/checks.sh" vm/checks.sh

find . -print0 | cpio --null -o -H newc --quiet | gzip -1 > "$OUTFILE.tmp"
mv "$OUTFILE.tmp" "$OUTFILE"
