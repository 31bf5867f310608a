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
  need(pod.securityContext?.runAsNonRoot === true, "pod runAsNonRoot");
  const hostPorts = [];
  for (const c of pod.containers) {
    const sc = c.securityContext ?? {};
    const name = `container ${c.name}`;
    need(sc.runAsNonRoot !== false, `${name}: runAsNonRoot not overridden`);
    need(sc.readOnlyRootFilesystem === true, `${name}: readOnlyRootFilesystem`);
    need(sc.allowPrivilegeEscalation === false, `${name}: allowPrivilegeEscalation false`);
    need(sc.privileged !== true, `${name}: not privileged`);
    need(JSON.stringify(sc.capabilities?.drop) === '["ALL"]', `${name}: drops ALL capabilities`);
    need(!sc.capabilities?.add, `${name}: adds no capability`);
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
    need(ex.livenessProbe?.httpGet?.path === "/-/healthy", "liveness probe /-/healthy");
    need(ex.readinessProbe?.httpGet?.path === "/-/ready", "readiness probe /-/ready");
  }
}
for (const b of bad) console.error(`${file}: policy: ${b}`);
process.exit(bad.length ? 1 : 0);
