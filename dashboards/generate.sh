#!/usr/bin/env bash
# Regenerates the rule files and dashboards in dashboards/out from the jsonnet sources
# (config.libsonnet, rules.libsonnet, dashboards.libsonnet; needs Debian's `jsonnet`).
# `generate.sh DIR` writes into DIR instead (the test compares that with the committed out/).
set -euo pipefail
cd "$(dirname "$0")"
out=${1:-out}
rm -rf "$out/rdma_exporter.rules.yaml" "$out/node-page-thresholds.json" "$out/test" "$out/dashboards"
mkdir -p "$out/test" "$out/dashboards"
jsonnet -J . -S -m "$out" build.jsonnet >/dev/null
jsonnet -J . -m "$out" dashboards-build.jsonnet >/dev/null
