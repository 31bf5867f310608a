// Type-checks every Grafana dashboard in the given directory against @grafana/schema: the
// dashboard as `Dashboard`, and each panel's options and field config as the types of its
// panel plugin (timeseries, stat, table). Writes one TypeScript file per dashboard with the
// JSON as typed object literals (so excess-property checks catch unknown fields and string
// unions catch bad enum values) and runs `tsc --noEmit --strict` on them.
// Usage: node check.mjs DASHBOARD_DIR WORK_DIR   (WORK_DIR holds node_modules from `npm ci`)
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';

const [dir, work] = process.argv.slice(2);
if (!dir || !work) {
  console.error('usage: node check.mjs DASHBOARD_DIR WORK_DIR');
  process.exit(2);
}
const cfg = '@grafana/schema/dist/esm/raw/composable';
const pluginTypes = {
  timeseries: 'Json<PluginPanel<TimeSeriesOptions, TimeSeriesFieldConfig>>',
  stat: 'Json<PluginPanel<StatOptions, {}>>',
  table: 'Json<PluginPanel<TableOptions, TableFieldConfig>>',
};
const header = `import type { AnnotationQuery, Dashboard, Panel, RowPanel } from '@grafana/schema';
import type { Options as TimeSeriesOptions, FieldConfig as TimeSeriesFieldConfig } from '${cfg}/timeseries/panelcfg/x/TimeSeriesPanelCfg_types.gen';
import type { Options as StatOptions } from '${cfg}/stat/panelcfg/x/StatPanelCfg_types.gen';
import type { Options as TableOptions, FieldConfig as TableFieldConfig } from '${cfg}/table/panelcfg/x/TablePanelCfg_types.gen';
// JSON holds the values of TypeScript enums, not enum members: map each enum type to the union
// of its values (string enums) or of its numbers (numeric enums); everything else is unchanged.
type Json<T> = T extends string ? \`\${T}\`
  : T extends number ? (\`\${T}\` extends \`\${infer N extends number}\` ? N : number)
  : T extends object ? { [K in keyof T]: Json<T[K]> }
  : T;
// Panel<O, F> types only the field config by F; the options are checked here too.
type PluginPanel<O, F> = Omit<Panel<O, F>, 'options'> & { options: O };
// A Prometheus annotation query keeps its query fields next to the generic ones (Grafana's
// Prometheus data source reads them there); @grafana/schema types only the generic part.
type PrometheusAnnotation = Json<Omit<AnnotationQuery, 'target'>> & {
  expr: string; step?: string; titleFormat?: string; textFormat?: string; tagKeys?: string;
  useValueForTime?: boolean;
};
type CheckedDashboard = Omit<Json<Dashboard>, 'annotations'> & { annotations?: { list?: PrometheusAnnotation[] } };
`;
const files = [];
let panels = 0;
for (const name of readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
  const d = JSON.parse(readFileSync(join(dir, name), 'utf8'));
  let ts = header + `export const dashboard: CheckedDashboard = ${JSON.stringify(d, null, 2)};\n`;
  for (const [i, p] of (d.panels || []).entries()) {
    const type = p.type === 'row' ? 'Json<RowPanel>' : pluginTypes[p.type];
    if (!type) {
      console.error(`${name}: panel "${p.title}" has type ${p.type}, not checked by this script`);
      process.exit(1);
    }
    ts += `export const panel${i}: ${type} = ${JSON.stringify(p, null, 2)};\n`;
    panels++;
  }
  const out = join(work, name.replace(/\.json$/, '.ts'));
  writeFileSync(out, ts);
  files.push(out);
}
if (files.length === 0) {
  console.error(`no dashboards in ${dir}`);
  process.exit(1);
}
const tsc = join(work, 'node_modules', 'typescript', 'bin', 'tsc');
try {
  execFileSync(process.execPath, [tsc, '--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext',
    '--moduleResolution', 'nodenext', '--skipLibCheck', ...files], { cwd: work, stdio: 'inherit' });
} catch (e) {
  console.error('dashboards do not match @grafana/schema');
  process.exit(1);
}
console.log(`${files.length} dashboards, ${panels} panels match @grafana/schema`);
