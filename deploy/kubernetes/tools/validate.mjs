// Validates rendered Kubernetes manifests offline:
//   1. every document must be a kind that kubernetes-models or @kubernetes-models/prometheus-operator
//      knows, and pass its validate() (JSON schema: types, required fields, enums, formats);
//   2. a strict TypeScript type-check of every document as an object literal of the kind's
//      interface (I<Kind>), which rejects unknown fields at any depth (validate() accepts them);
//   3. the groups of every PrometheusRule are written to RULES_DIR/<name>.yaml for
//      `promtool check rules`.
// Usage: node validate.mjs RULES_DIR FILE.yaml...   Exit 1 with every problem listed.
//        node validate.mjs --expect-invalid RULES_DIR FILE.yaml...   Exit 1 unless every file
//        has a problem (the self-test of the checks).
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import ts from "typescript";

const args = process.argv.slice(2);
const expectInvalid = args[0] === "--expect-invalid";
if (expectInvalid) args.shift();
const [rulesDir, ...files] = args;
if (!rulesDir || files.length === 0) {
  console.error("usage: node validate.mjs RULES_DIR FILE.yaml...");
  process.exit(2);
}
const here = path.dirname(fileURLToPath(import.meta.url));

// apiVersion -> module directory: "v1" -> kubernetes-models/v1, "apps/v1" -> kubernetes-models/apps/v1,
// "monitoring.coreos.com/v1" -> @kubernetes-models/prometheus-operator/monitoring.coreos.com/v1.
function modulePath(apiVersion, kind) {
  const pkg = apiVersion.startsWith("monitoring.coreos.com/")
    ? "@kubernetes-models/prometheus-operator"
    : "kubernetes-models";
  return `${pkg}/${apiVersion}/${kind}`;
}

const problems = [];
const badFiles = new Set();
const problem = (file, text) => {
  problems.push(text);
  badFiles.add(file);
};
const checkDir = fs.mkdtempSync(path.join(here, ".check-"));
const tsFiles = [];
let count = 0;
fs.mkdirSync(rulesDir, { recursive: true });
try {
  for (const file of files) {
    const docs = YAML.parseAllDocuments(fs.readFileSync(file, "utf8"));
    for (const [i, d] of docs.entries()) {
      if (d.errors.length) {
        problem(file, `${file} #${i}: YAML: ${d.errors.map((e) => e.message).join("; ")}`);
        continue;
      }
      const obj = d.toJS();
      if (obj === null) continue; // empty document
      count++;
      const where = `${path.basename(file)} ${obj.kind}/${obj.metadata?.name}`;
      if (typeof obj.apiVersion !== "string" || typeof obj.kind !== "string") {
        problem(file, `${where}: no apiVersion/kind`);
        continue;
      }
      const mod = modulePath(obj.apiVersion, obj.kind);
      let Model;
      try {
        Model = (await import(mod))[obj.kind];
      } catch {
        problem(file, `${where}: no model for ${obj.apiVersion} ${obj.kind} (${mod})`);
        continue;
      }
      try {
        new Model(obj).validate();
      } catch (e) {
        problem(file, `${where}: validate(): ${e.message}`);
      }
      const tsFile = path.join(checkDir, `doc${tsFiles.length}.ts`);
      fs.writeFileSync(
        tsFile,
        `// ${where}\nimport type { I${obj.kind} } from "${mod}";\n` +
          `export const doc: I${obj.kind} = ${JSON.stringify(obj, null, 2)};\n`,
      );
      tsFiles.push({ tsFile, where, file });
      if (obj.kind === "PrometheusRule") {
        fs.writeFileSync(
          path.join(rulesDir, `${obj.metadata.name}.yaml`),
          YAML.stringify({ groups: obj.spec?.groups ?? [] }, { lineWidth: 0 }),
        );
      }
    }
  }
  if (tsFiles.length) {
    const program = ts.createProgram(
      tsFiles.map((f) => f.tsFile),
      {
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        target: ts.ScriptTarget.ES2022,
        types: [],
      },
    );
    for (const diag of ts.getPreEmitDiagnostics(program)) {
      const f = tsFiles.find((t) => diag.file && path.resolve(diag.file.fileName) === t.tsFile);
      const pos = diag.file && diag.start !== undefined
        ? diag.file.getLineAndCharacterOfPosition(diag.start) : null;
      const line = pos ? diag.file.text.split("\n")[pos.line].trim() : "";
      problem(
        f ? f.file : "tsc",
        `${f ? f.where : diag.file?.fileName ?? "tsc"}: TypeScript: ` +
          `${ts.flattenDiagnosticMessageText(diag.messageText, " ")}${line ? ` (at: ${line})` : ""}`,
      );
    }
  }
} finally {
  fs.rmSync(checkDir, { recursive: true, force: true });
}
if (expectInvalid) {
  const accepted = files.filter((f) => !badFiles.has(f));
  for (const f of files) {
    console.log(`${path.basename(f)}: ${badFiles.has(f) ? "rejected" : "ACCEPTED"}`);
  }
  process.exit(accepted.length ? 1 : 0);
}
for (const p of problems) console.error(p);
console.log(`${count} documents, ${problems.length} problems`);
process.exit(problems.length || count === 0 ? 1 : 0);
