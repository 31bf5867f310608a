// The kubelet's probes of every rendered overlay, run against the exporter started with that
// overlay's flags (on 127.0.0.1 and a free port; --path.sysfs a fixture; --web.config.file a test
// config with TLS and basic auth). A probe passes as the kubelet decides: httpGet with a status
// of 200-399 (certificates not verified, as the kubelet does), tcpSocket when the connect
// succeeds. Probes on a port another container serves (kube-rbac-proxy in the tls overlay) are
// run against the exporter's upstream address when the proxy passes that path through.
// Usage: node probes_test.mjs EXPORTER SYSFS WEB_CONFIG RENDERED.yaml...   (exit 1 on a failure)
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import YAML from "yaml";

const [exporterBin, sysfs, webConfig, ...files] = process.argv.slice(2);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let failed = false;
const fail = (msg) => {
  console.log(`FAIL: ${msg}`);
  failed = true;
};

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function tcpConnect(port, timeoutMs) {
  return new Promise((resolve) => {
    const sock = net.connect({ host: "127.0.0.1", port });
    const done = (ok) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(timeoutMs, () => done(false));
    sock.on("connect", () => done(true));
    sock.on("error", () => done(false));
  });
}

function httpGet(scheme, port, path, headers, timeoutMs) {
  return new Promise((resolve) => {
    const lib = scheme === "HTTPS" ? https : http;
    const req = lib.get(
      { host: "127.0.0.1", port, path, headers, timeout: timeoutMs, rejectUnauthorized: false },
      (res) => {
        res.resume();
        resolve(res.statusCode);
      });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(0));
  });
}

// Runs a probe until it passes or 15 s pass (the kubelet retries too; readiness waits for the
// first poll).
async function runProbe(action, scheme, port, path, headers, timeoutMs) {
  let last = "";
  for (const deadline = Date.now() + 15000; Date.now() < deadline; await sleep(200)) {
    if (action === "tcpSocket") {
      if (await tcpConnect(port, timeoutMs)) return { ok: true, result: "connected" };
      last = "connect failed";
    } else {
      const status = await httpGet(scheme, port, path, headers, timeoutMs);
      if (status >= 200 && status < 400) return { ok: true, result: `HTTP ${status}` };
      last = status === 0 ? "no HTTP answer" : `HTTP ${status}`;
    }
  }
  return { ok: false, result: last };
}

for (const file of files) {
  const overlay = file.replace(/^.*\//, "").replace(/\.yaml$/, "");
  const docs = YAML.parseAllDocuments(fs.readFileSync(file, "utf8")).map((d) => d.toJS());
  const ds = docs.find((d) => d?.kind === "DaemonSet" && d.metadata?.name === "rdma-exporter");
  const pod = ds.spec.template.spec;
  const ex = pod.containers.find((c) => c.name === "rdma-exporter");
  const port = await freePort();
  const vars = { HOST_IP: "127.0.0.1", NCCL_IB_TC: "106" };
  const args = (ex.args ?? []).map((a) => {
    a = a.replace(/\$\((\w+)\)/g, (m, name) => vars[name] ?? m);
    if (a.startsWith("--path.sysfs=")) return `--path.sysfs=${sysfs}`;
    if (a.startsWith("--web.config.file=")) return `--web.config.file=${webConfig}`;
    if (a.startsWith("--web.listen-address=")) return a.replace(/:9879$/, `:${port}`);
    return a;
  });
  if (args.some((a) => /\$\(/.test(a))) fail(`${overlay}: unresolved variable in ${args}`);
  const proc = spawn(exporterBin, args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  proc.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise((r) => proc.on("exit", r));
  try {
    const portOf = (c, p) =>
      typeof p === "number" ? p : (c.ports ?? []).find((q) => q.name === p)?.containerPort;
    for (const kind of ["livenessProbe", "readinessProbe", "startupProbe"]) {
      const probe = ex[kind];
      if (!probe) continue;
      const action = probe.httpGet ? "httpGet" : probe.tcpSocket ? "tcpSocket" : "other";
      if (action === "other") {
        fail(`${overlay} ${kind}: neither httpGet nor tcpSocket`);
        continue;
      }
      const spec = probe[action];
      const podPort = portOf(ex, spec.port);
      const server = pod.containers.find((c) =>
        (c.ports ?? []).some((q) => q.containerPort === podPort));
      let target = port;
      let scheme = spec.scheme ?? "HTTP";
      let via = "";
      if (server && server.name !== "rdma-exporter") {
        // A proxy in front: the probe path must be passed through unauthenticated to the
        // exporter's upstream, which then answers it.
        const sargs = server.args ?? [];
        const ignored = sargs.find((a) => a.startsWith("--ignore-paths="))?.split("=")[1] ?? "";
        const upstream = sargs.find((a) => a.startsWith("--upstream="))?.split("=")[1] ?? "";
        if (action !== "httpGet" || !ignored.split(",").includes(spec.path)) {
          fail(`${overlay} ${kind}: served by ${server.name}, which does not pass ${spec.path} through`);
          continue;
        }
        if (!/^http:\/\/127\.0\.0\.1:9879\/?$/.test(upstream)) {
          fail(`${overlay} ${kind}: ${server.name} upstream ${upstream} is not the exporter`);
          continue;
        }
        scheme = "HTTP";
        via = ` via ${server.name} (--ignore-paths)`;
      } else if (podPort !== 9879) {
        fail(`${overlay} ${kind}: port ${spec.port} is not the exporter's 9879`);
        continue;
      }
      const headers = Object.fromEntries((spec.httpHeaders ?? []).map((h) => [h.name, h.value]));
      const timeoutMs = (probe.timeoutSeconds ?? 1) * 1000;
      const r = await runProbe(action, scheme, target, spec.path, headers, timeoutMs);
      const what = `${overlay} ${kind} ${action} ${scheme} ${spec.path ?? ""}${via}`;
      if (r.ok) console.log(`ok: ${what}: ${r.result}`);
      else fail(`${what}: ${r.result}\n${stderr}`);
    }
    // Why TCP probes with --web.config.file: an HTTP probe would be refused.
    if (args.some((a) => a.startsWith("--web.config.file="))) {
      const status = await httpGet("HTTPS", port, "/-/healthy", {}, 5000);
      if (status !== 401) fail(`${overlay}: /-/healthy without credentials answered ${status}, not 401`);
      else console.log(`ok: ${overlay}: an httpGet probe would get HTTP 401 (basic auth)`);
    }
  } finally {
    proc.kill("SIGTERM");
    const timer = setTimeout(() => proc.kill("SIGKILL"), 10000);
    await exited;
    clearTimeout(timer);
  }
}
process.exit(failed ? 1 : 0);
