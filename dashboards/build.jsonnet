// Generates the rule files of dashboards/out (run ./generate.sh, never by hand):
//   rdma_exporter.rules.yaml       every recording and alert group, one Prometheus rule file
//   test/rdma_exporter.rules.yaml  the same rules with the short windows of test-config.libsonnet
//   node-page-thresholds.json      the node page's levels (node-page.libsonnet), compiled in
// (dashboards-build.jsonnet writes out/dashboards/*.json.)
local yaml = import 'yaml.libsonnet';
local mixin = import 'mixin.libsonnet';
local testMixin = mixin + (import 'test-config.libsonnet');
local nodePage = import 'node-page.libsonnet';

local ruleFile(m) = yaml.ruleFile({ groups: m.prometheusRules.groups + m.prometheusAlerts.groups });

{
  'rdma_exporter.rules.yaml': ruleFile(mixin),
  'test/rdma_exporter.rules.yaml': ruleFile(testMixin),
  'node-page-thresholds.json': std.manifestJsonEx(nodePage(mixin._config), '  ') + '\n',
}
