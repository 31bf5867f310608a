#!/usr/bin/env bash
# Builds the rdma_exporter image from deploy/container/Dockerfile without a Docker engine and
# proves it works:
#   1. a Debian 12 base image made locally: debootstrap --variant=minbase bookworm, imported
#      into buildah's storage as localhost/debian:12-debootstrap (cached: rebuilt only when
#      missing or with FRESH_BASE=1);
#   2. `buildah bud` of the Dockerfile (chroot isolation) on a clean clone of the committed tree,
#      tagged localhost/rdma-exporter:<version>;
#   3. the binary of the built image run from the image's file system: `--version` through
#      `buildah run`, then as user 65534 (chroot) on a live demo fabric, scraped once.
# Root, Debian 12, network to the Debian mirror. Takes ~15 min on 2 cores the first time.
# Usage: deploy/container/build-image.sh [--no-test|--test-only]   (--test-only: step 3 on the
# image already built; IMAGE=name:tag to change the tag;
# OCI_ARCHIVE=path.tar also writes the image as an OCI archive)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
cd "$REPO"
[ "$(id -u)" -eq 0 ] || { echo "build-image.sh: needs root (debootstrap, buildah)" >&2; exit 1; }
./scripts/install-deps.sh --container
VERSION=$(sed -n 's/^project(rdma_exporter VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
IMAGE=${IMAGE:-localhost/rdma-exporter:$VERSION}
BASE=localhost/debian:12-debootstrap
CACHE=${CACHE:-/var/tmp/rdma_exporter-image}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
# chroot isolation: no runc/namespaces needed, RUN steps share the host's network.
export BUILDAH_ISOLATION=chroot
mkdir -p "$CACHE"
log() { echo "build-image: $*" >&2; }

# 1. Debian 12 base from debootstrap.
if [ "${1:-}" = "--test-only" ]; then
  :
elif [ -n "${FRESH_BASE:-}" ] || ! buildah inspect --type image "$BASE" >/dev/null 2>&1; then
  # A finished debootstrap tree is reused (it is only the base), unless FRESH_BASE is set.
  if [ -n "${FRESH_BASE:-}" ] || [ ! -e "$CACHE/rootfs/.debootstrap-done" ]; then
    rm -rf "$CACHE/rootfs"
    log "debootstrap bookworm into $CACHE/rootfs"
    start=$SECONDS
    debootstrap --variant=minbase bookworm "$CACHE/rootfs" "$MIRROR" >"$CACHE/debootstrap.log"
    # As in a registry's Debian image: no downloaded packages or package lists.
    rm -rf "$CACHE"/rootfs/var/cache/apt/archives/*.deb "$CACHE"/rootfs/var/lib/apt/lists/*
    touch "$CACHE/rootfs/.debootstrap-done"
    log "debootstrap took $((SECONDS - start)) s"
  fi
  ctr=$(buildah from scratch)
  mnt=$(buildah mount "$ctr")
  cp -a "$CACHE/rootfs/." "$mnt/"
  rm -f "$mnt/.debootstrap-done"
  buildah umount "$ctr" >/dev/null
  buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --cmd /bin/bash "$ctr"
  buildah commit --rm "$ctr" "$BASE" >/dev/null
  log "base image $BASE"
fi

# 2. The image, from a clean clone of HEAD (committed files only, .git for the revision).
CTX=$(mktemp -d)
if [ "${1:-}" != "--test-only" ]; then
cleanup_ctx() { rm -rf "$CTX"; }
trap cleanup_ctx EXIT
git clone -q --depth 1 "file://$REPO" "$CTX/src"
start=$SECONDS
buildah bud --layers --build-arg BASE="$BASE" -f deploy/container/Dockerfile -t "$IMAGE" \
  "$CTX/src" >"$CACHE/bud.log" 2>&1 || { tail -40 "$CACHE/bud.log"; log "buildah bud failed"; exit 1; }
log "buildah bud took $((SECONDS - start)) s; log in $CACHE/bud.log"
buildah images "$IMAGE"
if [ -n "${OCI_ARCHIVE:-}" ]; then
  buildah push "$IMAGE" "oci-archive:$OCI_ARCHIVE:$IMAGE"
  log "wrote $OCI_ARCHIVE"
fi
fi
[ "${1:-}" = "--no-test" ] && exit 0

# 3. Run the image's binary.
ctr=$(buildah from "$IMAGE")
mnt=$(buildah mount "$ctr")
DEMO=$(mktemp -d)
chmod 755 "$DEMO" # the exporter runs as 65534
SIM_PID=""
EXP_PID=""
cleanup() {
  [ -n "$EXP_PID" ] && { kill "$EXP_PID" 2>/dev/null; wait "$EXP_PID" 2>/dev/null; }
  [ -n "$SIM_PID" ] && { kill "$SIM_PID" 2>/dev/null; wait "$SIM_PID" 2>/dev/null; }
  umount "$mnt$DEMO" "$mnt/proc" 2>/dev/null || true
  buildah umount "$ctr" >/dev/null 2>&1 || true
  buildah rm "$ctr" >/dev/null 2>&1 || true
  rm -rf "$DEMO" "$CTX"
}
trap cleanup EXIT
echo "--- image user: $(buildah inspect --format '{{.OCIv1.Config.User}}' "$IMAGE")"
echo "--- libraries of /usr/bin/rdma_exporter in the image:"
chroot "$mnt" ldd /usr/bin/rdma_exporter | sed 's/ (0x.*//'
echo "--- buildah run $IMAGE --version"
buildah run "$ctr" -- /usr/bin/rdma_exporter --version

# The demo fabric on the host (the simulator is not in the image), bind-mounted read-only at
# the same path: the tree's symlinks are absolute.
BUILD_DIR=${BUILD_DIR:-build}
SIM=$BUILD_DIR/tools/fabric_sim/rdma_fabric_sim
[ -x "$SIM" ] || BUILD_TESTING=OFF BUILD_DIR=$BUILD_DIR ./scripts/build.sh rdma_fabric_sim >/dev/null
"$SIM" --root "$DEMO" --interval 1s >/dev/null 2>&1 &
SIM_PID=$!
for _ in $(seq 100); do [ -e "$DEMO/sys/class/infiniband" ] && break; sleep 0.1; done
mkdir -p "$mnt$DEMO"
mount --bind -o ro "$DEMO" "$mnt$DEMO"
mount -t proc proc "$mnt/proc"
PORT=$((20000 + RANDOM % 40000))
chroot --userspec=65534:65534 "$mnt" /usr/bin/rdma_exporter --path.sysfs="$DEMO/sys" \
  --path.fixtures="$DEMO/fixtures" --nccl.ib-tc=106 --poll-interval=1s \
  --web.listen-address="127.0.0.1:$PORT" 2>"$CACHE/exporter.log" &
EXP_PID=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/-/ready" >/dev/null && break; sleep 0.1; done
sleep 2 # a poll after the simulator's tree is complete
curl -sf "http://127.0.0.1:$PORT/metrics" >"$CACHE/metrics.txt" ||
  { cat "$CACHE/exporter.log"; log "scrape failed"; exit 1; }
ports=$(grep -c '^rdma_port_up{' "$CACHE/metrics.txt" || true)
echo "--- scrape of the demo fabric from the image's exporter (uid 65534): $(grep -vc '^#' "$CACHE/metrics.txt") samples, $ports ports"
grep -E '^rdma_exporter_build_info|^rdma_exporter_devices|^process_resident_memory_bytes' "$CACHE/metrics.txt"
[ "$ports" -gt 0 ] || { log "no rdma_port_up series"; exit 1; }
log "image $IMAGE built and verified"
