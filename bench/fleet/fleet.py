#!/usr/bin/env python3
"""Fleet-scale run of the shipped rules and dashboards against real Prometheus and Alertmanager.

N simulated nodes x R rails, each node its own scrape target (instance="node-000", ...), all
on 127.0.0.1. Two real rdma_fabric_sim + rdma_exporter pairs run the whole time: "healthy"
and "leaf" (the same fabric; its scenario file takes rail --fail-device down at the fault).
A replay server here serves every node from the latest exposition of one of the two exporters:
nodes [0, --fail-nodes) from "leaf", the rest from "healthy". Per node it rewrites the node
identity (node_guid, sys_image_guid, GIDs) and scales the traffic counters (bytes, packets)
by a fixed per-node factor in [0.8, 1.2], so nodes differ and every counter still moves at
the simulator's real per-second rates. Everything else (metric names, labels, values, what a
down port looks like) is the exporter's own output.

Why not one exporter per node: 256 simulators + 256 exporters on a 2-core machine took the
CPU from Prometheus (measured: Prometheus got 0.3 cores and rule groups missed iterations), so
the figures were the machine's, not Prometheus's. Two pairs cost a few percent of a core; the
replay server's CPU is reported next to Prometheus's.

Phases: start, wait until every target is up and the recording rules have data, --duration of
healthy fabric (no page may arrive), the leaf failure (port down on --fail-nodes nodes at
once), wait for the page, run every dashboard query (one node and all nodes), --settle more
seconds (no second page may arrive), report. Alertmanager routes every critical alert to a
"page" webhook, one notification per distinct alert (group_by: ['...']): no grouping merges
pages, so the page count is the number of distinct critical alerts that fired.

--check exits 1 when a target is down, a rule evaluation fails, a dashboard query fails or
has no data where the fleet has data, or the leaf failure gives anything but exactly one page.
"""
import argparse
import ctypes
import http.server
import json
import os
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CLUSTER = "fleet"
EXPECTED_PAGE = "RdmaPortsDownOnManyNodes"


def log(msg):
    print(f"fleet: {msg}", file=sys.stderr, flush=True)


def parse_duration(text):
    """Seconds of a Prometheus-style duration: 90, 90s, 5m, 1h, 500ms."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m|h)?", text)
    if not m:
        raise argparse.ArgumentTypeError(f"bad duration {text!r}")
    return float(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600, None: 1}[m.group(2)]


def prom_duration(seconds):
    return f"{int(seconds * 1000)}ms"


# --- processes ---------------------------------------------------------------------------

_libc = ctypes.CDLL(None, use_errno=True)


def _die_with_parent():
    # PR_SET_PDEATHSIG: a child gets SIGTERM when this process dies, even by SIGKILL (a CTest
    # timeout), so nothing is left running.
    _libc.prctl(1, signal.SIGTERM)


class Processes:
    """Every process this run starts; stopped by PID, newest first."""

    def __init__(self, workdir):
        self.workdir = workdir
        self.procs = []

    def start(self, name, argv):
        path = os.path.join(self.workdir, f"{name}.log")
        with open(path, "wb") as out:
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                 stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
        p.name, p.log = name, path
        self.procs.append(p)
        return p

    def stop(self, p):
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def stop_all(self):
        for p in reversed(self.procs):
            self.stop(p)

    @staticmethod
    def tail(p, n=20):
        with open(p.log, errors="replace") as f:
            return "".join(f.readlines()[-n:])


def free_port():
    # Probe: bind port 0, read the port, close. Prometheus and Alertmanager take a port as a
    # flag; a start that loses the race is retried with another port.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, timeout, check, interval=0.5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return True
        except (OSError, ValueError):
            pass
        time.sleep(interval)
    raise RuntimeError(f"timed out after {timeout:.0f}s waiting for {what}")


def http_get(url, timeout=30):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def proc_stats(pid):
    """CPU seconds (user+system), RSS and PSS bytes of a live process, from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    mem = {}
    for name in ("status", "smaps_rollup"):
        try:
            with open(f"/proc/{pid}/{name}") as f:
                for line in f:
                    k, _, v = line.partition(":")
                    if k in ("VmRSS", "Pss"):
                        mem[k] = int(v.split()[0]) * 1024
        except OSError:
            pass
    return {"cpu_seconds": cpu, "rss_bytes": mem.get("VmRSS", 0), "pss_bytes": mem.get("Pss", 0)}


# --- the real exporters and the replay server ---------------------------------------------


class ExporterPair:
    """rdma_fabric_sim (scenario switched through a file) + rdma_exporter on its tree."""

    def __init__(self, procs, name, args, seed):
        self.name = name
        root = os.path.join(procs.workdir, name)
        os.makedirs(root)
        self.scenario_file = os.path.join(root, "scenario")
        self.set_scenario("healthy")
        link = ["--link-layer", args.link_layer, "--vfs", "0", "--lag", "0", "--e810", "0"]
        self.sim = procs.start(f"{name}-sim", [
            args.sim, "--root", os.path.join(root, "fabric"), "--devices", str(args.rails), *link,
            "--interval", "1s", "--seed", str(seed), "--scenario-file", self.scenario_file])
        wait_for(f"{name} simulator", 30, lambda: "serving" in open(self.sim.log).read())
        self.exporter = procs.start(f"{name}-exporter", [
            args.exporter, "--web.listen-address=127.0.0.1:0",
            f"--path.sysfs={root}/fabric/sys", f"--path.fixtures={root}/fabric/fixtures",
            "--nccl.ib-tc=106", f"--poll-interval={prom_duration(args.poll_interval)}",
            "--collector.lldp", "--collector.ib_peer"])
        port = []

        def listening():
            if self.exporter.poll() is not None:
                raise RuntimeError(f"{name} exporter exited:\n{Processes.tail(self.exporter)}")
            m = re.search(r"msg=listening .*?port=(\d+)", open(self.exporter.log).read())
            if m:
                port.append(int(m.group(1)))
            return bool(m)

        wait_for(f"{name} exporter", 30, listening)
        self.url = f"http://127.0.0.1:{port[0]}/metrics"
        wait_for(f"{name} exporter ready", 30,
                 lambda: "rdma_port_up" in http_get(self.url))

    def set_scenario(self, line):
        tmp = self.scenario_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(line + "\n")
        os.rename(tmp, self.scenario_file)


class QuietServer(http.server.ThreadingHTTPServer):
    """Threaded, and silent about clients that close a kept-alive connection (Prometheus does)."""
    daemon_threads = True

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


# Counter families scaled per node: traffic only. Error and event counters stay as the
# exporter shows them (scaling a 16-bit saturated counter would move it off its maximum).
SCALED = re.compile(r"_bytes_total$|_packets(_received|_transmitted)?_total$")
NOT_SCALED = re.compile(r"ecn_marked|discard")
# Node identity in label values, as rdma_fabric_sim writes it: GUIDs b8ce:f603:00a1:DDPP,
# EUI-64 GIDs of the RoCE MACs bace:f6ff:fea1:DDPP, IPv4-mapped GIDs ffff:0aXX:YYZZ.
IDENTITY = ("f603:00a1:", "bace:f6ff:fea1:", ":ffff:0a")
IPV4_GID = re.compile(r"(:ffff:0a[0-9a-f]{2}):[0-9a-f]{4}")


def node_identity(line, i):
    line = line.replace("f603:00a1:", f"f603:{i:04x}:")
    line = line.replace("bace:f6ff:fea1:", f"bace:{0xf6 ^ ((i >> 8) & 0xff):02x}ff:fe{i & 0xff:02x}:")
    return IPV4_GID.sub(lambda m: f"{m.group(1)}:{(i + 1) & 0xffff:04x}", line)


class Template:
    """The latest exposition of one real exporter, re-read at most once a second and split
    into static text, identity lines and scaled counter samples."""

    def __init__(self, url):
        self.url = url
        self.lock = threading.Lock()
        self.fetched = 0.0
        self.parts = []

    def get(self):
        with self.lock:
            if time.monotonic() - self.fetched >= 1.0:
                self.parts = self.parse(http_get(self.url))
                self.fetched = time.monotonic()
            return self.parts

    @staticmethod
    def parse(text):
        parts, static, scaled = [], [], False

        def flush():
            if static:
                parts.append((0, "".join(static), None))
                static.clear()

        for line in text.splitlines(True):
            if line.startswith("#"):
                f = line.split()
                if len(f) >= 4 and f[1] == "TYPE":
                    scaled = (f[3] == "counter" and SCALED.search(f[2]) is not None
                              and not NOT_SCALED.search(f[2]))
                static.append(line)
            elif any(mark in line for mark in IDENTITY):
                flush()
                parts.append((1, line, None))
            elif scaled and line.strip():
                series, _, value = line.rstrip("\n").rpartition(" ")
                v = float(value)
                flush()
                parts.append((2 if v.is_integer() else 3, series, v))
            else:
                static.append(line)
        flush()
        return parts


def render(parts, i, scale):
    out = []
    for kind, text, v in parts:
        if kind == 0:
            out.append(text)
        elif kind == 1:
            out.append(node_identity(text, i))
        elif kind == 2:
            out.append(f"{text} {int(v * scale)}\n")
        else:
            out.append(f"{text} {v * scale!r}\n")
    return "".join(out).encode()


class ReplayServer:
    """GET /node/<i>/metrics: node i's exposition. One port for all nodes (Prometheus sets
    __metrics_path__ per target)."""

    def __init__(self, nodes, fail_nodes, healthy, leaf):
        self.templates = [leaf if i < fail_nodes else healthy for i in range(nodes)]
        self.scales = [random.Random(i).uniform(0.8, 1.2) for i in range(nodes)]
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                m = re.fullmatch(r"/node/(\d+)/metrics", self.path)
                if not m or int(m.group(1)) >= nodes:
                    self.send_error(404)
                    return
                i = int(m.group(1))
                body = render(server.templates[i].get(), i, server.scales[i])
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = QuietServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


class Webhook:
    """Alertmanager's webhook receiver: POST /page and /ticket, bodies kept with arrival time."""

    def __init__(self):
        self.lock = threading.Lock()
        self.received = []  # (monotonic time, receiver path, body)
        hook = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with hook.lock:
                    hook.received.append((time.monotonic(), self.path.strip("/"),
                                          json.loads(body)))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.httpd = QuietServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def pages(self, since=0.0):
        with self.lock:
            return [(t, b) for t, r, b in self.received
                    if r == "page" and b.get("status") == "firing" and t >= since]


# --- Prometheus --------------------------------------------------------------------------


class Prometheus:
    def __init__(self, port):
        self.base = f"http://127.0.0.1:{port}"

    def api(self, path, params, timeout=120):
        """POST form (as Grafana sends queries); the JSON answer, also for an HTTP error."""
        data = urllib.parse.urlencode(params, doseq=True).encode()
        try:
            with urllib.request.urlopen(self.base + path, data=data, timeout=timeout) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            return json.loads(e.read() or b'{"status":"error"}')

    def get(self, path, params, timeout=120):
        url = f"{self.base}{path}?{urllib.parse.urlencode(params, doseq=True)}"
        try:
            with urllib.request.urlopen(url, timeout=timeout) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            return json.loads(e.read() or b'{"status":"error"}')

    def value(self, expr, default=None):
        r = self.api("/api/v1/query", {"query": expr})
        res = r.get("data", {}).get("result", []) if r.get("status") == "success" else []
        return float(res[0]["value"][1]) if res else default

    def vector(self, expr):
        r = self.api("/api/v1/query", {"query": expr})
        return r.get("data", {}).get("result", []) if r.get("status") == "success" else []

    def self_metrics(self):
        """prometheus_* samples of Prometheus's own /metrics, keyed by the series text."""
        out = {}
        for line in http_get(self.base + "/metrics").splitlines():
            if line.startswith("prometheus_"):
                series, _, value = line.rpartition(" ")
                out[series] = float(value)
        return out


def group_of(series):
    m = re.search(r'rule_group="[^"]*;([^"]*)"', series)
    return m.group(1) if m else series


class Sampler:
    """Every few seconds: the rule groups' last evaluation time, head series, and the CPU and
    memory of every process of the run (Prometheus's own and what competed with it)."""

    def __init__(self, prom, procs, interval):
        self.prom, self.procs, self.interval = prom, procs, interval
        self.rule_durations = {}  # group -> [seconds]
        self.head_series = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stop.wait(self.interval):
            try:
                m = self.prom.self_metrics()
            except OSError:
                continue
            for series, v in m.items():
                if series.startswith("prometheus_rule_group_last_duration_seconds{"):
                    self.rule_durations.setdefault(group_of(series), []).append(v)
                elif series.startswith("prometheus_tsdb_head_series"):
                    self.head_series.append(v)

    def cpu_snapshot(self):
        snap = {p.name: proc_stats(p.pid) for p in self.procs.procs if p.poll() is None}
        snap["replay-server (this script)"] = proc_stats(os.getpid())
        return snap


# --- dashboards --------------------------------------------------------------------------


def dashboard_queries(path):
    """(kind, title, expr, instant) of every panel target, query variable and annotation."""
    d = json.load(open(path))

    def panels(ps):
        for p in ps:
            yield p
            yield from panels(p.get("panels", []))

    out = []
    for p in panels(d.get("panels", [])):
        for t in p.get("targets", []):
            if t.get("expr"):
                out.append(("panel", p.get("title", ""), t["expr"], bool(t.get("instant"))))
    for v in d.get("templating", {}).get("list", []):
        if v.get("type") == "query":
            q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
            out.append(("variable", v["name"], q, False))
    for a in d.get("annotations", {}).get("list", []):
        if a.get("expr"):
            out.append(("annotation", a.get("name", ""), a["expr"], False))
    node_all = any(v.get("name") == "node" and v.get("includeAll")
                   for v in d.get("templating", {}).get("list", []))
    return out, node_all


def substitute(expr, node, scrape, step, rng):
    # As Grafana does: $__rate_interval = max(4 x scrape interval, step + scrape interval).
    rate = max(4 * scrape, step + scrape)
    for var, value in (("$__rate_interval", prom_duration(rate)), ("$__interval", prom_duration(step)),
                       ("$__range", prom_duration(rng)), ("$cluster", CLUSTER), ("$node", node),
                       ("$device", ".*"), ("$namespace", ".*"), ("$pod", ".*")):
        expr = expr.replace(var, value)
    return expr


def run_dashboards(prom, dashboards_dir, scrape, one_node):
    """Every query of every dashboard, as Grafana sends it over the dashboards' default 1h:
    instant targets as /query, the others as /query_range (step: 1h / 1000 points, at least
    the scrape interval), variables as the label values API. One node and, where the node
    variable has "All", all nodes."""
    rng = 3600.0
    step = max(scrape, rng / 1000)
    results = []
    for name in sorted(os.listdir(dashboards_dir)):
        if not name.endswith(".json"):
            continue
        queries, node_all = dashboard_queries(os.path.join(dashboards_dir, name))
        modes = [("one node", one_node)] + ([("all nodes", ".*")] if node_all else [])
        for mode, node in modes:
            for kind, title, raw, instant in queries:
                end = time.time()
                expr = substitute(raw, node, scrape, step, rng)
                t0 = time.monotonic()
                if kind == "variable":
                    m = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", expr, re.S)
                    r = prom.get(f"/api/v1/label/{m.group(2)}/values",
                                 {"match[]": m.group(1), "start": end - rng, "end": end})
                    n = len(r.get("data") or [])
                elif instant:
                    r = prom.api("/api/v1/query", {"query": expr, "time": end})
                    n = len((r.get("data") or {}).get("result", []))
                else:
                    s = 60.0 if kind == "annotation" else step
                    r = prom.api("/api/v1/query_range", {"query": expr, "start": end - rng,
                                                         "end": end, "step": s})
                    n = len((r.get("data") or {}).get("result", []))
                results.append({
                    "dashboard": name, "mode": mode, "kind": kind, "title": title,
                    "expr": expr, "seconds": time.monotonic() - t0,
                    "status": r.get("status"), "error": r.get("error"), "series": n,
                    "unresolved_variable": "$" in expr})
    return results


# --- the run -----------------------------------------------------------------------------


def percentile(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(round(q * (len(v) - 1))))] if v else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=256)
    ap.add_argument("--rails", type=int, default=8, help="RDMA devices (one port each) per node")
    ap.add_argument("--link-layer", default="roce", choices=["roce", "ib", "mixed"],
                    help="of the simulated devices; mixed = even devices RoCE, odd InfiniBand "
                    "(the demo fabric): every dashboard panel has data, checked with --check")
    ap.add_argument("--fail-nodes", type=int, default=32,
                    help="nodes behind the failing leaf switch (their rail --fail-device goes down)")
    ap.add_argument("--fail-device", default="mlx5_3")
    ap.add_argument("--scrape-interval", type=parse_duration, default=15.0,
                    help="also the evaluation interval (the shipped scrape configs use 15s)")
    ap.add_argument("--poll-interval", type=parse_duration, default=10.0,
                    help="the exporters' --poll-interval (shipped: 10s)")
    ap.add_argument("--duration", type=parse_duration, default=300.0,
                    help="healthy fabric before the fault")
    ap.add_argument("--page-timeout", type=parse_duration, default=480.0)
    ap.add_argument("--settle", type=parse_duration, default=120.0,
                    help="after the page and the dashboards, time for a second page to arrive")
    ap.add_argument("--group-wait", type=parse_duration, default=30.0)
    ap.add_argument("--group-interval", type=parse_duration, default=300.0)
    ap.add_argument("--exporter", default=os.path.join(REPO, "build/exporter/rdma_exporter"))
    ap.add_argument("--sim", default=os.path.join(REPO, "build/tools/fabric_sim/rdma_fabric_sim"))
    ap.add_argument("--prometheus", default="/usr/bin/prometheus")
    ap.add_argument("--alertmanager", default="/usr/bin/prometheus-alertmanager")
    ap.add_argument("--rules", default=os.path.join(REPO, "dashboards/out/rdma_exporter.rules.yaml"))
    ap.add_argument("--dashboards", default=os.path.join(REPO, "dashboards/out/dashboards"))
    ap.add_argument("--out", default=None, help="directory for report.json and the logs")
    ap.add_argument("--check", action="store_true", help="exit 1 when an assertion fails")
    args = ap.parse_args()
    if not 3 <= args.fail_nodes <= args.nodes:
        ap.error("--fail-nodes must be between 3 (RdmaPortsDownOnManyNodes) and --nodes")

    out = args.out or tempfile.mkdtemp(prefix="rdma-fleet-out-")
    os.makedirs(out, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="rdma-fleet-")
    procs = Processes(workdir)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        report, failures = run(args, procs, workdir)
    finally:
        procs.stop_all()
        for p in procs.procs:  # keep the logs next to the report
            try:
                os.replace(p.log, os.path.join(out, os.path.basename(p.log)))
            except OSError:
                pass
        subprocess.run(["rm", "-rf", workdir], check=False)
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(report, f, indent=2)
    print_report(report)
    print(f"\nreport: {os.path.join(out, 'report.json')}")
    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures))
    if args.check:
        print(f"fleet: {len(report['checks']) - len(failures)} passed, {len(failures)} failed")
        return 1 if failures else 0
    return 0


def run(args, procs, workdir):
    failures = []
    report = {"config": {k: v for k, v in vars(args).items() if k != "check"}, "checks": [],
              "machine": {"cpus": os.cpu_count(), "loadavg_at_start": os.getloadavg()}}

    def check(name, ok, detail=""):
        report["checks"].append({"check": name, "ok": bool(ok), "detail": detail})
        if not ok:
            failures.append(f"{name}: {detail}")

    log(f"{args.nodes} nodes x {args.rails} rails ({args.link_layer}), workdir {workdir}")
    healthy = ExporterPair(procs, "healthy", args, seed=1)
    leaf = ExporterPair(procs, "leaf", args, seed=2)
    replay = ReplayServer(args.nodes, args.fail_nodes, Template(healthy.url), Template(leaf.url))
    hook = Webhook()

    am_cfg = os.path.join(workdir, "alertmanager.yml")
    with open(am_cfg, "w") as f:
        f.write(f"""# Every critical alert pages, one notification per distinct alert (group_by '...'):
# the strictest count of pages. Everything else goes to a ticket queue.
route:
  receiver: ticket
  group_by: [alertname, cluster]
  group_wait: {prom_duration(args.group_wait)}
  group_interval: {prom_duration(args.group_interval)}
  repeat_interval: 4h
  routes:
    - matchers: ['severity="critical"']
      receiver: page
      group_by: ['...']
receivers:
  - name: page
    webhook_configs: [{{url: 'http://127.0.0.1:{hook.port}/page'}}]
  - name: ticket
    webhook_configs: [{{url: 'http://127.0.0.1:{hook.port}/ticket'}}]
""")
    am_port = 0
    for _ in range(5):
        port = free_port()
        am = procs.start("alertmanager", [
            args.alertmanager, f"--config.file={am_cfg}",
            f"--storage.path={workdir}/alertmanager", f"--web.listen-address=127.0.0.1:{port}",
            "--cluster.listen-address="])
        try:
            wait_for("alertmanager", 30, lambda: http_get(f"http://127.0.0.1:{port}/-/ready"))
            am_port = port
            break
        except RuntimeError:
            procs.stop(am)
    if not am_port:
        raise RuntimeError("alertmanager did not start")

    iv = prom_duration(args.scrape_interval)
    targets = "".join(
        f"      - targets: ['127.0.0.1:{replay.port}']\n"
        f"        labels: {{__metrics_path__: /node/{i:03d}/metrics, instance: node-{i:03d}, "
        f"cluster: {CLUSTER}}}\n" for i in range(args.nodes))
    prom_cfg = os.path.join(workdir, "prometheus.yml")
    with open(prom_cfg, "w") as f:
        f.write(f"""global:
  scrape_interval: {iv}
  evaluation_interval: {iv}
rule_files: ['{args.rules}']
alerting:
  alertmanagers:
    - static_configs:
        - targets: ['127.0.0.1:{am_port}']
scrape_configs:
  - job_name: rdma_exporter
    static_configs:
{targets}""")
    prom_proc, prom = None, None
    for _ in range(5):
        port = free_port()
        prom_proc = procs.start("prometheus", [
            args.prometheus, f"--config.file={prom_cfg}", f"--storage.tsdb.path={workdir}/prometheus",
            f"--web.listen-address=127.0.0.1:{port}"])
        try:
            wait_for("prometheus", 60, lambda: http_get(f"http://127.0.0.1:{port}/-/ready"))
            prom = Prometheus(port)
            break
        except RuntimeError:
            procs.stop(prom_proc)
    if not prom:
        raise RuntimeError("prometheus did not start")

    sampler = Sampler(prom, procs, max(2.0, args.scrape_interval / 3))
    sampler.thread.start()
    t_start = time.monotonic()
    n, r = args.nodes, args.rails
    log("waiting for every target and the recording rules")
    wait_for("every target up", 10 * args.scrape_interval + 60,
             lambda: prom.value('count(up{job="rdma_exporter"} == 1)', 0) == n, 2)
    wait_for("recording rules on every port", 10 * args.scrape_interval + 120,
             lambda: prom.value("count(device_port:rdma_port_traffic_bytes:rate5m)", 0) >= n * r
             and prom.value("count(node:rdma_rails:count)", 0) == n, 2)
    report["ready_after_seconds"] = round(time.monotonic() - t_start, 1)

    log(f"healthy fabric for {args.duration:.0f}s")
    cpu0, t0 = sampler.cpu_snapshot(), time.monotonic()
    time.sleep(args.duration)
    cpu1, t1 = sampler.cpu_snapshot(), time.monotonic()
    report["healthy_window_seconds"] = round(t1 - t0, 1)
    report["cpu_cores_healthy"] = {
        k: round((cpu1[k]["cpu_seconds"] - cpu0[k]["cpu_seconds"]) / (t1 - t0), 3)
        for k in cpu1 if k in cpu0}
    healthy_alerts = prom.vector('count by (alertname, severity) (ALERTS{alertstate="firing"})')
    report["alerts_firing_healthy"] = {
        f'{a["metric"]["alertname"]}/{a["metric"].get("severity", "")}': int(float(a["value"][1]))
        for a in healthy_alerts}
    check("no page on the healthy fleet", not hook.pages(),
          f"{len(hook.pages())} pages: {[p[1]['commonLabels'] for p in hook.pages()]}")

    # The leaf failure: one switch = the same rail on a block of nodes, all at once.
    log(f"leaf failure: {args.fail_device} port 1 down on nodes 000..{args.fail_nodes - 1:03d}")
    t_fault = time.monotonic()
    leaf.set_scenario(f"link-down {args.fail_device}")
    down_re = re.compile(r'^rdma_port_up\{device="%s",port="1"[^}]*\} 0$' % re.escape(args.fail_device), re.M)
    wait_for("the exporter to report the port down", 60, lambda: down_re.search(http_get(leaf.url)))
    t_exporter = time.monotonic()
    try:
        wait_for("the page", args.page_timeout, lambda: hook.pages(t_fault), 1)
    except RuntimeError:
        pass
    pages = hook.pages(t_fault)
    t_page = pages[0][0] if pages else None

    log("dashboard queries")
    dash = run_dashboards(prom, args.dashboards, args.scrape_interval, "node-000")
    log(f"settling {args.settle:.0f}s")
    time.sleep(args.settle)
    report["duration_seconds"] = round(time.monotonic() - t_start, 1)
    report["machine"]["loadavg_at_end"] = os.getloadavg()

    # --- figures ---
    pm = prom.self_metrics()
    stats = proc_stats(prom_proc.pid)
    groups = {}
    for series, v in pm.items():
        for metric, key in (("prometheus_rule_group_iterations_missed_total", "iterations_missed"),
                            ("prometheus_rule_group_iterations_total", "iterations"),
                            ("prometheus_rule_group_rules", "rules")):
            if series.startswith(metric + "{"):
                groups.setdefault(group_of(series), {})[key] = int(v)
    for g, vals in sampler.rule_durations.items():
        groups.setdefault(g, {}).update(
            median_seconds=round(statistics.median(vals), 4), max_seconds=round(max(vals), 4))
    # The most expensive rules, from their last evaluation (/api/v1/rules evaluationTime).
    rules = []
    for g in prom.get("/api/v1/rules", {}).get("data", {}).get("groups", []):
        for rule in g["rules"]:
            rules.append({"group": g["name"], "rule": rule["name"],
                          "seconds": round(rule.get("evaluationTime", 0), 4)})
    report["slowest_rules"] = sorted(rules, key=lambda x: -x["seconds"])[:10]
    eval_failures = sum(v for s, v in pm.items()
                        if s.startswith("prometheus_rule_evaluation_failures_total"))
    samples = prom.vector('scrape_samples_scraped{job="rdma_exporter"}')
    per_target = [float(s["value"][1]) for s in samples]
    scrape_dur = [float(s["value"][1]) for s in prom.vector('scrape_duration_seconds{job="rdma_exporter"}')]
    report["prometheus"] = {
        "head_series": int(pm.get("prometheus_tsdb_head_series", 0)),
        "head_series_max": int(max(sampler.head_series, default=0)),
        "recording_rule_series": int(prom.value('count({__name__=~".+:.+"})', 0)),
        "alerts_series": int(prom.value("count(ALERTS)", 0)),
        "samples_per_scrape": {"per_node_mean": round(statistics.mean(per_target), 1) if per_target else 0,
                               "all_targets": int(sum(per_target))},
        "scrape_duration_seconds": {"median": percentile(scrape_dur, 0.5), "max": max(scrape_dur, default=None)},
        "rule_evaluation_failures": int(eval_failures),
        "rule_groups": dict(sorted(groups.items())),
        "rss_bytes": stats["rss_bytes"], "pss_bytes": stats["pss_bytes"],
        "cpu_seconds": round(stats["cpu_seconds"], 1),
        "cpu_cores_healthy": report["cpu_cores_healthy"].get("prometheus"),
    }
    up = prom.value('count(up{job="rdma_exporter"} == 1)', 0)
    check("every target up", up == n, f"{up:.0f} of {n} targets up")
    check("no rule evaluation failure", eval_failures == 0, f"{eval_failures:.0f} failures")
    missed = sum(g.get("iterations_missed", 0) for g in groups.values())
    report["prometheus"]["iterations_missed"] = missed
    check("no rule group missed an evaluation", missed == 0,
          f"{missed} iterations missed: " + ", ".join(
              f"{g} {v['iterations_missed']}" for g, v in groups.items() if v.get("iterations_missed")))

    # Alerts and pages of the leaf failure.
    firing = prom.vector('count by (alertname, severity) (ALERTS{alertstate="firing"})')
    all_pages = hook.pages(t_fault)
    distinct = {}
    for t, body in all_pages:
        distinct.setdefault(body["groupKey"], (t, body))
    report["leaf_failure"] = {
        "nodes": args.fail_nodes, "device": args.fail_device,
        "alerts_firing": {f'{a["metric"]["alertname"]}/{a["metric"].get("severity", "")}':
                          int(float(a["value"][1])) for a in firing},
        "page_notifications": len(all_pages),
        "pages": [{"alertname": b["commonLabels"].get("alertname"),
                   "labels": b["commonLabels"], "after_fault_seconds": round(t - t_fault, 1)}
                  for t, b in distinct.values()],
        "exporter_shows_down_after_seconds": round(t_exporter - t_fault, 1),
        "fault_to_page_seconds": round(t_page - t_fault, 1) if t_page else None,
        "ticket_notifications": sum(1 for _, r, b in hook.received if r == "ticket"),
    }
    names = [p["alertname"] for p in report["leaf_failure"]["pages"]]
    check("leaf failure: exactly one page, RdmaPortsDownOnManyNodes", names == [EXPECTED_PAGE],
          f"pages: {names}")
    portdown_info = report["leaf_failure"]["alerts_firing"].get("RdmaPortDown/info", 0)
    check("leaf failure: every down port listed as RdmaPortDown info", portdown_info == args.fail_nodes,
          f"RdmaPortDown/info firing for {portdown_info} ports, expected {args.fail_nodes}")

    # Dashboards.
    report["dashboards"] = summarize_dashboards(dash)
    for q in dash:
        where = f'{q["dashboard"]} / {q["title"]} ({q["mode"]})'
        if q["status"] != "success" or q["unresolved_variable"]:
            check(f"query succeeds: {where}", False, f'{q["status"]} {q["error"]}: {q["expr"]}')
        # Data: on a mixed fleet (RoCE and InfiniBand rails, as the demo) with a leaf failure
        # every panel and variable of all nodes, and of the node dashboard on one node, has
        # data. On a RoCE-only or InfiniBand-only fleet the other link layer's panels are
        # empty: reported, not failed.
        if args.link_layer == "mixed" and q["kind"] != "annotation" and q["series"] == 0 and (
                q["mode"] == "all nodes" or q["dashboard"] == "rdma-node.json"):
            check(f"query has data: {where}", False, q["expr"])
    # The port-state annotation marks exactly the ports behind the failed leaf.
    ann = [q for q in dash if q["kind"] == "annotation" and q["mode"] == "all nodes"
           and q["title"].startswith("Port down/up")]
    check("annotation marks the leaf failure", ann and all(q["series"] == args.fail_nodes for q in ann),
          f"'Port down/up' annotation series: {[q['series'] for q in ann]}, expected {args.fail_nodes}")
    report["dashboard_queries"] = dash
    return report, failures


def summarize_dashboards(dash):
    out = {}
    for mode in ("one node", "all nodes"):
        qs = [q for q in dash if q["mode"] == mode]
        if not qs:
            continue
        secs = [q["seconds"] for q in qs]
        out[mode] = {
            "queries": len(qs),
            "failed": sum(1 for q in qs if q["status"] != "success"),
            "empty": [f'{q["dashboard"]} / {q["kind"]} {q["title"]}' for q in qs if q["series"] == 0],
            "p50_seconds": round(percentile(secs, 0.5), 4),
            "p90_seconds": round(percentile(secs, 0.9), 4),
            "max_seconds": round(max(secs), 4),
            "slowest": [{"seconds": round(q["seconds"], 3), "where": f'{q["dashboard"]} / {q["title"]}',
                         "expr": q["expr"]} for q in sorted(qs, key=lambda q: -q["seconds"])[:5]],
        }
    return out


def print_report(r):
    c, p, lf = r["config"], r.get("prometheus", {}), r.get("leaf_failure", {})
    mib = 1024 * 1024
    print(f"\n== Fleet: {c['nodes']} nodes x {c['rails']} rails ({c['link_layer']}), scrape and "
          f"evaluation every {c['scrape_interval']:g}s, {r.get('duration_seconds')}s run; "
          f"{r['machine']['cpus']} CPUs, load average {r['machine']['loadavg_at_start'][0]:.1f} at "
          f"start, {r['machine'].get('loadavg_at_end', [0])[0]:.1f} at end ==")
    if not p:
        return
    print(f"head series {p['head_series']} (max {p['head_series_max']}), samples per scrape "
          f"{p['samples_per_scrape']['per_node_mean']} per node, "
          f"{p['samples_per_scrape']['all_targets']} per round; recording-rule series "
          f"{p['recording_rule_series']}, ALERTS series {p['alerts_series']}")
    print(f"scrape duration median {p['scrape_duration_seconds']['median']}s max "
          f"{p['scrape_duration_seconds']['max']}s; rule evaluation failures "
          f"{p['rule_evaluation_failures']}; iterations missed {p['iterations_missed']}")
    print(f"Prometheus RSS {p['rss_bytes'] / mib:.0f} MiB, PSS {p['pss_bytes'] / mib:.0f} MiB, "
          f"CPU {p['cpu_seconds']}s total, {p['cpu_cores_healthy']} cores while healthy")
    print("CPU cores while healthy: " + ", ".join(f"{k} {v}" for k, v in r["cpu_cores_healthy"].items()))
    print("rule group                          rules  median s    max s  iterations  missed")
    for g, v in p["rule_groups"].items():
        print(f"{g:35s} {v.get('rules', 0):5d} {v.get('median_seconds', 0):9.4f} "
              f"{v.get('max_seconds', 0):8.4f} {v.get('iterations', 0):11d} {v.get('iterations_missed', 0):7d}")
    print("slowest rules (last evaluation): " + "; ".join(
        f"{x['rule']} ({x['group'].split('.')[1]}) {x['seconds']}s" for x in r.get("slowest_rules", [])[:5]))
    for mode, d in r.get("dashboards", {}).items():
        print(f"dashboards, {mode}: {d['queries']} queries, {d['failed']} failed, "
              f"{len(d['empty'])} empty; p50 {d['p50_seconds']}s p90 {d['p90_seconds']}s max "
              f"{d['max_seconds']}s; slowest:")
        for s in d["slowest"]:
            print(f"  {s['seconds']:7.3f}s {s['where']}: {' '.join(s['expr'].split())[:160]}")
        if d["empty"]:
            print("  empty: " + "; ".join(d["empty"]))
    print(f"healthy fleet: firing {r.get('alerts_firing_healthy')}")
    print(f"leaf failure ({lf['device']} on {lf['nodes']} nodes): exporter shows it after "
          f"{lf['exporter_shows_down_after_seconds']}s, first page after {lf['fault_to_page_seconds']}s; "
          f"{len(lf['pages'])} distinct page(s) in {lf['page_notifications']} notification(s): "
          f"{[x['alertname'] for x in lf['pages']]}; {lf['ticket_notifications']} ticket notification(s)")
    print(f"firing: {lf['alerts_firing']}")


if __name__ == "__main__":
    sys.exit(main())
