#!/usr/bin/env bash
# Rule and dashboard checks (registered in CTest as rules.*):
#   run.sh generated   dashboards/out equals a fresh `dashboards/generate.sh` (jsonnet)
#   run.sh check       `promtool check rules` on the shipped and the e2e rule files
#   run.sh unit [F..]  `promtool test rules` on tests/rules/*.test.yaml (or the files given)
#   run.sh coverage    every alert has a firing promtool test and a docs/runbook.md section,
#                      every runbook section is an alert, every runbook_url points at one
#   run.sh schema      dashboards/out/dashboards/*.json type-check against npm @grafana/schema
#                      (npm ci of tests/rules/schema into $SCHEMA_WORK, reused while the lock
#                      file is unchanged)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
PROMTOOL=${PROMTOOL:-promtool}
rules="$root/dashboards/out/rdma_exporter.rules.yaml"
test_rules="$root/dashboards/out/test/rdma_exporter.rules.yaml"

case "${1:-}" in
  generated)
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    "$root/dashboards/generate.sh" "$tmp/out"
    if ! diff -r "$root/dashboards/out" "$tmp/out"; then
      echo "dashboards/out is not what the jsonnet sources generate: run dashboards/generate.sh" >&2
      exit 1
    fi
    ;;
  check)
    "$PROMTOOL" check rules "$rules" "$test_rules"
    ;;
  unit)
    # run.sh unit [FILE.test.yaml ...]: the given files (CTest runs one per test, in
    # parallel), or all of them.
    cd "$here"
    shift
    if [ $# -eq 0 ]; then set -- ./*.test.yaml; fi
    "$PROMTOOL" test rules "$@"
    ;;
  coverage)
    fail=0
    alerts=$(sed -n 's/^ *- alert: "\{0,1\}\([A-Za-z0-9]*\)"\{0,1\}$/\1/p' "$rules" | sort -u)
    [ -n "$alerts" ] || { echo "no alerts found in $rules" >&2; exit 1; }
    sections=$(sed -n 's/^## \([A-Za-z0-9]*\)$/\1/p' "$root/docs/runbook.md" | sort -u)
    for a in $alerts; do
      # a test that expects it to fire: "alertname: A" followed (before the next alertname) by
      # an exp_labels entry
      if ! awk -v a="$a" '$1 == "alertname:" { cur = $2 } cur == a && /exp_labels:/ { found = 1 }
                          END { exit !found }' "$here"/*.test.yaml; then
        echo "alert $a has no promtool test in which it fires" >&2
        fail=1
      fi
      if ! grep -qx "$a" <<<"$sections"; then
        echo "alert $a has no section '## $a' in docs/runbook.md" >&2
        fail=1
      fi
    done
    for s in $sections; do
      grep -qx "$s" <<<"$alerts" || { echo "runbook section $s is not an alert" >&2; fail=1; }
    done
    # runbook_url = <base>#<alert name in lower case>
    while read -r name url; do
      lower=$(tr 'A-Z' 'a-z' <<<"$name")
      [[ "$url" == *"#$lower" ]] || { echo "$name: runbook_url $url" >&2; fail=1; }
    done < <(awk '/- alert:/ { gsub(/"/, ""); n = $3 } /runbook_url:/ { gsub(/"/, ""); print n, $2 }' "$rules")
    echo "$(wc -w <<<"$alerts") alerts, each with a firing test and a runbook section"
    exit $fail
    ;;
  schema)
    work=${SCHEMA_WORK:-$(mktemp -d)}
    mkdir -p "$work"
    if ! cmp -s "$here/schema/package-lock.json" "$work/package-lock.json" ||
      [ ! -d "$work/node_modules/@grafana/schema" ]; then
      cp "$here/schema/package.json" "$here/schema/package-lock.json" "$work/"
      (cd "$work" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
    fi
    node "$here/schema/check.mjs" "$root/dashboards/out/dashboards" "$work"
    ;;
  *)
    echo "usage: run.sh generated|check|unit|coverage|schema" >&2
    exit 2
    ;;
esac
