#!/usr/bin/env bash
# Kubernetes manifests, offline: regenerates deploy/kubernetes/generated and diffs it with the
# committed files, renders every overlay with `kubectl kustomize`, then checks every rendered
# document with yamllint, kubernetes-models validate(), a strict TypeScript type-check (unknown
# fields), the deployment policy (policy.mjs) and `promtool check rules` on each PrometheusRule.
# Deliberately broken manifests (tests/deploy/invalid) must be rejected, and so must edits of
# the rendered DaemonSet that lose the NCCL-TC or verbs checks (policy self-test).
# Finally the kubelet's probes of every overlay run against EXPORTER started with its flags.
# Usage: kubernetes_test.sh SOURCE_DIR WORK_DIR EXPORTER  (npm packages are installed with `npm ci` into
# WORK_DIR/tools; KUBECTL, PROMTOOL override the tools found on PATH; KUBECTL_COMPARE=path of a
# second kubectl also renders every overlay with it and requires identical output).
set -euo pipefail
SRC=$(cd "$1" && pwd)
WORK=$2
EXPORTER=${3:-}
K8S=$SRC/deploy/kubernetes
KUBECTL=${KUBECTL:-kubectl}
PROMTOOL=${PROMTOOL:-promtool}
for tool in "$KUBECTL" node npm yamllint "$PROMTOOL"; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool not found (scripts/install-deps.sh --tests)"; exit 1; }
done
fail=0
mkdir -p "$WORK"

# npm ci into a copy of the tools, again only when the lock file changed.
TOOLS=$WORK/tools
mkdir -p "$TOOLS"
cp "$K8S"/tools/package.json "$K8S"/tools/package-lock.json "$K8S"/tools/*.mjs "$TOOLS"/
if ! cmp -s "$TOOLS/package-lock.json" "$TOOLS/node_modules/.installed-lock" 2>/dev/null; then
  (cd "$TOOLS" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$TOOLS/package-lock.json" "$TOOLS/node_modules/.installed-lock"
fi
echo "node $(node --version), npm $(npm --version), $("$KUBECTL" version --client 2>/dev/null | head -1)"

# 1. The committed generated/ is what the generator makes from dashboards/out today.
rm -rf "$WORK/generated"
node "$TOOLS/generate.mjs" "$SRC" "$WORK/generated"
if ! diff -ru "$K8S/generated" "$WORK/generated"; then
  echo "FAIL: deploy/kubernetes/generated is stale: node deploy/kubernetes/tools/generate.mjs ."
  fail=1
fi

# The generator's output on a fixture input (a rule file with a multi-line expression and a
# dashboard) is valid whether or not dashboards/out has files yet.
rm -rf "$WORK/fixture-gen" "$WORK/fixture-rules"
node "$TOOLS/generate.mjs" "$SRC/tests/deploy/fixture" "$WORK/fixture-gen"
for f in prometheusrule.yaml grafana-dashboards.yaml; do
  [ -s "$WORK/fixture-gen/$f" ] || { echo "FAIL: generator wrote no $f for the fixture"; fail=1; }
done
grep -q 'grafana_dashboard: "1"' "$WORK/fixture-gen/grafana-dashboards.yaml" ||
  { echo "FAIL: dashboard ConfigMap without the grafana_dashboard label"; fail=1; }
node "$TOOLS/validate.mjs" "$WORK/fixture-rules" "$WORK"/fixture-gen/{prometheusrule,grafana-dashboards}.yaml || fail=1
"$PROMTOOL" check rules "$WORK"/fixture-rules/*.yaml || fail=1

# 2. Sources lint clean.
yamllint -c "$K8S/yamllint.yaml" "$K8S/base" "$K8S/overlays" "$K8S/generated" "$WORK/fixture-gen" || fail=1

# 3. Every overlay renders and every document passes.
rm -rf "$WORK/rendered" "$WORK/rules"
mkdir -p "$WORK/rendered"
overlays=$(cd "$K8S/overlays" && ls)
for o in $overlays; do
  out=$WORK/rendered/$o.yaml
  if ! "$KUBECTL" kustomize "$K8S/overlays/$o" >"$out" 2>"$WORK/rendered/$o.err"; then
    cat "$WORK/rendered/$o.err"
    echo "FAIL: kubectl kustomize overlays/$o"
    fail=1
    continue
  fi
  # KUBECTL_COMPARE=another kubectl (e.g. Debian's 1.20 next to a current one): same output.
  if [ -n "${KUBECTL_COMPARE:-}" ]; then
    "$KUBECTL_COMPARE" kustomize "$K8S/overlays/$o" 2>/dev/null | diff -u "$out" - ||
      { echo "FAIL: $KUBECTL_COMPARE renders overlays/$o differently"; fail=1; }
  fi
  yamllint -c "$K8S/yamllint.yaml" "$out" || { echo "FAIL: yamllint $o"; fail=1; }
  node "$TOOLS/policy.mjs" "$out" || fail=1
  echo "overlay $o: $(grep -c '^kind:' "$out") documents"
done
node "$TOOLS/validate.mjs" "$WORK/rules" "$WORK"/rendered/*.yaml || fail=1

# The operator overlays carry the generated rules and dashboards, when there are any (the
# base has a ConfigMap of its own: dashboards are the ConfigMaps labelled grafana_dashboard).
for o in operator operator-podmonitor tls; do
  for mark in '^kind: PrometheusRule' 'grafana_dashboard: "1"'; do
    if grep -q "$mark" "$K8S/generated"/*.yaml 2>/dev/null &&
      ! grep -q "$mark" "$WORK/rendered/$o.yaml"; then
      echo "FAIL: overlay $o has no '$mark' from generated/"
      fail=1
    fi
  done
done
if grep -q '^kind: PrometheusRule' "$WORK/rendered/plain.yaml"; then
  echo "FAIL: the plain overlay must not need the Prometheus Operator"
  fail=1
fi

# 4. promtool on the rule groups of every PrometheusRule.
shopt -s nullglob
rules=("$WORK"/rules/*.yaml)
if grep -q '^kind: PrometheusRule' "$K8S/generated"/*.yaml 2>/dev/null && [ ${#rules[@]} -eq 0 ]; then
  echo "FAIL: no PrometheusRule groups extracted"
  fail=1
fi
for r in "${rules[@]}"; do
  "$PROMTOOL" check rules "$r" || { echo "FAIL: promtool check rules $(basename "$r")"; fail=1; }
done

# 5. The checks reject what they must: each broken manifest alone has a problem.
node "$TOOLS/validate.mjs" --expect-invalid "$WORK/rules-invalid" "$SRC"/tests/deploy/invalid/*.yaml ||
  { echo "FAIL: a broken manifest in tests/deploy/invalid was accepted"; fail=1; }

# The policy rejects a DaemonSet that would lose the NCCL-priority or active-MTU checks, or gain
# a capability it was not opted into: each edit of a rendered overlay alone must fail it.
bad=$WORK/policy-invalid
rm -rf "$bad"
mkdir -p "$bad"
# shellcheck disable=SC2016  # $(NCCL_IB_TC) is the Kubernetes reference, not the shell's
mutations=(
  'no-tc|/--nccl.ib-tc=/d'
  'tc-hardcoded|s/--nccl.ib-tc=$(NCCL_IB_TC)/--nccl.ib-tc=128/'
  'tc-other-key|s/key: NCCL_IB_TC/key: TC/'
  'tc-out-of-range|s/NCCL_IB_TC: "128"/NCCL_IB_TC: "256"/'
  'verbs-off|s/- --poll-interval=10s/- --no-collector.verbs/'
  'no-hca|s|rdma/hca_shared_devices_a:|rdma/other:|'
  'all-interfaces|s|--web.listen-address=$(HOST_IP):9879|--web.listen-address=:9879|'
  'liveness-without-path|s|path: /-/healthy|tcpSocket: {port: metrics}|'
)
# Capabilities: none outside the link-peer opt-in, and there only NET_RAW and NET_ADMIN.
mutations+=(
  'plain-adds-net-raw|s/^            drop:$/            add: [NET_RAW]\n            drop:/'
  'link-peer:link-peer-sys-admin|s/- NET_ADMIN/- SYS_ADMIN/'
  'link-peer:link-peer-without-opt-in|/rdma-exporter\/opt-in: link-peer/d'
)
for m in "${mutations[@]}"; do
  name=${m%%|*}
  base=plain
  if [[ $name == *:* ]]; then
    base=${name%%:*}
    name=${name#*:}
  fi
  sed "${m#*|}" "$WORK/rendered/$base.yaml" >"$bad/$name.yaml"
  if cmp -s "$WORK/rendered/$base.yaml" "$bad/$name.yaml"; then
    echo "FAIL: policy self-test $name: the edit changed nothing (stale pattern)"
    fail=1
  elif node "$TOOLS/policy.mjs" "$bad/$name.yaml" 2>"$bad/$name.err"; then
    echo "FAIL: policy accepted $name"
    fail=1
  else
    echo "policy rejects $name: $(head -1 "$bad/$name.err" | sed 's/.*policy: //')"
  fi
done

# 6. The kubelet's probes of every overlay against the exporter started with that overlay's flags
#    (tests/deploy/probes_test.mjs): a web config with TLS and basic auth stands in for the
#    webconfig overlay's Secret.
if [ -z "$EXPORTER" ] || [ ! -x "$EXPORTER" ]; then
  echo "FAIL: the built exporter (third argument) is needed for the probe test: '$EXPORTER'"
  fail=1
else
  pki=$WORK/probe-pki
  rm -rf "$pki"
  mkdir -p "$pki"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=localhost \
    -keyout "$pki/tls.key" -out "$pki/tls.crt" >/dev/null 2>&1
  # bcrypt (cost 4) of "probe-test"; the probes send no credentials, so only its shape matters.
  cat >"$pki/web-config.yml" <<'YAML'
tls_server_config:
  cert_file: tls.crt
  key_file: tls.key
basic_auth_users:
  prometheus: $2b$04$A7ToaOQIRsFYMwf7DW.Yse.udw7zrFt/flWQXlG.sgidg9ODH7Req
YAML
  chmod 600 "$pki/tls.key" "$pki/web-config.yml"
  cp "$SRC/tests/deploy/probes_test.mjs" "$TOOLS/"
  node "$TOOLS/probes_test.mjs" "$EXPORTER" "$SRC/tests/fixtures/mlx5-ib" "$pki/web-config.yml" \
    "$WORK"/rendered/*.yaml || fail=1
fi

if [ "$fail" -ne 0 ]; then
  echo "kubernetes manifests: FAILED"
  exit 1
fi
echo "kubernetes manifests: all overlays (${overlays//$'\n'/ }) valid"
