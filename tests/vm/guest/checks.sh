#!/bin/sh
# Assertions of the VM tier, run inside the guest (busybox sh) by /init once rxe0 (eth0) and
# rxe1 (eth1) exist. Runs the built rdma_exporter against the live kernel and compares what it
# serves with sysfs, `rdma` (netlink) and `ibv_devinfo` (verbs).
# Output: one line per assertion, "ok - <what>" or "not ok - <what>: <details>", on stdout and in
# $OUT/results.txt; /metrics captures in $OUT/*.prom (promtool runs on the host).
OUT=${1:-/out}
POLL_MS=300                 # --poll-interval of the exporter under test
LISTEN=127.0.0.1:9879
M=/tmp/metrics.prom         # the last scrape
IB=/sys/class/infiniband
: > "$OUT/results.txt"

up_cs() { read -r u _ < /proc/uptime; u=${u%.*}${u#*.}; echo $((u)); }   # uptime in 1/100 s
stage() { echo "VMSTAGE $1 uptime=$(cut -d' ' -f1 /proc/uptime)"; }
ok() { echo "ok - $*" | tee -a "$OUT/results.txt"; }
notok() { echo "not ok - $*" | tee -a "$OUT/results.txt"; }
# expect WHAT GOT WANT: string equality
expect() { if [ "$2" = "$3" ]; then ok "$1"; else notok "$1: got '$2', want '$3'"; fi; }
# expect_num WHAT GOT WANT: numeric equality (exposition values may be written as 1 or 1.0 or 1e+06)
num_eq() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN{exit !((a+0)==(b+0))}'; }
expect_num() { if num_eq "$2" "$3"; then ok "$1"; else notok "$1: got '$2', want '$3'"; fi; }

# http_get PATH FILE: body of a 200 response in FILE. busybox nc, not wget: Debian's static busybox
# wget segfaults (static glibc). HTTP/1.0, so the server closes; Content-Length checks completeness.
http_get() {
  printf 'GET %s HTTP/1.0\r\nHost: %s\r\n\r\n' "$1" "$LISTEN" |
    timeout 5 nc "${LISTEN%:*}" "${LISTEN#*:}" > /tmp/http.raw 2>/dev/null
  head -1 /tmp/http.raw | grep -q '^HTTP/1\.[01] 200' || return 1
  len=$(awk 'tolower($0) ~ /^content-length:/ { sub(/\r$/, ""); print $2; exit } /^\r?$/ { exit }' /tmp/http.raw)
  awk 'b { print; next } /^\r?$/ { b = 1 }' /tmp/http.raw > "$2"
  [ -z "$len" ] || [ "$(wc -c < "$2")" -eq "$len" ]
}
scrape() { http_get /metrics $M.tmp && mv $M.tmp $M; }
# mval FAMILY 'k=v|k=v...': value of the first sample of FAMILY whose labels include all k="v"
# (empty when there is none). Label values may contain spaces, hence the | separator.
mval() {
  awk -v fam="$1" -v want="$2" '
    BEGIN { n = (want == "") ? 0 : split(want, w, "|") }
    /^#/ { next }
    {
      p = index($0, "{")
      if (p > 0) { name = substr($0, 1, p - 1); q = index($0, "} ")
                   labels = "," substr($0, p + 1, q - p - 1) ","; val = substr($0, q + 2) }
      else { sp = index($0, " "); name = substr($0, 1, sp - 1); labels = ""; val = substr($0, sp + 1) }
      if (name != fam) next
      for (i = 1; i <= n; i++) {
        e = index(w[i], "="); k = substr(w[i], 1, e - 1); v = substr(w[i], e + 1)
        if (index(labels, "," k "=\"" v "\",") == 0) next
      }
      sub(/ .*/, "", val); print val; exit
    }' $M
}
# mlabels FAMILY DEVICE KEY...: one line per sample of FAMILY with device=DEVICE, the values of
# the KEYs joined by "|"
mlabels() {
  fam=$1; dev=$2; shift 2
  awk -v fam="$fam" -v dev="$dev" -v keys="$*" '
    BEGIN { nk = split(keys, K, " ") }
    /^#/ { next }
    {
      p = index($0, "{"); if (p == 0 || substr($0, 1, p - 1) != fam) next
      q = index($0, "} "); l = substr($0, p + 1, q - p - 1)
      delete L
      while (match(l, /^[a-zA-Z_]+="([^"\\]|\\.)*"/)) {
        kv = substr(l, 1, RLENGTH); e = index(kv, "=")
        L[substr(kv, 1, e - 1)] = substr(kv, e + 2, length(kv) - e - 2)
        l = substr(l, RLENGTH + 1); sub(/^,/, "", l)
      }
      if (L["device"] != dev) next
      s = ""; for (i = 1; i <= nk; i++) s = s (i > 1 ? "|" : "") L[K[i]]
      print s
    }' $M
}
has_family() { grep -q "^$1[{ ]" $M; }
# series_of DEVICE: sorted family names that have a sample with device="DEVICE"
series_of() { grep "device=\"$1\"" $M | sed 's/{.*//' | sort -u; }
# wait_until TIMEOUT_CS CMD...: scrape until CMD succeeds; returns 1 on timeout
wait_until() {
  deadline=$(( $(up_cs) + $1 )); shift
  while :; do
    scrape && "$@" && return 0
    [ "$(up_cs)" -ge "$deadline" ] && return 1
    sleep 0.1
  done
}
sysnum() { read -r v < "$1"; echo "${v%%:*}"; }   # "4: ACTIVE" -> 4
hw() { read -r v < $IB/$1/ports/1/hw_counters/$2; echo "$v"; }
hw_metric_eq() { num_eq "$(mval rdma_hw_$2_total "device=$1|port=1")" "$(hw $1 $2)"; }
# all_hw_eq DEVICE: every hw_counters file (lifespan aside) equals rdma_hw_<name>_total
all_hw_eq() {
  for f in $IB/$1/ports/1/hw_counters/*; do
    n=${f##*/}; [ "$n" = lifespan ] && continue
    hw_metric_eq $1 $n || { HWDIFF="$n: metric '$(mval rdma_hw_${n}_total "device=$1|port=1")' sysfs '$(hw $1 $n)'"; return 1; }
  done
}
# rstat DEVICE NAME: the counter NAME of `rdma statistic show link DEVICE/1` (netlink STAT_GET)
rstat() { rdma statistic show link $1/1 | tr ' ' '\n' | awk -v n="$2" 'p { print; exit } $0 == n { p = 1 }'; }
# all_stat_eq DEVICE: every counter `rdma statistic` shows equals rdma_hw_<name>_total
all_stat_eq() {
  set -- $1 $(rdma statistic show link $1/1)
  d=$1; shift 3   # DEVICE "link" "DEVICE/1"
  [ $# -ge 2 ] || { HWDIFF="rdma statistic printed no counters"; return 1; }
  while [ $# -ge 2 ]; do
    num_eq "$(mval rdma_hw_$1_total "device=$d|port=1")" "$2" ||
      { HWDIFF="$1: metric '$(mval rdma_hw_$1_total "device=$d|port=1")' rdma statistic '$2'"; return 1; }
    shift 2
  done
}
# start_second_exporter PORT FLAGS...: a second exporter on 127.0.0.1:PORT (pid in PID2)
start_second_exporter() {
  port=$1; shift
  rdma_exporter --web.listen-address=127.0.0.1:$port "$@" > "$OUT/exporter-$port.log" 2>&1 &
  PID2=$!
  i=0; while [ $i -lt 300 ]; do
    at $port http_get /-/ready /tmp/ready2.txt && return 0
    sleep 0.1; i=$((i+1))
  done
  return 1
}
stop_second_exporter() { kill -TERM $PID2; wait $PID2; }
# at PORT CMD...: run CMD (http_get, scrape) against 127.0.0.1:PORT instead of $LISTEN
at() { saved=$LISTEN; LISTEN=127.0.0.1:$1; shift; "$@"; r=$?; LISTEN=$saved; return $r; }
# gid index of the IPv4-mapped RoCE v2 GID of DEVICE
ipv4_gid_index() {
  for g in $IB/$1/ports/1/gids/*; do
    read -r v < $g
    case "$v" in 0000:0000:0000:0000:0000:ffff:*)
      i=${g##*/}
      IFS= read -r t < $IB/$1/ports/1/gid_attrs/types/$i 2>/dev/null && [ "$t" = "RoCE v2" ] && { echo $i; return; };;
    esac
  done
}
# rdma link (netlink) attribute of DEVICE: rdma -j prints one line of JSON
rdma_link() { rdma -j link show $1/1 | sed -n "s/.*\"$2\":\"\([^\"]*\)\".*/\1/p"; }
# rdma resource count (netlink) of DEVICE and TYPE
# (from the snapshot rdma_res_snap took)
rdma_res_snap() { rdma -j resource show | sed 's/},{/}\n{/g' > /tmp/rdma-res; }
rdma_res() { grep "\"ifname\":\"$1\"" /tmp/rdma-res | sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p"; }
# ibv_devinfo -v field of DEVICE: first value after "FIELD:" (e.g. "PORT_ACTIVE (4)")
# (one ibv_devinfo run per device and phase: forks cost ~10 ms each under TCG; devinfo_reset drops it)
devinfo() {
  [ -s /tmp/devinfo-$1 ] || ibv_devinfo -v -d $1 > /tmp/devinfo-$1 2>&1
  sed -n "s/^[[:space:]]*$2:[[:space:]]*//p" /tmp/devinfo-$1 | head -1
}
devinfo_reset() { rm -f /tmp/devinfo-*; }
paren_num() { echo "$1" | sed -n 's/.*(\([0-9]*\)).*/\1/p'; }   # "PORT_ACTIVE (4)" -> 4

# ------------------------------------------------------------------------------ start ----
stage exporter-start
rdma_exporter --web.listen-address=$LISTEN --poll-interval=${POLL_MS}ms > "$OUT/exporter.log" 2>&1 &
PID=$!
t0=$(up_cs); ready=0
while [ $(( $(up_cs) - t0 )) -lt 3000 ]; do
  kill -0 $PID 2>/dev/null || break
  http_get /-/ready /tmp/ready.txt && { ready=1; break; }
  sleep 0.1
done
if [ $ready = 1 ]; then
  ok "exporter ready on $LISTEN with --poll-interval=${POLL_MS}ms, $(( $(up_cs) - t0 ))0 ms after start"
else
  notok "exporter ready on $LISTEN: not ready after 30 s; log: $(tail -3 "$OUT/exporter.log" | tr '\n' ' ')"
  exit 1
fi
stage exporter-ready
scrape; cp $M "$OUT/metrics-start.prom"

# ---------------------------------------------------------------------- static state ----
for d in rxe0 rxe1; do
  case $d in rxe0) nd=eth0;; rxe1) nd=eth1;; esac
  guid=$(cat $IB/$d/node_guid); sguid=$(cat $IB/$d/sys_image_guid)
  expect "$d: sysfs node_guid equals ibv_devinfo node_guid" "$guid" "$(devinfo $d node_guid)"
  expect_num "$d: rdma_device_info{node_guid,sys_image_guid,node_type=CA} = 1 (sysfs)" \
    "$(mval rdma_device_info "device=$d|node_guid=$guid|sys_image_guid=$sguid|node_type=CA")" 1
  ll=$(cat $IB/$d/ports/1/link_layer)
  expect "$d: link layer Ethernet in sysfs and ibv_devinfo" "$ll/$(devinfo $d link_layer)" "Ethernet/Ethernet"
  expect "$d: netdev $nd in sysfs parent and rdma link" "$(cat $IB/$d/parent)/$(rdma_link $d netdev)" "$nd/$nd"
  expect_num "$d: rdma_port_info{link_layer=\"Ethernet\",netdev=\"$nd\"} = 1" \
    "$(mval rdma_port_info "device=$d|port=1|link_layer=Ethernet|netdev=$nd")" 1
  st=$(sysnum $IB/$d/ports/1/state)
  expect "$d: state 4 in sysfs, ibv_devinfo; ACTIVE in rdma link" \
    "$st/$(paren_num "$(devinfo $d state)")/$(rdma_link $d state)" "4/4/ACTIVE"
  expect_num "$d: rdma_port_state = sysfs state ($st)" "$(mval rdma_port_state "device=$d|port=1")" "$st"
  ps=$(sysnum $IB/$d/ports/1/phys_state)
  expect "$d: physical state 5 in sysfs, ibv_devinfo; LINK_UP in rdma link" \
    "$ps/$(paren_num "$(devinfo $d phys_state)")/$(rdma_link $d physical_state)" "5/5/LINK_UP"
  expect_num "$d: rdma_port_physical_state = sysfs phys_state ($ps)" \
    "$(mval rdma_port_physical_state "device=$d|port=1")" "$ps"
  expect_num "$d: rdma_port_up = 1" "$(mval rdma_port_up "device=$d|port=1")" 1

  # GID table: every non-empty entry (show_gids rules: zero GID and bare fe80:: skipped)
  for g in $IB/$d/ports/1/gids/*; do
    read -r v < $g
    case "$v" in 0000:0000:0000:0000:0000:0000:0000:0000|fe80:0000:0000:0000:0000:0000:0000:0000) continue;; esac
    i=${g##*/}
    IFS= read -r t < $IB/$d/ports/1/gid_attrs/types/$i 2>/dev/null || t=""
    IFS= read -r n < $IB/$d/ports/1/gid_attrs/ndevs/$i 2>/dev/null || n=""
    echo "$i|$v|$t|$n"
  done | sort > /tmp/gids-sysfs-$d
  mlabels rdma_gid_info $d index gid gid_type netdev | sort > /tmp/gids-metric-$d
  if [ -s /tmp/gids-sysfs-$d ] && cmp -s /tmp/gids-sysfs-$d /tmp/gids-metric-$d; then
    ok "$d: rdma_gid_info = the $(wc -l < /tmp/gids-sysfs-$d) non-empty sysfs GIDs with types and ndevs"
  else
    notok "$d: rdma_gid_info = the non-empty sysfs GIDs: sysfs [$(tr '\n' ' ' < /tmp/gids-sysfs-$d)] metrics [$(tr '\n' ' ' < /tmp/gids-metric-$d)]"
  fi
  grep -q "|RoCE v2|$nd\$" /tmp/gids-sysfs-$d && ! grep -qv "|RoCE v2|" /tmp/gids-sysfs-$d &&
    ok "$d: every GID is RoCE v2 on $nd" || notok "$d: every GID is RoCE v2 on $nd: $(tr '\n' ' ' < /tmp/gids-sysfs-$d)"

  if wait_until 300 all_hw_eq $d; then
    ok "$d: every rdma_hw_<name>_total equals its sysfs hw_counters file at rest"
  else
    notok "$d: rdma_hw_<name>_total equal sysfs hw_counters at rest: $HWDIFF"
  fi
  if wait_until 300 all_stat_eq $d; then
    ok "$d: every counter of rdma statistic show link $d/1 equals its rdma_hw_<name>_total at rest"
  else
    notok "$d: rdma statistic = rdma_hw_<name>_total at rest: $HWDIFF"
  fi
done
# The default source (auto) reads every port through RDMA netlink STAT_GET on this kernel.
expect "hw counter source auto on a real kernel: rdma_exporter_hw_counters_ports{source=netlink/sysfs} = 2/0" \
  "$(mval rdma_exporter_hw_counters_ports "source=netlink")/$(mval rdma_exporter_hw_counters_ports "source=sysfs")" "2/0"

# ---------------------------------------------------------------- traffic: counters ----
# ibv_rc_pingpong -n 100 on rxe1: server and client on the same device (rxe loopback over its
# IPv4 RoCE v2 GID), so rxe1 counts the client's 100 sends and the server's 100 sends.
stage traffic-start
G1=$(ipv4_gid_index rxe1); G0=$(ipv4_gid_index rxe0)
s_sends=$(hw rxe1 rdma_sends); s_recvs=$(hw rxe1 rdma_recvs); s_pkts=$(hw rxe1 sent_pkts)
s0_sends=$(hw rxe0 rdma_sends)
scrape
m_sends=$(mval rdma_hw_rdma_sends_total "device=rxe1|port=1"); m_recvs=$(mval rdma_hw_rdma_recvs_total "device=rxe1|port=1")
m_pkts=$(mval rdma_hw_sent_pkts_total "device=rxe1|port=1"); m0_sends=$(mval rdma_hw_rdma_sends_total "device=rxe0|port=1")
timeout 60 ibv_rc_pingpong -d rxe1 -g "$G1" -n 100 -p 18515 > /tmp/pp-server.txt 2>&1 &
SRV=$!
sleep 0.5
timeout 60 ibv_rc_pingpong -d rxe1 -g "$G1" -n 100 -p 18515 10.0.3.15 > /tmp/pp-client.txt 2>&1; crc=$?
wait $SRV; src=$?
cp /tmp/pp-client.txt "$OUT/rc_pingpong-client.txt"; cp /tmp/pp-server.txt "$OUT/rc_pingpong-server.txt"
citers=$(sed -n 's/^\([0-9]*\) iters in.*/\1/p' /tmp/pp-client.txt)
siters=$(sed -n 's/^\([0-9]*\) iters in.*/\1/p' /tmp/pp-server.txt)
expect "ibv_rc_pingpong -n 100 on rxe1 (gid $G1): client and server exit 0 and report 100 iters" \
  "$crc/$src/$citers/$siters" "0/0/100/100"
sends=$(( ${citers:-0} + ${siters:-0} ))
d_sends=$(( $(hw rxe1 rdma_sends) - s_sends )); d_recvs=$(( $(hw rxe1 rdma_recvs) - s_recvs ))
d_pkts=$(( $(hw rxe1 sent_pkts) - s_pkts ))
expect "rxe1 sysfs rdma_sends delta = sends reported by pingpong (client + server)" "$d_sends" "$sends"
wait_until 300 hw_metric_eq rxe1 rdma_sends
expect_num "rxe1 rdma_hw_rdma_sends_total rises by $sends (reported sends, = sysfs delta)" \
  "$(awk -v a="$(mval rdma_hw_rdma_sends_total "device=rxe1|port=1")" -v b="$m_sends" 'BEGIN{print a-b}')" "$sends"
wait_until 300 hw_metric_eq rxe1 rdma_recvs
expect_num "rxe1 rdma_hw_rdma_recvs_total rises by the sysfs delta ($d_recvs)" \
  "$(awk -v a="$(mval rdma_hw_rdma_recvs_total "device=rxe1|port=1")" -v b="$m_recvs" 'BEGIN{print a-b}')" "$d_recvs"
wait_until 300 hw_metric_eq rxe1 sent_pkts
expect_num "rxe1 rdma_hw_sent_pkts_total rises by the sysfs delta ($d_pkts)" \
  "$(awk -v a="$(mval rdma_hw_sent_pkts_total "device=rxe1|port=1")" -v b="$m_pkts" 'BEGIN{print a-b}')" "$d_pkts"
expect "rxe0 rdma_hw_rdma_sends_total unchanged by the rxe1 pingpong (sysfs delta too)" \
  "$(awk -v a="$(mval rdma_hw_rdma_sends_total "device=rxe0|port=1")" -v b="$m0_sends" 'BEGIN{print a-b}')/$(( $(hw rxe0 rdma_sends) - s0_sends ))" "0/0"

# ib_write_bw on rxe0: RDMA WRITEs move sent_pkts/rcvd_pkts but not rdma_sends.
s_pkts=$(hw rxe0 sent_pkts); s_rpkts=$(hw rxe0 rcvd_pkts); s_sends=$(hw rxe0 rdma_sends)
m_pkts=$(mval rdma_hw_sent_pkts_total "device=rxe0|port=1"); m_rpkts=$(mval rdma_hw_rcvd_pkts_total "device=rxe0|port=1")
m_sends=$(mval rdma_hw_rdma_sends_total "device=rxe0|port=1")
# -F: no CPU-frequency check (TCG). One retry: under a loaded host, perftest has been seen to
# exit 1 after the transfer without printing a result line (client output kept in $OUT).
write_bw() {   # ATTEMPT
  timeout 60 ib_write_bw -F -d rxe0 -x "$G0" -s 65536 -n 200 -p $((18516 + $1)) > /tmp/wb-server.txt 2>&1 &
  SRV=$!
  sleep 1
  timeout 60 ib_write_bw -F -d rxe0 -x "$G0" -s 65536 -n 200 -p $((18516 + $1)) 10.0.2.15 > /tmp/wb-client.txt 2>&1; crc=$?
  wait $SRV; src=$?
  cp /tmp/wb-client.txt "$OUT/ib_write_bw-client-$1.txt"; cp /tmp/wb-server.txt "$OUT/ib_write_bw-server-$1.txt"
  [ $crc = 0 ] && [ $src = 0 ]
}
if write_bw 1; then
  ok "ib_write_bw -s 65536 -n 200 on rxe0: client and server exit 0"
elif write_bw 2; then
  ok "ib_write_bw -s 65536 -n 200 on rxe0: client and server exit 0 (FLAKY: second attempt; first in ib_write_bw-*-1.txt)"
else
  notok "ib_write_bw -s 65536 -n 200 on rxe0: client and server exit 0: got '$crc/$src' twice; tail: $(tail -2 /tmp/wb-client.txt | tr '\n' ' ')"
fi
d_pkts=$(( $(hw rxe0 sent_pkts) - s_pkts )); d_rpkts=$(( $(hw rxe0 rcvd_pkts) - s_rpkts ))
# 200 x 64 KiB at MTU 1024 = 12800 WRITE packets at least
[ $d_pkts -ge 12800 ] && ok "rxe0 sysfs sent_pkts rose by >= 12800 under ib_write_bw ($d_pkts)" ||
  notok "rxe0 sysfs sent_pkts rose by >= 12800 under ib_write_bw: $d_pkts"
wait_until 300 all_hw_eq rxe0
expect_num "rxe0 rdma_hw_sent_pkts_total rises by the sysfs delta ($d_pkts)" \
  "$(awk -v a="$(mval rdma_hw_sent_pkts_total "device=rxe0|port=1")" -v b="$m_pkts" 'BEGIN{print a-b}')" "$d_pkts"
expect_num "rxe0 rdma_hw_rcvd_pkts_total rises by the sysfs delta ($d_rpkts)" \
  "$(awk -v a="$(mval rdma_hw_rcvd_pkts_total "device=rxe0|port=1")" -v b="$m_rpkts" 'BEGIN{print a-b}')" "$d_rpkts"
expect "rxe0 rdma_hw_rdma_sends_total unchanged by RDMA WRITEs (sysfs delta too)" \
  "$(awk -v a="$(mval rdma_hw_rdma_sends_total "device=rxe0|port=1")" -v b="$m_sends" 'BEGIN{print a-b}')/$(( $(hw rxe0 rdma_sends) - s_sends ))" "0/0"
for d in rxe0 rxe1; do
  wait_until 300 all_hw_eq $d && ok "$d: every rdma_hw_<name>_total equals sysfs after traffic" ||
    notok "$d: every rdma_hw_<name>_total equals sysfs after traffic: $HWDIFF"
done
stage traffic-done

# ------------------------------------------------------------- hw counter sources ----
# STAT_GET while traffic runs: a second exporter that collects on each scrape
# (--poll-interval=0) with --collector.hw_counters.source=netlink; `rdma statistic` read just
# before and just after the scrape must bracket the exported value, and traffic must be moving.
stage hw-sources
if start_second_exporter 9880 --poll-interval=0 --collector.hw_counters.source=netlink; then
  timeout 60 ibv_rc_pingpong -d rxe1 -g "$G1" -n 20000 -p 18520 > /tmp/pp2-server.txt 2>&1 &
  SRV2=$!
  sleep 0.5
  timeout 60 ibv_rc_pingpong -d rxe1 -g "$G1" -n 20000 -p 18520 10.0.3.15 > /tmp/pp2-client.txt 2>&1 &
  CLI2=$!
  bracketed=""; tries=0
  while [ -z "$bracketed" ] && [ $tries -lt 100 ] && kill -0 $CLI2 2>/dev/null; do
    tries=$((tries+1))
    a=$(rstat rxe1 sent_pkts)
    at 9880 scrape || continue
    b=$(rstat rxe1 sent_pkts); m=$(mval rdma_hw_sent_pkts_total "device=rxe1|port=1")
    [ -n "$a" ] && [ -n "$b" ] && [ "$b" -gt "$a" ] &&
      awk -v a="$a" -v m="$m" -v b="$b" 'BEGIN{exit !(m+0 >= a+0 && m+0 <= b+0)}' && bracketed="$a <= $m <= $b"
  done
  kill $CLI2 $SRV2 2>/dev/null; wait $CLI2 2>/dev/null; wait $SRV2 2>/dev/null
  if [ -n "$bracketed" ]; then
    ok "source=netlink during pingpong traffic: rdma statistic before <= rdma_hw_sent_pkts_total{rxe1} <= after, traffic moving ($bracketed, attempt $tries)"
  else
    notok "source=netlink during traffic: no scrape bracketed by two rising rdma statistic reads in $tries attempts (last: '$a' '$m' '$b')"
  fi
  expect "source=netlink: rdma_exporter_hw_counters_ports{source=netlink/sysfs} = 2/0" \
    "$(mval rdma_exporter_hw_counters_ports "source=netlink")/$(mval rdma_exporter_hw_counters_ports "source=sysfs")" "2/0"
  stop_second_exporter
else
  notok "second exporter (source=netlink) ready on 127.0.0.1:9880: $(tail -2 "$OUT/exporter-9880.log" | tr '\n' ' ')"
fi
# The sysfs path on the same kernel: the files, read rx_write_requests-first, plus lifespan.
if start_second_exporter 9881 --poll-interval=0 --collector.hw_counters.source=sysfs; then
  at 9881 scrape
  for d in rxe0 rxe1; do
    all_hw_eq $d && ok "source=sysfs: $d every rdma_hw_<name>_total equals its hw_counters file at rest" ||
      notok "source=sysfs: $d rdma_hw_<name>_total = hw_counters files: $HWDIFF"
    ls=$(hw $d lifespan)
    expect_num "source=sysfs: $d rdma_hw_counters_lifespan_seconds = hw_counters/lifespan ms / 1000" \
      "$(mval rdma_hw_counters_lifespan_seconds "device=$d|port=1")" "$(awk -v v="$ls" 'BEGIN{print v/1000}')"
  done
  expect "source=sysfs: rdma_exporter_hw_counters_ports{source=netlink/sysfs} = 0/2" \
    "$(mval rdma_exporter_hw_counters_ports "source=netlink")/$(mval rdma_exporter_hw_counters_ports "source=sysfs")" "0/2"
  stop_second_exporter
else
  notok "second exporter (source=sysfs) ready on 127.0.0.1:9881: $(tail -2 "$OUT/exporter-9881.log" | tr '\n' ' ')"
fi
# ------------------------------------------------------------------ link peers on rxe ----
# Soft-RoCE ports are RoCE: no SMI, so --collector.ib_peer sends no SMP and no PMA query to them
# even with umad devices present (ib_umad is loaded), and no switch sends LLDP on the guest's
# links. Over ten slow-tier polls: both collectors succeed, no peer and no read error, and the
# log has no line per poll (no error storm).
stage link-peer
if [ -e /sys/class/infiniband_mad/umad0 ]; then
  ok "ib_umad: rxe has umad devices ($(ls /sys/class/infiniband_mad | grep -c umad))"
else
  notok "ib_umad: no /sys/class/infiniband_mad/umad0 (module ib_umad not loaded?)"
fi
if start_second_exporter 9882 --collector.ib_peer --collector.lldp --poll-interval=200ms \
    --poll-interval.slow=200ms; then
  sleep 2
  at 9882 scrape
  expect "link peer on rxe: collector_success{ib_peer}/{lldp} = 1/1" \
    "$(mval rdma_exporter_collector_success "collector=ib_peer")/$(mval rdma_exporter_collector_success "collector=lldp")" "1/1"
  expect "link peer on rxe: no rdma_port_peer_info series" "$(grep -c '^rdma_port_peer_info{' $M)" "0"
  expect "link peer on rxe: no ib_peer or lldp read errors" \
    "$(grep -E '^rdma_exporter_read_errors_total\{collector="(ib_peer|lldp)"' $M | grep -vc ' 0$')" "0"
  lines=$(grep -ciE 'umad|smp|lldp|neighbour' "$OUT/exporter-9882.log")
  [ "$lines" -le 2 ] && ok "link peer on rxe: $lines log lines about umad/SMP/LLDP in 10 polls (no storm)" ||
    notok "link peer on rxe: $lines log lines about umad/SMP/LLDP in 10 polls: $(grep -iE 'umad|smp|lldp' "$OUT/exporter-9882.log" | head -3 | tr '\n' ' ')"
  stop_second_exporter
else
  notok "second exporter (link peers) ready on 127.0.0.1:9882: $(tail -2 "$OUT/exporter-9882.log" | tr '\n' ' ')"
fi
scrape

# ============================================================================================
# ==== NEW COLLECTORS (verbs, rdma_netlink) ==================================================
# Assertions for collectors being added in parallel. A family that is absent from /metrics
# fails with "family ... absent" (the collector is not in the exporter under test).
# ============================================================================================
need_family() {
  has_family "$1" && return 0
  notok "$2: family $1 absent from /metrics (collector not in this build of rdma_exporter?)"
  return 1
}
scrape
for d in rxe0 rxe1; do
  amtu=$(devinfo $d active_mtu); amtu=${amtu%% *}      # "1024 (3)" -> 1024
  mmtu=$(devinfo $d max_mtu); mmtu=${mmtu%% *}
  need_family rdma_port_active_mtu_bytes "verbs: $d rdma_port_active_mtu_bytes" &&
    expect_num "verbs: $d rdma_port_active_mtu_bytes = 1024 = ibv_devinfo active_mtu ($amtu)" \
      "$(mval rdma_port_active_mtu_bytes "device=$d|port=1")/$amtu" "1024/1024"
  need_family rdma_port_max_mtu_bytes "verbs: $d rdma_port_max_mtu_bytes" &&
    expect "verbs: $d rdma_port_max_mtu_bytes = 4096 = ibv_devinfo max_mtu ($mmtu)" \
      "$(mval rdma_port_max_mtu_bytes "device=$d|port=1" | awk '{print $1+0}')/$mmtu" "4096/4096"
  mq=$(devinfo $d max_qp)
  need_family rdma_device_max_qps "verbs: $d rdma_device_max_qps" &&
    expect_num "verbs: $d rdma_device_max_qps = ibv_devinfo max_qp ($mq)" "$(mval rdma_device_max_qps "device=$d")" "$mq"
done

# rdma_resources while an ibv_rc_pingpong server (1 ctx, pd, mr, cq, qp) waits on rxe0
timeout 60 ibv_rc_pingpong -d rxe0 -g "$G0" -p 18517 > /tmp/pp-idle.txt 2>&1 &
IDLE=$!
i=0; while [ $i -lt 50 ] && rdma_res_snap && [ "$(rdma_res rxe0 ctx)" = 0 ]; do sleep 0.1; i=$((i+1)); done
res_eq() {
  rdma_res_snap
  for d in rxe0 rxe1; do
    for t in qp cq mr pd cm_id ctx srq; do
      num_eq "$(mval rdma_resources "device=$d|type=$t")" "$(rdma_res $d $t)" ||
        { RESDIFF="$d $t: metric '$(mval rdma_resources "device=$d|type=$t")' rdma res '$(rdma_res $d $t)'"; return 1; }
    done
  done
}
if need_family rdma_resources "rdma_netlink: rdma_resources"; then
  if wait_until 300 res_eq; then
    ok "rdma_netlink: rdma_resources{type=qp|cq|mr|pd|cm_id|ctx|srq} = rdma res show for rxe0, rxe1 (pingpong server up: rxe0 $(rdma resource show rxe0 | sed 's/.*rxe0: //'))"
  else
    notok "rdma_netlink: rdma_resources = rdma res show while a pingpong server runs: $RESDIFF"
  fi
  num_eq "$(mval rdma_resources "device=rxe0|type=ctx")" 1 && ok "rdma_netlink: rxe0 ctx = 1 while the pingpong server runs" ||
    notok "rdma_netlink: rxe0 ctx = 1 while the pingpong server runs: got '$(mval rdma_resources "device=rxe0|type=ctx")', rdma res '$(rdma_res rxe0 ctx)'"
fi
cp $M "$OUT/metrics-resources.prom"
kill $IDLE 2>/dev/null; wait $IDLE 2>/dev/null
if has_family rdma_resources; then
  wait_until 300 res_eq && ok "rdma_netlink: rdma_resources = rdma res show after the server exits (ctx 0)" ||
    notok "rdma_netlink: rdma_resources = rdma res show after the server exits: $RESDIFF"
fi

# pod_qps: a pingpong server placed in a cgroup named as the kubelet's systemd driver names a
# pod's container; its QP is counted under that pod's UID (rdma resource show qp names its pid).
# A second exporter with --poll-interval.slow=0 (pod_qps is slow-tier).
POD_UID=5f2c8f4a-1b2c-4d5e-8f90-123456789abc
CG=/sys/fs/cgroup
grep -q " $CG cgroup2 " /proc/mounts || mount -t cgroup2 none $CG
POD_CG=$CG/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod$(echo $POD_UID | tr - _).slice/cri-containerd-vmtest.scope
mkdir -p "$POD_CG"
sh -c "echo \$\$ > $POD_CG/cgroup.procs && exec ibv_rc_pingpong -d rxe0 -g $G0 -p 18519" > /tmp/pp-pod.txt 2>&1 &
PODPP=$!
i=0; while [ $i -lt 50 ] && ! rdma resource show qp link rxe0/1 2>/dev/null | grep -q "pid $PODPP "; do sleep 0.1; i=$((i+1)); done
pod_qps_is() { at 9881 scrape && num_eq "$(mval rdma_pod_qps "device=rxe0|port=1|pod_uid=$POD_UID")" "$1"; }
if start_second_exporter 9881 --poll-interval=${POLL_MS}ms --poll-interval.slow=0; then
  if wait_until 300 pod_qps_is 1; then
    ok "pod_qps: rdma_pod_qps{device=rxe0,port=1,pod_uid=$POD_UID} = 1 for a pingpong server in that pod's cgroup ($(rdma resource show qp link rxe0/1 | grep -c "pid $PODPP ") QP in rdma resource show)"
  else
    notok "pod_qps: pingpong server in the pod cgroup: got '$(mval rdma_pod_qps "device=rxe0|port=1|pod_uid=$POD_UID")'; rdma res qp: $(rdma resource show qp link rxe0/1 | tr '\n' ' '); cgroup: $(cat /proc/$PODPP/cgroup 2>&1)"
  fi
  n_other=$(grep -c '^rdma_pod_qps{' $M)
  expect "pod_qps: no other pod UID (the exporter and the other pingpongs are in no pod)" "$n_other" 1
  cp $M "$OUT/metrics-pod-qps.prom"
  kill $PODPP 2>/dev/null; wait $PODPP 2>/dev/null
  pod_qps_gone() { at 9881 scrape && [ -z "$(mval rdma_pod_qps "pod_uid=$POD_UID")" ]; }
  wait_until 300 pod_qps_gone && ok "pod_qps: the series goes when the pod's process exits" ||
    notok "pod_qps: series still there after the process exited: $(grep '^rdma_pod_qps' $M)"
  stop_second_exporter
else
  notok "pod_qps: second exporter with --poll-interval.slow=0 did not become ready"
  kill $PODPP 2>/dev/null; wait $PODPP 2>/dev/null
fi
# ==== END NEW COLLECTORS ====================================================================

# ------------------------------------------------------------------------ link down/up ----
# "Within one poll": the first poll that STARTED after the change must show it. Polls run back to
# back, so once last_poll_timestamp has changed twice since the change, the poll that finished
# second began after it. (Under TCG a poll of two rxe devices takes ~0.4 s, longer than the
# 300 ms interval, so a wall-clock limit would measure the machine, not the exporter.)
port_up_is() { num_eq "$(mval rdma_port_up "device=rxe1|port=1")" "$1"; }
last_poll() { mval rdma_exporter_last_poll_timestamp_seconds ""; }
within_one_poll() {   # WHAT PREDICATE...
  what=$1; shift; t0=$(up_cs); first=""; polls=0
  scrape; ta=$(last_poll); tb=""
  while [ $(( $(up_cs) - t0 )) -lt 1000 ]; do
    if scrape; then
      [ -z "$first" ] && "$@" && first=$(( $(up_cs) - t0 ))
      t=$(last_poll)
      if [ -z "$tb" ]; then
        [ "$t" != "$ta" ] && tb=$t
      elif [ "$t" != "$tb" ]; then
        if "$@"; then ok "$what within one poll (seen after ${first}0 ms; poll interval ${POLL_MS} ms, last poll took $(mval rdma_exporter_poll_duration_seconds "") s)"
        else notok "$what within one poll: the first poll that started after the change did not show it (port_up '$(mval rdma_port_up "device=rxe1|port=1")', sysfs '$(cat $IB/rxe1/ports/1/state)')"; fi
        return
      fi
    fi
    sleep 0.05
  done
  notok "$what within one poll: the exporter did not complete two polls in 10 s (last_poll_timestamp '$(last_poll)')"
}
stage link-flap
ip link set eth1 down
within_one_poll "ip link set eth1 down: rdma_port_up{rxe1} = 0" port_up_is 0
st=$(sysnum $IB/rxe1/ports/1/state); ps=$(sysnum $IB/rxe1/ports/1/phys_state)
expect "eth1 down: rdma_port_state/physical_state{rxe1} = sysfs ($st/$ps), rdma link $(rdma_link rxe1 state)" \
  "$(mval rdma_port_state "device=rxe1|port=1")/$(mval rdma_port_physical_state "device=rxe1|port=1")" "$st/$ps"
expect_num "eth1 down: rdma_port_up{rxe0} stays 1" "$(mval rdma_port_up "device=rxe0|port=1")" 1
ip link set eth1 up
within_one_poll "ip link set eth1 up: rdma_port_up{rxe1} = 1" port_up_is 1

# ------------------------------------------------------------------ delete / re-add rxe1 ----
stage delete-readd
scrape; series_of rxe1 > /tmp/fam-before
n_before=$(grep -c 'device="rxe1"' $M)
no_rxe1() { ! grep -q 'device="rxe1"' $M; }
rxe1_back() { series_of rxe1 | cmp -s - /tmp/fam-before && port_up_is 1; }
rdma link delete rxe1
if wait_until 500 no_rxe1; then
  ok "rdma link delete rxe1: all $n_before series with device=\"rxe1\" disappear"
else
  notok "rdma link delete rxe1: series with device=\"rxe1\" disappear: still $(grep -c 'device="rxe1"' $M), e.g. $(grep -m1 'device="rxe1"' $M)"
fi
expect_num "rxe1 deleted: rdma_port_up{rxe0} still 1" "$(mval rdma_port_up "device=rxe0|port=1")" 1
rdma link add rxe1 type rxe netdev eth1
if wait_until 500 rxe1_back; then
  ok "rdma link add rxe1: the same $(wc -l < /tmp/fam-before) families with device=\"rxe1\" are back, rdma_port_up 1"
else
  notok "rdma link add rxe1: families back: missing [$(series_of rxe1 | comm -13 - /tmp/fam-before | tr '\n' ' ')] extra [$(series_of rxe1 | comm -23 - /tmp/fam-before | tr '\n' ' ')] port_up '$(mval rdma_port_up "device=rxe1|port=1")'"
fi
expect_num "rxe1 re-added: rdma_port_info{netdev=eth1} = 1" "$(mval rdma_port_info "device=rxe1|port=1|link_layer=Ethernet|netdev=eth1")" 1
pids=$(pidof rdma_exporter)
expect "exporter not restarted (same PID) across delete/re-add" "$pids" "$PID"
cp $M "$OUT/metrics.prom"

# ----------------------------------------------------------------------------- shutdown ----
if grep -q 'level=error' "$OUT/exporter.log"; then
  notok "exporter log has no level=error lines: $(grep -m2 'level=error' "$OUT/exporter.log" | tr '\n' ' ')"
else
  ok "exporter log has no level=error lines"
fi
kill -TERM $PID; wait $PID; rc=$?
expect "exporter exits 0 on SIGTERM" "$rc" 0
stage checks-done
