// Generates out/dashboards/<name>.json (run ./generate.sh). Written by jsonnet's native JSON
// writer (without -S), which is fast.
local mixin = import 'mixin.libsonnet';
{
  ['dashboards/' + name]: mixin.grafanaDashboards[name]
  for name in std.objectFields(mixin.grafanaDashboards)
}
