// Deployment rules every rendered overlay must keep (the list), checked on the
// rdma-exporter DaemonSet and its containers. Usage: node policy.mjs FILE.yaml  (exit 1 on a breach)
import fs from "node:fs";
import YAML from "yaml";

const file = process.argv[2];
const docs = YAML.parseAllDocuments(fs.readFileSync(file, "utf8")).map((d) => d.toJS());
const bad = [];
const need = (cond, what) => {
  if (!cond) bad.push(what);
};
const ds = docs.find((d) => d?.kind === "DaemonSet" && d.metadata?.name === "rdma-exporter");
need(ds, "DaemonSet rdma-exporter exists");
if (ds) {
  const pod = ds.spec.template.spec;
  need(pod.nodeSelector?.rdma === "true", 'nodeSelector rdma: "true"');
  need(pod.hostNetwork === true, "hostNetwork: true");
  need(pod.priorityClassName === "system-node-critical", "priorityClassName system-node-critical");
  need((pod.tolerations ?? []).some((t) => t.key === "nvidia.com/gpu"), "tolerates nvidia.com/gpu");
  const ru = ds.spec.updateStrategy?.rollingUpdate?.maxUnavailable;
  need(ds.spec.updateStrategy?.type === "RollingUpdate" && /^\d+%$/.test(String(ru)),
    "RollingUpdate with maxUnavailable as a percentage");
  const sysVol = (pod.volumes ?? []).find((v) => v.hostPath?.path === "/sys");
  need(sysVol, "hostPath /sys volume");
  // The one exception, opted into by name (overlays/link-peer): UID 0 holding only NET_RAW
  // (LLDP packet socket) and NET_ADMIN (module EEPROMs), because Kubernetes cannot give a
  // non-root container a capability. Everything else below still holds.
  const linkPeer = ds.metadata?.annotations?.["rdma-exporter/opt-in"] === "link-peer";
  const allowedAdd = linkPeer ? ["NET_ADMIN", "NET_RAW"] : [];
  need(pod.securityContext?.runAsNonRoot === true || linkPeer, "pod runAsNonRoot");
  const hostPorts = [];
  for (const c of pod.containers) {
    const sc = c.securityContext ?? {};
    const name = `container ${c.name}`;
    need(sc.runAsNonRoot !== false || linkPeer, `${name}: runAsNonRoot not overridden`);
    need(sc.readOnlyRootFilesystem === true, `${name}: readOnlyRootFilesystem`);
    need(sc.allowPrivilegeEscalation === false, `${name}: allowPrivilegeEscalation false`);
    need(sc.privileged !== true, `${name}: not privileged`);
    need(JSON.stringify(sc.capabilities?.drop) === '["ALL"]', `${name}: drops ALL capabilities`);
    need((sc.capabilities?.add ?? []).every((cap) => allowedAdd.includes(cap)),
      `${name}: adds no capability` + (linkPeer ? " beyond NET_RAW and NET_ADMIN" : ""));
    for (const k of ["cpu", "memory"]) {
      need(c.resources?.requests?.[k] && c.resources?.limits?.[k], `${name}: ${k} request and limit`);
    }
    for (const p of c.ports ?? []) hostPorts.push(p.hostPort ?? p.containerPort);
  }
  need(new Set(hostPorts).size === hostPorts.length, "no host port declared twice");
  const ex = pod.containers.find((c) => c.name === "rdma-exporter");
  need(ex, "container rdma-exporter");
  if (ex && sysVol) {
    const m = (ex.volumeMounts ?? []).find((v) => v.name === sysVol.name);
    need(m?.readOnly === true, "host /sys mounted read-only");
    need((ex.args ?? []).includes(`--path.sysfs=${m?.mountPath}`), "--path.sysfs is the /sys mount");
    // With --web.config.file the endpoints may need credentials or TLS: TCP probes there.
    const webConfig = (ex.args ?? []).some((a) => a.startsWith("--web.config.file"));
    const probeOk = (probe, path) =>
      probe?.httpGet?.path === path || (webConfig && probe?.tcpSocket?.port !== undefined);
    need(probeOk(ex.livenessProbe, "/-/healthy"), "liveness probe /-/healthy (tcpSocket with --web.config.file)");
    need(probeOk(ex.readinessProbe, "/-/ready"), "readiness probe /-/ready (tcpSocket with --web.config.file)");
  }
  // Never every host interface: with hostNetwork that includes the IPoIB/RoCE fabric interfaces
  // tenant jobs reach. The node's own address (HOST_IP from status.hostIP) or loopback.
  if (ex) {
    const listen = (ex.args ?? []).filter((a) => a.startsWith("--web.listen-address="));
    const addr = listen.length === 1 ? listen[0].slice("--web.listen-address=".length) : "";
    const hostIp = (ex.env ?? []).find((e) => e.name === "HOST_IP")?.valueFrom?.fieldRef?.fieldPath;
    need((addr === "$(HOST_IP):9879" && hostIp === "status.hostIP") || addr.startsWith("127.0.0.1:"),
      "exporter: one --web.listen-address, $(HOST_IP):9879 with HOST_IP from status.hostIP, or 127.0.0.1");
  }
  if (ex) checkRoceChecks(ex);
}

// Without --nccl.ib-tc and the verbs collector the NCCL-priority and active-MTU checks do not
// exist, and an absent check reads as OK: the TC comes from the ConfigMap (one place), verbs
// is on and the pod gets the uverbs device nodes from the RDMA shared device plugin.
function checkRoceChecks(ex) {
  const args = ex.args ?? [];
  const tcArgs = args.filter((a) => a.startsWith("--nccl.ib-tc"));
  need(tcArgs.length === 1 && tcArgs[0] === "--nccl.ib-tc=$(NCCL_IB_TC)",
    "exporter: one --nccl.ib-tc=$(NCCL_IB_TC)");
  const env = (ex.env ?? []).find((e) => e.name === "NCCL_IB_TC");
  const ref = env?.valueFrom?.configMapKeyRef;
  need(ref?.name === "rdma-exporter-config" && ref?.key === "NCCL_IB_TC" && ref?.optional !== true,
    "exporter: env NCCL_IB_TC from ConfigMap rdma-exporter-config, key NCCL_IB_TC, not optional");
  const cm = docs.find((d) => d?.kind === "ConfigMap" && d.metadata?.name === "rdma-exporter-config");
  const tc = cm?.data?.NCCL_IB_TC;
  need(/^\d{1,3}$/.test(tc ?? "") && Number(tc) <= 255,
    "ConfigMap rdma-exporter-config: NCCL_IB_TC is 0..255");
  need(cm?.metadata?.namespace === ds.metadata?.namespace,
    "ConfigMap rdma-exporter-config in the DaemonSet's namespace");
  // The exporter's rule: the last --[no-]collector.verbs[=true|false] wins; default on.
  let verbs = true;
  for (const a of args) {
    const m = /^--(no-)?collector\.verbs(?:=(true|false))?$/.exec(a);
    if (m) verbs = (m[2] !== "false") !== Boolean(m[1]);
  }
  need(verbs, "exporter: verbs collector not disabled");
  need(String(ex.resources?.limits?.["rdma/hca_shared_devices_a"]) === "1",
    'exporter: limit rdma/hca_shared_devices_a: "1" (the uverbs device nodes)');
}
for (const b of bad) console.error(`${file}: policy: ${b}`);
process.exit(bad.length ? 1 : 0);
