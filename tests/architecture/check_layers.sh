#!/usr/bin/env bash
# Architecture check (CTest architecture.*): the layer libraries depend one way
#   core <- readers <- collectors <- poller <- http <- binary
#                      collectors <- health <- http;  health <- cli <- binary
# with no link cycle, and a layer cannot include the public header of a layer above it nor a
# private header of another library (it fails to compile).
#
# usage: check_layers.sh links SOURCE_DIR
#        check_layers.sh includes COMPILE_COMMANDS_JSON
set -euo pipefail
mode=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# Rank of each layer library; a library may link only libraries of a lower rank. health and
# poller share a rank, and so do cli and http, so that neither of a pair can link the other; rdma_exporter_app (the flag tables, built on
# the cli's flag machinery) is the binary's own library.
rank() {
  case $1 in
    rdma_exporter_core) echo 0 ;;
    rdma_exporter_readers) echo 1 ;;
    rdma_exporter_collectors) echo 2 ;;
    rdma_exporter_poller | rdma_exporter_health) echo 3 ;;
    rdma_exporter_http | rdma_exporter_cli) echo 4 ;;
    rdma_exporter_app) echo 5 ;;
    rdma_exporter) echo 6 ;;
    *) echo "" ;;
  esac
}

if [ "$mode" = links ]; then
  src=$2
  # A configure of its own (no tests, no build) so the check never touches the build tree.
  cmake -S "$src" -B "$tmp/cfg" -DBUILD_TESTING=OFF --graphviz="$tmp/deps.dot" >/dev/null
  # Edges "a -> b" between targets, from the comments cmake writes after each edge.
  sed -n 's|.*"node[0-9]*" -> "node[0-9]*".*// \(.*\) -> \(.*\)$|\1 \2|p' "$tmp/deps.dot" >"$tmp/edges"
  layer_edges=0
  while read -r from to; do
    rf=$(rank "$from") rt=$(rank "$to")
    [ -n "$rf" ] && [ -n "$rt" ] || continue
    layer_edges=$((layer_edges + 1))
    if [ "$rt" -ge "$rf" ]; then
      echo "FAIL: $from links $to (rank $rf -> $rt): dependencies must point down the layers"
      fail=1
    fi
  done <"$tmp/edges"
  # tsort reports any cycle in the whole graph (third-party targets included).
  if ! tsort "$tmp/edges" >/dev/null 2>"$tmp/tsort.err"; then
    echo "FAIL: link cycle:"
    cat "$tmp/tsort.err"
    fail=1
  fi
  if [ "$layer_edges" -lt 7 ]; then
    echo "FAIL: only $layer_edges edges between layer libraries found in $tmp/deps.dot"
    fail=1
  fi
  [ $fail -eq 0 ] && echo "architecture.links: $layer_edges layer edges, all downward, no cycle"
  exit $fail
fi

if [ "$mode" = includes ]; then
  db=$2
  # The compile command of a source file, made a syntax-only compile of a probe that includes
  # one header.
  probe() {
    local file=$1 header=$2 cmd
    cmd=$(grep -F -B2 "\"file\": \"$file\"" "$db" | sed -n 's/^ *"command": "\(.*\)",$/\1/p' | head -1)
    if [ -z "$cmd" ]; then
      echo "FAIL: no compile command for $file in $db"
      return 2
    fi
    printf '#include "%s"\n' "$header" >"$tmp/probe.cpp"
    # shellcheck disable=SC2001
    cmd=$(echo "$cmd" | sed 's/ -o [^ ]* / /; s/ -c [^ ]*$//; s/\\"/"/g')
    eval "$cmd -fsyntax-only $tmp/probe.cpp" >"$tmp/out" 2>&1
  }
  must_compile() {
    if ! probe "$1" "$2"; then
      echo "FAIL: $1 cannot include $2 (it should):"
      head -5 "$tmp/out"
      fail=1
    fi
  }
  must_not_compile() {
    if probe "$1" "$2"; then
      echo "FAIL: $1 can include $2 (a wrong-way or private include)"
      fail=1
    elif ! grep -q "No such file" "$tmp/out"; then
      echo "FAIL: probe of $2 from $1 failed for another reason:"
      head -5 "$tmp/out"
      fail=1
    fi
  }
  root=$(dirname "$(dirname "$(readlink -f "$0")")")/..
  root=$(readlink -f "$root")
  core=$root/exporter/core/parse.cpp
  readers=$root/exporter/readers/sysfs_reader.cpp
  collectors=$root/collectors/port_state.cpp
  poller=$root/exporter/poller/poller.cpp
  http=$root/exporter/http/http_server.cpp
  cli=$root/exporter/cli/cli.cpp
  health=$root/exporter/health/report.cpp
  # Each layer sees its own and lower layers' public headers ...
  must_compile "$core" rdma_exporter/parse.h
  must_compile "$readers" rdma_exporter/parse.h
  must_compile "$collectors" rdma_exporter/sysfs_reader.h
  must_compile "$poller" rdma_exporter/collector.h
  must_compile "$http" rdma_exporter/poller.h
  must_compile "$cli" rdma_exporter/collector.h
  must_compile "$cli" rdma_exporter/health_checks.h
  must_compile "$http" rdma_exporter/health_checks.h
  # ... not those of the layers above it, nor of a sibling ...
  must_not_compile "$core" rdma_exporter/sysfs_reader.h
  must_not_compile "$readers" rdma_exporter/collector.h
  must_not_compile "$collectors" rdma_exporter/poller.h
  must_not_compile "$poller" rdma_exporter/http_server.h
  must_not_compile "$poller" rdma_exporter/cli.h
  must_not_compile "$cli" rdma_exporter/poller.h
  must_not_compile "$http" rdma_exporter/cli.h
  must_not_compile "$health" rdma_exporter/poller.h
  must_not_compile "$poller" rdma_exporter/health_checks.h
  # ... nor another library's private headers.
  must_not_compile "$collectors" netlink_util.h
  must_not_compile "$cli" port_counters.h
  must_not_compile "$http" common.h
  [ $fail -eq 0 ] && echo "architecture.includes: 8 allowed and 12 forbidden includes as expected"
  exit $fail
fi
echo "usage: check_layers.sh links SOURCE_DIR | includes COMPILE_COMMANDS_JSON" >&2
exit 2
