#!/usr/bin/env bash
# Installs the Debian 12 packages the build needs, and with --tests also those the test suite
# needs (promtool, iproute2, qemu and a kernel for the VM tier, ...). Idempotent and
# non-interactive: does nothing when everything is already installed.
set -euo pipefail

PACKAGES=(
  # toolchain
  build-essential cmake pkg-config git clang-format
  # libraries (all from Debian; see README "Dependencies")
  prometheus-cpp-dev libcivetweb-dev libspdlog-dev libfmt-dev zlib1g-dev
  libnl-3-dev libnl-route-3-dev libnl-genl-3-dev libibverbs-dev libibmad-dev libibumad-dev
  libgtest-dev libgmock-dev
  # kubelet pod-resources API client (pod attribution): gRPC, protobuf and their compilers
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  # --web.config.file: YAML, OpenSSL 3 (TLS shims for CivetWeb), libxcrypt (bcrypt)
  libyaml-cpp-dev libssl-dev libcrypt-dev
  # demo and tests: fixture unpacking, curl for the quick start
  curl tar gzip ca-certificates
  # packaging: CPack's DEB generator needs `file` for its dpkg-shlibdeps step
  file
)
TEST_PACKAGES=(
  # tests: promtool (prometheus); rules, dashboards and the end-to-end test (tests/rules,
  # tests/e2e): jsonnet generates dashboards/out, Prometheus and Alertmanager run the pipeline
  prometheus prometheus-alertmanager jsonnet
  # fleet-scale test (bench/fleet, ctest fleet.small): the replay server and report (stdlib only)
  python3
  # hardening tests: test certificates (openssl CLI); fuzzing (scripts/sanitize.sh): clang with
  # its ASan/UBSan/libFuzzer runtimes (libclang_rt.fuzzer is in libclang-rt-14-dev on Debian 12)
  openssl clang libclang-rt-14-dev
  # kernel tests: network namespaces and veth pairs; ethtool to cross-check the ioctl reader
  iproute2 ethtool
  # VM tier (tests/vm): Debian's kernel under qemu with Soft-RoCE; the initramfs is built from
  # busybox-static, kmod and the host's rdma tools (rdma, ibv_devinfo, ibv_rc_pingpong, ib_write_bw)
  qemu-system-x86 linux-image-amd64 busybox-static rdma-core ibverbs-utils ibverbs-providers
  rdmacm-utils perftest infiniband-diags kmod cpio
  # bench/rdma_micro_bench (Google Benchmark) is built with the tests so it keeps compiling
  libbenchmark-dev
  # deploy tests (tests/deploy): manifest and package linters, systemd-analyze
  yamllint lintian systemd
  # node page tests (tests/browser): the page loaded in headless Chromium, a font for its
  # screenshots
  chromium fonts-dejavu-core
)

# deploy/container/build-image.sh: a Debian base made by debootstrap, the image built by buildah
CONTAINER_PACKAGES=(debootstrap buildah)

if [ "${1:-}" = "--container" ]; then
  PACKAGES+=("${CONTAINER_PACKAGES[@]}")
elif [ "${1:-}" = "--tests" ]; then
  PACKAGES+=("${TEST_PACKAGES[@]}")
  # npm for the dashboard schema check (tests/rules/schema); a Node.js that already ships npm
  # (e.g. NodeSource's) is kept, Debian's npm package would conflict with it
  if ! command -v npm >/dev/null; then PACKAGES+=(nodejs npm); fi
  # Kubernetes manifest tests (tests/deploy): `kubectl kustomize`; Debian's kubectl only when
  # none is installed (a kubectl from another apt source conflicts with it and serves as well)
  command -v kubectl >/dev/null || PACKAGES+=(kubernetes-client)
elif [ -n "${1:-}" ]; then
  echo "usage: install-deps.sh [--tests|--container]" >&2
  exit 2
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
