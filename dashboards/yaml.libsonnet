// A small YAML writer for Prometheus rule files. std.manifestYamlDoc of jsonnet 0.18 escapes
// strings character by character in interpreted code and takes tens of seconds on the rule
// file; here strings are quoted by the native JSON writer (std.toString of an array), and
// JSON-quoted strings are valid YAML double-quoted scalars.
local quote(s) = local j = std.toString([s]); std.substr(j, 1, std.length(j) - 2);

// A string with line breaks becomes a literal block scalar (`|`), indented by `ind`.
local scalar(s, ind) =
  if std.isString(s) && std.strReplace(s, '\n', '') != s then
    local body = if s[std.length(s) - 1] == '\n' then std.substr(s, 0, std.length(s) - 1) else s;
    '|\n' + ind + std.strReplace(body, '\n', '\n' + ind)
  else if std.isString(s) then quote(s)
  else std.toString(s);

// A flat map of strings (labels, annotations), keys sorted.
local map(m, ind) = std.join('', [
  '\n%s%s: %s' % [ind, k, scalar(m[k], ind + '  ')]
  for k in std.objectFields(m)
]);

local rule(r) =
  local ind = '        ';
  local head = if std.objectHas(r, 'alert') then 'alert: ' + quote(r.alert) else 'record: ' + quote(r.record);
  '      - ' + head
  + '\n' + ind + 'expr: ' + scalar(r.expr, ind + '  ')
  + (if std.objectHas(r, 'for') then '\n' + ind + 'for: ' + quote(r['for']) else '')
  + (if std.objectHas(r, 'keep_firing_for') then '\n' + ind + 'keep_firing_for: ' + quote(r.keep_firing_for) else '')
  + (if std.objectHas(r, 'labels') then '\n' + ind + 'labels:' + map(r.labels, ind + '  ') else '')
  + (if std.objectHas(r, 'annotations') then '\n' + ind + 'annotations:' + map(r.annotations, ind + '  ') else '')
  + '\n';

{
  // { groups: [{ name, rules: [...] }] } -> the text of a Prometheus rule file.
  ruleFile(doc)::
    'groups:\n' + std.join('', [
      '  - name: ' + quote(g.name) + '\n    rules:\n' + std.join('', [rule(r) for r in g.rules])
      for g in doc.groups
    ]),
}
