#!/usr/bin/env python3
"""Side-by-side benchmark of rdma_exporter and prometheus-node-exporter (infiniband collector).

For each size, writes an mlx5 tree with rdma_fabric_sim (--ticks 0), starts both exporters on it
(127.0.0.1, free ports), and measures per full collection: CPU time (utime+stime of
/proc/<pid>/stat over many scrapes; rdma_exporter with --poll-interval=0 so both collect on
scrape), syscalls (strace -c -f attached to the process), sysfs files read (strace -y: distinct
tree files passed to read/pread64), scrape latency p50/p99 at 1 and 64 clients (wrk --latency)
and peak RSS (VmHWM). Then rdma_exporter again with polling on: CPU per poll, and latency of
scrapes served from the snapshot. Run through bench/run.sh, which installs the tools and builds.
Only the Python standard library is used.
"""

import argparse
import http.client
import json
import math
import os
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import zlib

# Ports -> rdma_fabric_sim topology (mlx5; PFs alternate RoCE/InfiniBand). Beyond 64 ports the
# extra ports are SR-IOV VFs of PF 0 (the simulator's maximum is 64 VFs), one port each; 1024
# (the largest SR-IOV configurations) adds 4 ports per PF. No LAG or E810 (the demo fabric's
# extra NICs), so the port count is exact.
NO_EXTRA_NICS = ["--lag", "0", "--e810", "0"]
TOPOLOGY = {
    1: ["--devices", "1", "--vfs", "0"] + NO_EXTRA_NICS,
    8: ["--devices", "8", "--vfs", "0"] + NO_EXTRA_NICS,
    64: ["--devices", "64", "--vfs", "0"] + NO_EXTRA_NICS,
    256: ["--devices", "192", "--vfs", "64"] + NO_EXTRA_NICS,
    1024: ["--devices", "240", "--ports", "4", "--vfs", "64"] + NO_EXTRA_NICS,
}
CLK_TCK = os.sysconf("SC_CLK_TCK")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def raise_fd_limit():
    # rdma_exporter keeps every value file open (~80 per port, ~20k at 256 ports) and raises its
    # soft limit to the hard one. Give both exporters the hard limit of a systemd service
    # (LimitNOFILE=524288) when allowed (root), so the fd cache is not cut by this shell's limit.
    import resource
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (524288, 524288))
    except (ValueError, OSError):
        pass


def collector_names(exporter):
    """Collector names from rdma_exporter --help."""
    text = subprocess.run([exporter, "--help"], capture_output=True, text=True).stdout
    return re.findall(r"^\s+--collector\.(\w+)\s", text, re.M)


def cpu_times(pid):
    """(user, system) CPU seconds of the whole process."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # fields[0] is field 3 (state): utime is field 14, stime 15.
    return int(fields[11]) / CLK_TCK, int(fields[12]) / CLK_TCK


def cpu_seconds(pid):
    return sum(cpu_times(pid))


def fd_limit(pid):
    with open(f"/proc/{pid}/limits") as f:
        for line in f:
            if line.startswith("Max open files"):
                return int(line.split()[3])
    return 0


def vm_rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def vm_hwm_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


class Exporter:
    """One exporter process on 127.0.0.1:<free port>, stopped by its PID."""

    def __init__(self, name, argv_for_port, log_dir):
        self.name = name
        self.port = free_port()
        argv = argv_for_port(self.port)
        self.log_path = os.path.join(log_dir, f"{name}.log")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT,
                                     preexec_fn=raise_fd_limit)
        self.pid = self.proc.pid
        self.conn = None

    def url(self, path="/metrics"):
        return f"http://127.0.0.1:{self.port}{path}"

    def get(self, path="/metrics"):
        """One scrape as Prometheus does it (gzip accepted), on a kept-alive connection."""
        for attempt in range(2):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                self.conn.request("GET", path, headers={"Accept-Encoding": "gzip"})
                resp = self.conn.getresponse()
                body = resp.read()
                if resp.getheader("Connection", "").lower() == "close":
                    self.close_conn()
                return resp.status, body
            except (OSError, http.client.HTTPException):
                self.close_conn()
                if attempt == 1:
                    raise
        return 0, b""

    def get_text(self, path="/metrics"):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            conn.request("GET", path)
            resp = conn.getresponse()
            return resp.status, resp.read().decode("utf-8", "replace")
        finally:
            conn.close()

    def close_conn(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def wait_ready(self, path, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}; see {self.log_path}")
            try:
                status, _ = self.get_text(path)
                if status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"{self.name} not ready after {timeout}s; see {self.log_path}")

    def stop(self):
        self.close_conn()
        if self.log.closed:
            return
        if self.proc.poll() is None:
            os.kill(self.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(self.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()


def cpu_per_scrape(exp, min_scrapes, min_seconds):
    """(CPU, system CPU) seconds of the whole process per sequential scrape (each one a full
    collection). The system part is the kernel's work for the process: for rdma_exporter almost
    all of it the pread of each value file, a floor no exporter that reads sysfs goes below."""
    user0, sys0 = cpu_times(exp.pid)
    start = time.time()
    n = 0
    while n < min_scrapes or time.time() - start < min_seconds:
        status, _ = exp.get()
        if status != 200:
            raise RuntimeError(f"{exp.name}: HTTP {status}")
        n += 1
    user1, sys1 = cpu_times(exp.pid)
    return (user1 - user0 + sys1 - sys0) / n, (sys1 - sys0) / n


def start_strace(pid, out_path, extra):
    # -f with -p attaches every thread of the process. Started and stopped by its PID.
    proc = subprocess.Popen(["strace", "-f", "-p", str(pid), "-o", out_path] + extra,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # Wait until strace reports the attach of the main thread.
    deadline = time.time() + 10
    line = ""
    while time.time() < deadline:
        line = proc.stderr.readline()
        if "attached" in line or not line:
            break
    time.sleep(0.3)
    return proc


def stop_strace(proc):
    os.kill(proc.pid, signal.SIGINT)
    proc.wait(timeout=60)
    proc.stderr.close()


def syscalls_per_scrape(exp, scrapes, work_dir):
    """Total syscalls of every thread per scrape (strace -c -f), and the top syscalls."""
    out = os.path.join(work_dir, f"strace-c-{exp.name}.txt")
    proc = start_strace(exp.pid, out, ["-c"])
    for _ in range(scrapes):
        exp.get()
    stop_strace(proc)
    per_call = {}
    total = None
    with open(out) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 5 and parts[-1] == "total":
                total = int(parts[3])
            elif len(parts) >= 5 and re.match(r"^[\d.]+$", parts[0]) and parts[3].isdigit():
                per_call[parts[-1]] = int(parts[3])
    if total is None:
        raise RuntimeError(f"no strace summary in {out}")
    top = sorted(per_call.items(), key=lambda kv: -kv[1])[:8]
    return total / scrapes, {k: v / scrapes for k, v in top}


# With -y, strace prints the path behind every fd: `pread64(7</t/sys/.../state>, ...` and
# `openat(AT_FDCWD</cwd>, "/t/sys/...", ...`.
READ_RE = re.compile(r'\b(read|pread64|openat)\((?:(\d+)<([^>]*)>|AT_FDCWD(?:<[^>]*>)?, "([^"]*)")')


def files_per_scrape(exp, scrapes, tree, work_dir):
    """Tree files each collection reads: distinct paths under the tree passed to read/pread64
    (strace -y shows the path behind each fd); also read calls and opens of tree files (not
    directories) per collection."""
    out = os.path.join(work_dir, f"strace-y-{exp.name}.txt")
    proc = start_strace(exp.pid, out, ["-y", "-e", "trace=openat,read,pread64", "-s", "0"])
    for _ in range(scrapes):
        exp.get()
    stop_strace(proc)
    files = set()
    reads = opens = 0
    with open(out) as f:
        for line in f:
            m = READ_RE.search(line)
            if not m:
                continue
            call, path = m.group(1), m.group(3) or m.group(4) or ""
            if not path.startswith(tree):
                continue
            if call == "openat":
                opens += "O_DIRECTORY" not in line  # directory listings are not value reads
            else:
                reads += 1
                files.add(path)
    return len(files), reads / scrapes, opens / scrapes


def wrk(url, clients, seconds):
    """p50/p99 latency (seconds) and requests/s from wrk --latency, scraping as Prometheus does."""
    threads = min(clients, 2)
    res = subprocess.run(["wrk", f"-t{threads}", f"-c{clients}", f"-d{seconds}s", "--latency",
                          "--timeout", "60s", "-H", "Accept-Encoding: gzip", url],
                         capture_output=True, text=True, check=True)
    text = res.stdout
    lat = {}
    for pct, value, unit in re.findall(r"^\s+(50|99)%\s+([\d.]+)(us|ms|s|m)\s*$", text, re.M):
        lat[pct] = float(value) * {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0}[unit]
    m = re.search(r"^\s*(\d+) requests in", text, re.M)
    requests = int(m.group(1)) if m else 0
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    errs = re.search(r"Socket errors: (.*)", text)
    if bad or (errs and re.search(r"[1-9]", errs.group(1))) or "50" not in lat:
        log(f"  wrk {url} c={clients}: unexpected output:\n{text}")
    return {"p50": lat.get("50", float("nan")), "p99": lat.get("99", float("nan")),
            "requests": requests, "rps": requests / seconds}


def count_series(text, prefix):
    return sum(1 for line in text.splitlines() if line.startswith(prefix))


def measure_size(ports, args, work_dir):
    tree_root = os.path.join(work_dir, f"tree-{ports}")
    subprocess.run([args.sim, "--root", tree_root, "--ticks", "0"] + TOPOLOGY[ports],
                   check=True, stdout=subprocess.DEVNULL)
    sysfs = os.path.realpath(os.path.join(tree_root, "sys"))
    r = {"ports": ports}

    ours = Exporter("rdma_exporter", lambda p: [
        args.exporter, f"--path.sysfs={sysfs}", f"--web.listen-address=127.0.0.1:{p}",
        "--poll-interval=0", "--log.level=error"], work_dir)
    # The same data as node_exporter's infiniband collector (device info, port state and rate,
    # PMA counters): the like-for-like cost.
    same_collectors = [f"--no-collector.{c}" for c in collector_names(args.exporter)
                       if c not in ("device", "port", "counters")]
    # node_exporter reads the device files on every scrape: so does this one (no slow tier).
    same = list(same_collectors)
    has_slow_tier = "--poll-interval.slow" in subprocess.run(
        [args.exporter, "--help"], capture_output=True, text=True).stdout
    if has_slow_tier:
        same.append("--poll-interval.slow=0")
    ours_ib = Exporter("rdma_exporter_ib", lambda p: [
        args.exporter, f"--path.sysfs={sysfs}", f"--web.listen-address=127.0.0.1:{p}",
        "--poll-interval=0", "--log.level=error"] + same, work_dir)
    # The same data as deployed: the device files (board, firmware, GUIDs, NUMA node) come from
    # the slow tier (default 60 s, and on any device change), the rest from every collection.
    ours_ib_default = Exporter("rdma_exporter_ib_default", lambda p: [
        args.exporter, f"--path.sysfs={sysfs}", f"--web.listen-address=127.0.0.1:{p}",
        "--poll-interval=0", "--log.level=error"] + same_collectors, work_dir) \
        if has_slow_tier else None
    # --web.max-requests=0: no 503s at 64 clients, every request is a real collection.
    theirs = Exporter("node_exporter", lambda p: [
        args.node_exporter, f"--path.sysfs={sysfs}", "--collector.disable-defaults",
        "--collector.infiniband", f"--web.listen-address=127.0.0.1:{p}",
        "--web.max-requests=0", "--log.level=warn"], work_dir)
    every = [ours, ours_ib] + ([ours_ib_default] if ours_ib_default else []) + [theirs]
    both = [ours, theirs]
    try:
        ours.wait_ready("/-/ready")
        ours_ib.wait_ready("/-/ready")
        if ours_ib_default:
            ours_ib_default.wait_ready("/-/ready")
        theirs.wait_ready("/")
        # Sanity: both really export the tree.
        r["series"], r["read_errors"] = {}, {}
        for e in (ours, ours_ib):
            _, text = e.get_text()
            r["series"][e.name] = sum(1 for l in text.splitlines()
                                      if l.startswith("rdma_") and not l.startswith("rdma_exporter_"))
            r["read_errors"][e.name] = sum(float(l.split()[-1]) for l in text.splitlines()
                                           if l.startswith("rdma_exporter_read_errors_total"))
        _, text = theirs.get_text()
        r["series"][theirs.name] = count_series(text, "node_infiniband_")
        ok = re.search(r'node_scrape_collector_success\{collector="infiniband"\} (\S+)', text)
        r["theirs_ok"] = bool(ok and float(ok.group(1)) == 1)
        if not r["theirs_ok"]:
            log(f"  node_exporter's infiniband collector failed on {sysfs}")

        for e in every:  # warm-up: page cache, descriptors, Go heap
            for _ in range(args.warmup):
                e.get()

        # CPU per collection, alternating the exporters so load changes hit all alike.
        cpu = {e.name: [] for e in every}
        sys_cpu = {e.name: [] for e in every}
        for _ in range(args.rounds):
            for e in every:
                total, system = cpu_per_scrape(e, args.scrapes, args.seconds)
                cpu[e.name].append(total)
                sys_cpu[e.name].append(system)
        r["cpu"] = {k: statistics.median(v) for k, v in cpu.items()}
        r["sys_cpu"] = {k: statistics.median(v) for k, v in sys_cpu.items()}
        r["cpu_all"] = cpu

        # Syscalls and files per collection.
        r["syscalls"], r["top_syscalls"], r["files"], r["reads"], r["opens"] = {}, {}, {}, {}, {}
        for e in every:
            n = max(3, min(args.strace_scrapes, int(2000 / ports)))
            r["syscalls"][e.name], r["top_syscalls"][e.name] = syscalls_per_scrape(e, n, work_dir)
            # Every collection reads the same files: three show them all.
            r["files"][e.name], r["reads"][e.name], r["opens"][e.name] = files_per_scrape(
                e, 3, sysfs, work_dir)
        r["rss"] = {ours_ib.name: vm_hwm_kib(ours_ib.pid)}
        r["fd_limit"] = fd_limit(ours.pid)
        ours_ib.stop()
        if ours_ib_default:
            ours_ib_default.stop()

        # Latency at 1 and 64 clients, collecting on every scrape.
        r["lat"] = {e.name: {} for e in both}
        for clients in (1, 64):
            for e in both:
                e.close_conn()
                # Long enough for every client to finish several collections.
                seconds = min(args.wrk_max_seconds,
                              max(args.wrk_seconds, math.ceil(4 * clients * r["cpu"][e.name])))
                r["lat"][e.name][clients] = wrk(e.url(), clients, seconds)
        r["rss"].update({e.name: vm_hwm_kib(e.pid) for e in both})
    finally:
        for e in every:
            e.stop()

    # rdma_exporter with polling on: cost per poll, and scrapes served from the snapshot.
    interval = args.poll_interval
    polling = Exporter("rdma_exporter_polling", lambda p: [
        args.exporter, f"--path.sysfs={sysfs}", f"--web.listen-address=127.0.0.1:{p}",
        f"--poll-interval={int(interval * 1000)}ms", "--log.level=warn"], work_dir)
    try:
        polling.wait_ready("/-/ready")
        time.sleep(3 * interval)
        # An idle exporter: polling, nothing scraping it but the readiness probe above.
        r["idle_rss"] = vm_rss_kib(polling.pid)

        def last_poll():
            status, body = polling.get()
            text = zlib.decompress(body, 16 + zlib.MAX_WBITS).decode()
            m = re.search(r"^rdma_exporter_last_poll_timestamp_seconds (\S+)$", text, re.M)
            return float(m.group(1))

        # Count the polls exactly: sample the last poll's timestamp more often than polls can
        # end (each sample is a snapshot scrape, a few µs of the exporter's CPU).
        samples = []
        for _ in range(args.rounds):
            seen = {last_poll()}
            c0 = cpu_seconds(polling.pid)
            end = time.time() + args.poll_window
            while time.time() < end:
                time.sleep(interval / 4)
                seen.add(last_poll())
            c1 = cpu_seconds(polling.pid)
            seen.add(last_poll())
            if len(seen) > 1:
                samples.append((c1 - c0) / (len(seen) - 1))
        r["poll_cpu"] = statistics.median(samples) if samples else float("nan")
        r["poll_lat"] = {}
        for clients in (1, 64):
            c0 = cpu_seconds(polling.pid)
            w = wrk(polling.url(), clients, args.wrk_seconds)
            c1 = cpu_seconds(polling.pid)
            polls = args.wrk_seconds / (interval + r["poll_cpu"])
            # CPU of serving alone: the polls that ran meanwhile are subtracted.
            w["cpu_per_scrape"] = max(0.0, (c1 - c0) - polls * r["poll_cpu"]) / max(1, w["requests"])
            r["poll_lat"][clients] = w
        r["poll_rss"] = vm_hwm_kib(polling.pid)
    finally:
        polling.stop()
    shutil.rmtree(tree_root, ignore_errors=True)
    return r


def fmt_time(s):
    if s != s:  # NaN
        return "n/a"
    if s < 1e-3:
        return f"{s * 1e6:.0f} µs"
    if s < 1:
        return f"{s * 1e3:.1f} ms" if s < 0.1 else f"{s * 1e3:.0f} ms"
    return f"{s:.2f} s"


def fmt_ratio(a, b):
    if not b or a != a or b != b:
        return "n/a"
    x = a / b
    return f"1/{1 / x:.0f}" if 0 < x < 0.5 else f"{x:.2f}"


def table(results):
    us, ib, them = "rdma_exporter", "rdma_exporter_ib", "node_exporter"
    dflt = "rdma_exporter_ib_default"
    rows = ["| Ports | Measure | rdma_exporter | node_exporter | us/them |",
            "|---:|---|---:|---:|---:|"]

    def spf(r, k):
        return r["syscalls"][k] / r["files"][k] if r["files"][k] else float("nan")

    def lat_row(name, a, b):
        return (name, f"{fmt_time(a['p50'])} / {fmt_time(a['p99'])}",
                f"{fmt_time(b['p50'])} / {fmt_time(b['p99'])}",
                f"{fmt_ratio(a['p50'], b['p50'])} / {fmt_ratio(a['p99'], b['p99'])}")

    for r in results:
        p = r["ports"]
        lines = [
            ("series exported (rdma_* / node_infiniband_*)", str(r["series"][us]),
             str(r["series"][them]), fmt_ratio(r["series"][us], r["series"][them])),
            ("sysfs files read per collection", str(r["files"][us]), str(r["files"][them]),
             fmt_ratio(r["files"][us], r["files"][them])),
            ("CPU per collection", fmt_time(r["cpu"][us]), fmt_time(r["cpu"][them]),
             fmt_ratio(r["cpu"][us], r["cpu"][them])),
            ("syscalls per collection", f"{r['syscalls'][us]:.0f}", f"{r['syscalls'][them]:.0f}",
             fmt_ratio(r["syscalls"][us], r["syscalls"][them])),
            ("syscalls per file value", f"{spf(r, us):.2f}", f"{spf(r, them):.2f}",
             fmt_ratio(spf(r, us), spf(r, them))),
            (f"same data as node_exporter¹: series / files", f"{r['series'][ib]} / {r['files'][ib]}",
             f"{r['series'][them]} / {r['files'][them]}", ""),
            ("same data¹: CPU per collection", fmt_time(r["cpu"][ib]), fmt_time(r["cpu"][them]),
             fmt_ratio(r["cpu"][ib], r["cpu"][them])),
        ]
        if dflt in r["cpu"]:
            lines.append(("same data¹ with default flags³: files / CPU per collection",
                          f"{r['files'][dflt]} / {fmt_time(r['cpu'][dflt])}",
                          fmt_time(r["cpu"][them]), fmt_ratio(r["cpu"][dflt], r["cpu"][them])))
        lines += [
            ("system (kernel) CPU per collection, all data / same data¹",
             f"{fmt_time(r['sys_cpu'][us])} / {fmt_time(r['sys_cpu'][ib])}",
             fmt_time(r["sys_cpu"][them]), ""),
            ("CPU per collection per port (all data / same data¹)",
             f"{fmt_time(r['cpu'][us] / p)} / {fmt_time(r['cpu'][ib] / p)}",
             fmt_time(r["cpu"][them] / p), ""),
            ("same data¹: syscalls per file value", f"{spf(r, ib):.2f}", f"{spf(r, them):.2f}",
             fmt_ratio(spf(r, ib), spf(r, them))),
        ]
        for c in (1, 64):
            lines.append(lat_row(f"latency p50 / p99, {c} client{'s' if c > 1 else ''}",
                                 r["lat"][us][c], r["lat"][them][c]))
        lines.append(("peak RSS (VmHWM)", f"{r['rss'][us] / 1024:.1f} MiB",
                      f"{r['rss'][them] / 1024:.1f} MiB", fmt_ratio(r["rss"][us], r["rss"][them])))
        lines.append(("polling on²: CPU per poll (per port)",
                      f"{fmt_time(r['poll_cpu'])} ({fmt_time(r['poll_cpu'] / p)})", "", ""))
        for c in (1, 64):
            lines.append(lat_row(f"polling on²: latency p50 / p99, {c} client{'s' if c > 1 else ''}",
                                 r["poll_lat"][c], r["lat"][them][c]))
        lines.append(("polling on²: CPU per scrape (64 clients)",
                      fmt_time(r["poll_lat"][64]["cpu_per_scrape"]), "", ""))
        lines.append(("polling on²: idle RSS (no scrapes)", f"{r['idle_rss'] / 1024:.1f} MiB", "",
                      ""))
        lines.append(("polling on²: peak RSS", f"{r['poll_rss'] / 1024:.1f} MiB",
                      f"{r['rss'][them] / 1024:.1f} MiB", fmt_ratio(r["poll_rss"], r["rss"][them])))
        for name, a, b, ratio in lines:
            rows.append(f"| {p} | {name} | {a} | {b} | {ratio} |")
    return "\n".join(rows)


def targets(results):
    us, them = "rdma_exporter", "node_exporter"
    out = []
    by = {r["ports"]: r for r in results}
    for p in (8, 64, 256):
        if p not in by:
            continue
        r = by[p]
        checks = [
            ("CPU per collection, full data, <= 1/4 of node_exporter",
             r["cpu"][us] / r["cpu"][them], 0.25),
            ("CPU per collection, same data¹, <= 1/10 of node_exporter",
             r["cpu"]["rdma_exporter_ib"] / r["cpu"][them], 0.1),
            ("  (same data¹, its kernel CPU alone; not a target)",
             r["sys_cpu"]["rdma_exporter_ib"] / r["cpu"][them], float("inf")),
        ]
        if "rdma_exporter_ib_default" in r["cpu"]:
            checks += [
                ("CPU per collection, same data¹ with default flags³, <= 1/10 of node_exporter",
                 r["cpu"]["rdma_exporter_ib_default"] / r["cpu"][them], 0.1),
                ("  (same data¹ with default flags³, its kernel CPU alone; not a target)",
                 r["sys_cpu"]["rdma_exporter_ib_default"] / r["cpu"][them], float("inf")),
            ]
        checks += [
            ("syscalls per file value <= 1.05", r["syscalls"][us] / r["files"][us], 1.05),
            ("  (same data¹)",
             r["syscalls"]["rdma_exporter_ib"] / r["files"]["rdma_exporter_ib"], 1.05),
            ("p99 at 64 clients, polling on², <= 1/20",
             r["poll_lat"][64]["p99"] / r["lat"][them][64]["p99"], 0.05),
            ("peak RSS <= 1/2", r["rss"][us] / r["rss"][them], 1 / 2),
        ]
        for name, value, limit in checks:
            verdict = "" if limit == float("inf") else (
                " -> PASS" if value <= limit else " -> MISS")
            out.append(f"- {p} ports: {name}: {value:.3g}{verdict}")
    cpu_ports = [(r["ports"], r["cpu"][us], r["poll_cpu"]) for r in results if r["ports"] >= 8]
    if len(cpu_ports) >= 2:
        per_port = ", ".join(f"{p}: {fmt_time(c / p)} (poll {fmt_time(q / p)})"
                             for p, c, q in cpu_ports)
        lo, hi = cpu_ports[0], cpu_ports[-1]
        growth = (hi[1] / hi[0]) / (lo[1] / lo[0])
        out.append(f"- linear in ports: CPU per collection per port {per_port}; per-port cost at "
                   f"{hi[0]} / at {lo[0]} = {growth:.2f} -> {'PASS' if growth <= 1.5 else 'MISS'} "
                   f"(PASS = at most 1.5)")
    return "\n".join(out)


def raise_file_limit(wanted=65536):
    """The exporters inherit this limit. rdma_exporter keeps one descriptor per value file
    (57,344 at 1,024 ports), as under its systemd unit (LimitNOFILE=65536) or a container
    runtime (1,048,576); a smaller hard limit (20,000 on some VMs) would make it open and close
    files for each read and measure that instead. Raising the hard limit needs root."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, wanted))
        except (ValueError, OSError) as e:
            log(f"cannot raise RLIMIT_NOFILE to {wanted} ({e}); the hard limit stays {hard}")
            return
    elif soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard))
    log(f"RLIMIT_NOFILE: {resource.getrlimit(resource.RLIMIT_NOFILE)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--exporter", required=True)
    ap.add_argument("--sim", required=True)
    ap.add_argument("--node-exporter", default=shutil.which("prometheus-node-exporter") or
                    "prometheus-node-exporter")
    ap.add_argument("--sizes", default="1,8,64,256")
    ap.add_argument("--scrapes", type=int, default=5, help="minimum scrapes per CPU round")
    ap.add_argument("--seconds", type=float, default=2.0, help="minimum seconds per CPU round")
    ap.add_argument("--rounds", type=int, default=3, help="CPU rounds per exporter (median)")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--strace-scrapes", type=int, default=20)
    ap.add_argument("--wrk-seconds", type=int, default=8)
    ap.add_argument("--wrk-max-seconds", type=int, default=60)
    ap.add_argument("--poll-interval", type=float, default=0.2, help="seconds, polling-on run")
    ap.add_argument("--poll-window", type=float, default=4.0)
    ap.add_argument("--json", help="also write the raw results here")
    ap.add_argument("--work-dir", help="keep trees, logs and strace output here")
    args = ap.parse_args()
    # Checked before any exporter starts: a missing binary must not leave the others running.
    for what, path in (("exporter", args.exporter), ("sim", args.sim),
                       ("node-exporter", args.node_exporter)):
        if not (shutil.which(path) or os.access(path, os.X_OK)):
            sys.exit(f"compare.py: --{what} {path}: not found or not executable "
                     "(bench/run.sh installs prometheus-node-exporter)")

    raise_file_limit()
    work_dir = args.work_dir or tempfile.mkdtemp(prefix="rdma_bench.")
    os.makedirs(work_dir, exist_ok=True)
    results = []
    try:
        for ports in [int(s) for s in args.sizes.split(",")]:
            if ports not in TOPOLOGY:
                sys.exit(f"compare.py: size {ports} is not one of {sorted(TOPOLOGY)}")
            log(f"== {ports} ports")
            results.append(measure_size(ports, args, work_dir))
    finally:
        if not args.work_dir:
            shutil.rmtree(work_dir, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    print(table(results))
    print()
    print("¹ rdma_exporter with only the device, port and counters collectors: the data "
          "node_exporter's infiniband collector exports.")
    print(f"² rdma_exporter --poll-interval={int(args.poll_interval * 1000)}ms: scrapes are served "
          "from the last poll's snapshot; compared with node_exporter collecting on scrape.")
    print("³ the same collectors with the default --poll-interval.slow=60s: the device files "
          "(board, firmware, GUIDs, node type, NUMA node) are read on the slow tier and on any "
          "device change, as deployed; ¹ reads them on every collection, as node_exporter does.")
    print("Both exporters collect on every scrape otherwise (rdma_exporter --poll-interval=0). "
          "Scrapes send Accept-Encoding: gzip, as Prometheus does.")
    print()
    for r in results:
        if r["opens"]["rdma_exporter"] > 0:
            print(f"Note: at {r['ports']} ports rdma_exporter's descriptor limit ({r['fd_limit']}, "
                  f"the hard limit here) kept fewer value files open than it reads; "
                  f"{r['opens']['rdma_exporter']:.0f} files per collection were opened for each "
                  "read (open + pread + close).")
    print()
    print(targets(results))


if __name__ == "__main__":
    main()
