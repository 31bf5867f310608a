// Grafana dashboards (modern JSON schema, Prometheus datasource variable, cluster / node /
// device variables): fabric overview, node/HCA drilldown, exporter self-health. Panels read the
// recording rules of rules.libsonnet where one exists.
{
  local c = $._config,
  local r = 'rate' + c.rateWindow,
  local ds = { type: 'prometheus', uid: '${datasource}' },
  // Selectors: raw exporter series, and recording rules (which keep the target labels).
  local sel = '%s, %s=~"$cluster", %s=~"$node"' % [c.selector, c.clusterLabel, c.nodeLabel],
  local selDev = sel + ', device=~"$device"',
  local rsel = '%s=~"$cluster", %s=~"$node"' % [c.clusterLabel, c.nodeLabel],
  local rselDev = rsel + ', device=~"$device"',
  local node = '{{%s}}' % c.nodeLabel,
  local f(s) = s % { sel: sel, selDev: selDev, rsel: rsel, rselDev: rselDev, r: r, node: c.nodeLabel, cluster: c.clusterLabel },

  local target(expr, legend='', instant=false) = {
    datasource: ds,
    expr: expr,
    legendFormat: legend,
    range: !instant,
    instant: instant,
    [if instant then 'format']: 'table',
  },
  local withRefIds(targets) = [
    targets[i] { refId: std.char(std.codepoint('A') + i) }
    for i in std.range(0, std.length(targets) - 1)
  ],

  local timeseries(title, targets, unit, description='', log=false) = {
    type: 'timeseries',
    title: title,
    description: description,
    datasource: ds,
    targets: withRefIds(targets),
    fieldConfig: {
      defaults: {
        unit: unit,
        custom: {
          drawStyle: 'line',
          lineWidth: 1,
          fillOpacity: 10,
          showPoints: 'never',
          spanNulls: false,
          [if log then 'scaleDistribution']: { type: 'log', log: 10 },
        },
      },
      overrides: [],
    },
    options: {
      legend: { showLegend: true, displayMode: 'table', placement: 'bottom', calcs: ['lastNotNull', 'max'] },
      tooltip: { mode: 'multi', sort: 'desc' },
    },
  },

  // Thresholds: [[value or null, color], ...]
  local steps(list) = { mode: 'absolute', steps: [{ value: s[0], color: s[1] } for s in list] },
  local stat(title, expr, unit, thresholds, description='') = {
    type: 'stat',
    title: title,
    description: description,
    datasource: ds,
    targets: withRefIds([target(expr, instant=true) { format: 'time_series' }]),
    fieldConfig: { defaults: { unit: unit, thresholds: steps(thresholds) }, overrides: [] },
    options: {
      reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
      orientation: 'auto',
      textMode: 'auto',
      colorMode: 'background',
      graphMode: 'none',
      justifyMode: 'auto',
      wideLayout: true,
      showPercentChange: false,
      percentChangeColorMode: 'standard',
    },
  },

  // An instant table of one or more queries merged on their labels. `unit` is the unit of every
  // value column; `columns` sets single columns: [[column name, display name, unit, extra field
  // properties], ...] (one query: its value column is `Value`; several: `Value #A`, `Value #B`...).
  local column(name, displayName, unit, extra=[]) = {
    matcher: { id: 'byName', options: name },
    properties: [{ id: 'displayName', value: displayName }, { id: 'unit', value: unit }] + extra,
  },
  local colored(mappingsOrNull=null) =
    [{ id: 'custom.cellOptions', value: { type: 'color-background', mode: 'basic' } }]
    + (if mappingsOrNull == null then [] else [{ id: 'mappings', value: mappingsOrNull }]),
  local table(title, targets, description='', hide=[], unit='none', columns=[]) = {
    type: 'table',
    title: title,
    description: description,
    datasource: ds,
    targets: withRefIds(targets),
    fieldConfig: {
      defaults: { unit: unit },
      overrides: [column(col[0], col[1], col[2], if std.length(col) > 3 then col[3] else []) for col in columns],
    },
    options: { showHeader: true, cellHeight: 'sm', frameIndex: 0 },
    transformations: [
      { id: 'merge', options: {} },
      { id: 'organize', options: { excludeByName: { [h]: true for h in ['Time', '__name__', 'job'] + hide } } },
    ],
  },

  // A node x rail grid ("heatmap" of the current value): one instant query whose series carry
  // the node label and `rail`, pivoted into one row per node and one column per rail; each cell
  // is colored by its value on a continuous scale from `min` to `max` (unit `unit`).
  local matrix(title, expr, unit, max, description='', scheme='continuous-GrYlRd') = {
    type: 'table',
    title: title,
    description: description,
    datasource: ds,
    targets: withRefIds([target(expr, instant=true)]),
    fieldConfig: {
      defaults: {
        unit: unit,
        min: 0,
        max: max,
        decimals: 1,
        color: { mode: scheme },
        custom: { align: 'center', inspect: false, cellOptions: { type: 'color-background', mode: 'gradient' } },
      },
      overrides: [{
        matcher: { id: 'byName', options: '%s\\rail' % c.nodeLabel },
        properties: [{ id: 'displayName', value: 'node' }, { id: 'custom.cellOptions', value: { type: 'auto' } }, { id: 'custom.align', value: 'left' }],
      }],
    },
    options: { showHeader: true, cellHeight: 'sm', frameIndex: 0 },
    transformations: [
      { id: 'groupingToMatrix', options: { columnField: 'rail', rowField: c.nodeLabel, valueField: 'Value', emptyValue: 'null' } },
    ],
  },

  local row(title) = { type: 'row', title: title, collapsed: false, panels: [] },

  // Lays panels out in rows of the given widths (24 columns): [[panel, width, height], ...] per
  // row; a row panel takes a full line. Assigns ids.
  local layout(rows) =
    local flat = std.foldl(
      function(acc, rw)
        if std.isObject(rw) then
          { y: acc.y + 1, panels: acc.panels + [rw { gridPos: { x: 0, y: acc.y, w: 24, h: 1 } }] }
        else
          local h = std.foldl(function(m, p) std.max(m, p[2]), rw, 0);
          local xs = std.foldl(function(a, p) a + [a[std.length(a) - 1] + p[1]], rw, [0]);
          {
            y: acc.y + h,
            panels: acc.panels + [
              rw[i][0] { gridPos: { x: xs[i], y: acc.y, w: rw[i][1], h: rw[i][2] } }
              for i in std.range(0, std.length(rw) - 1)
            ],
          },
      rows,
      { y: 0, panels: [] }
    ).panels;
    [flat[i] { id: i + 1 } for i in std.range(0, std.length(flat) - 1)],

  local variables(withDevice, multiNode) = [
    {
      type: 'datasource',
      name: 'datasource',
      label: 'Data source',
      query: 'prometheus',
      current: { text: 'default', value: 'default' },
      hide: 0,
      refresh: 1,
      regex: '',
      options: [],
    },
    {
      type: 'query',
      name: 'cluster',
      label: 'Cluster',
      datasource: ds,
      query: { query: 'label_values(rdma_exporter_build_info{%s}, %s)' % [c.selector, c.clusterLabel], refId: 'cluster' },
      current: { text: 'All', value: '$__all' },
      includeAll: true,
      allValue: '.*',
      multi: true,
      refresh: 2,
      sort: 1,
      hide: 0,
      options: [],
    },
    {
      type: 'query',
      name: 'node',
      label: 'Node',
      datasource: ds,
      query: { query: 'label_values(rdma_exporter_build_info{%s, %s=~"$cluster"}, %s)' % [c.selector, c.clusterLabel, c.nodeLabel], refId: 'node' },
      current: if multiNode then { text: 'All', value: '$__all' } else { text: '', value: '' },
      includeAll: multiNode,
      [if multiNode then 'allValue']: '.*',
      multi: multiNode,
      refresh: 2,
      sort: 1,
      hide: 0,
      options: [],
    },
  ] + (if withDevice then [
         {
           type: 'query',
           name: 'device',
           label: 'Device',
           datasource: ds,
           query: { query: 'label_values(rdma_device_info{%s}, device)' % sel, refId: 'device' },
           current: { text: 'All', value: '$__all' },
           includeAll: true,
           allValue: '.*',
           multi: true,
           refresh: 2,
           sort: 1,
           hide: 0,
           options: [],
         },
       ] else []),

  // Link events as annotations on the time-series panels (Prometheus annotation queries: a mark
  // wherever the expression has a value). The 2m window at a 1m step misses no event.
  local annotation(name, color, expr, title) = {
    name: name,
    datasource: ds,
    enable: true,
    hide: false,
    iconColor: color,
    expr: f(expr),
    step: '1m',
    titleFormat: title,
    textFormat: node,
    tagKeys: '%s,device,port' % c.nodeLabel,
    useValueForTime: false,
  },
  local linkEvents = [
    annotation('Port down/up', 'red', 'changes(rdma_port_up{%(sel)s}[2m]) > 0', 'Port {{device}}/{{port}} went down or up'),
    annotation('link_downed', 'orange', 'increase(rdma_port_link_downed_total{%(sel)s}[2m]) > 0', 'link_downed on {{device}}/{{port}}: the link retrained (kills running jobs)'),
    annotation('Carrier / PHY link down', 'yellow', 'increase(rdma_phy_link_down_events_total{%(sel)s}[2m]) > 0 or increase(rdma_netdev_carrier_down_total{%(sel)s}[2m]) > 0', 'Link down on {{device}}/{{port}} {{netdev}}'),
    annotation('Transceiver module events', 'purple', 'increase(rdma_module_events_total{%(sel)s}[2m]) > 0', 'Module {{event}} on {{device}}/{{port}} {{netdev}}'),
  ],

  local dashboard(uid, title, description, rows, withDevice, multiNode, annotations=[], vars=null) = {
    uid: c.dashboardUidPrefix + uid,
    title: title,
    description: description,
    tags: c.dashboardTags,
    editable: true,
    graphTooltip: 1,
    schemaVersion: 39,
    refresh: c.dashboardRefresh,
    time: { from: c.dashboardTimeFrom, to: 'now' },
    timezone: 'browser',
    links: [{ title: 'RDMA dashboards', type: 'dashboards', tags: ['rdma_exporter'], asDropdown: true, includeVars: true, keepTime: true, icon: 'external link', tooltip: '', url: '', targetBlank: false }],
    annotations: { list: annotations },
    templating: { list: if vars != null then vars else variables(withDevice, multiNode) },
    panels: layout(rows),
  },

  local okMapping = [{ type: 'value', options: { '0': { text: 'FAIL', color: 'red', index: 0 }, '1': { text: 'ok', color: 'green', index: 1 } } }],

  // ---- rail expressions (fabric overview and node drilldown) ------------------------------
  // Utilisation of a rail = the busier direction's data rate / the port's line rate, in %.
  // `by` lists the labels kept (always with `rail`, from device_port:rdma_rail:info).
  local railJoin = '* on (%(cluster)s, %(node)s, device, port) group_left (rail) device_port:rdma_rail:info{%(rsel)s}',
  // Placeholders of the rail templates, left for f(); `dev` = also filter on $device.
  local railArgs(by, dev) = { by: by, join: railJoin, r: '%(r)s', rsel: if dev then '%(rselDev)s' else '%(rsel)s' },
  local railUtil(by, dev=false) = f(|||
    100 * max by (%(by)s) (
      (
        label_replace(device_port:rdma_port_data_transmitted_bytes:%(r)s{%(rsel)s}, "direction", "tx", "", "")
        or
        label_replace(device_port:rdma_port_data_received_bytes:%(r)s{%(rsel)s}, "direction", "rx", "", "")
      )
        / on (%(cluster)s, %(node)s, device, port) group_left () (rdma_port_rate_bytes_per_second{%(sel)s} > 0)
        %(join)s
    )
  ||| % railArgs(by, dev) { cluster: '%(cluster)s', node: '%(node)s', sel: if dev then '%(selDev)s' else '%(sel)s' }),
  // Pause signals hurt the job whichever port they come from (a storage NIC or a LAG that storms
  // pauses the same switch): these keep every port, a rail under its rail name and any other port
  // as "device/port", so the matrix shows a column for it too.
  local railOrPort(by, dev, allPorts) = f(|||
    max by (%(by)s) (
      (EXPR) %(join)s
      %(others)s
    )
  ||| % railArgs(by, dev) {
    others: if allPorts then |||
      or
      label_join((EXPR) unless on (%(cluster)s, %(node)s, device, port) device_port:rdma_rail:info{%(rsel)s}, "rail", "/", "device", "port")
    ||| % railArgs(by, dev) { cluster: '%(cluster)s', node: '%(node)s' } else '',
  }),
  local withSel(expr, dev) = std.strReplace(expr, 'RSEL', if dev then '%(rselDev)s' else '%(rsel)s'),
  // Paused by the fabric (victim): the rx PFC pause share (RoCE) or, on InfiniBand, the share
  // of time the port had data but no credits (port_xmit_wait): the same "the fabric holds me
  // back" signal on both link layers.
  local railVictim(by, dev=false, allPorts=true) = std.strReplace(railOrPort(by, dev, allPorts), 'EXPR', f(withSel(|||
    device_port_priority:rdma_pfc_pause_ratio:%(r)s{RSEL, direction="rx"}
        or
        device_port:rdma_port_transmit_wait_ratio:%(r)s{RSEL}
  |||, dev))),
  // This NIC pauses the fabric (culprit): tx PFC pause share (RoCE only: InfiniBand has no
  // host-side equivalent; a receiver that cannot drain shows as its peers' xmit wait).
  local railCulprit(by, dev=false, allPorts=true) = std.strReplace(railOrPort(by, dev, allPorts), 'EXPR', f(withSel(|||
    device_port_priority:rdma_pfc_pause_ratio:%(r)s{RSEL, direction="tx"}
  |||, dev))),
  local railErrors(by, dev=false) = f(|||
    sum by (%(by)s) (
      device_port:rdma_port_errors:%(r)s{%(rsel)s}
      %(join)s
    )
  ||| % railArgs(by, dev)),
  local byNodeRail = '%s, %s, rail' % [c.clusterLabel, c.nodeLabel],
  local byPortRail = '%s, %s, device, port, rail' % [c.clusterLabel, c.nodeLabel],
  local railLegend = node + ' {{rail}}',

  // PCIe link speed in GT/s, named by generation (PCIe base specification rates).
  local pcieGen = [{
    type: 'value',
    options: {
      [g[0]]: { text: 'Gen%d (%s GT/s)' % [g[1], g[0]], index: g[1] - 1 }
      for g in [['2.5', 1], ['5', 2], ['8', 3], ['16', 4], ['32', 5], ['64', 6]]
    },
  }],
  local pcieColumns = [
    ['Value #A', 'PCIe speed', 'suffix: GT/s', [{ id: 'mappings', value: pcieGen }]],
    ['Value #B', 'expected speed', 'suffix: GT/s', [{ id: 'mappings', value: pcieGen }]],
    ['Value #C', 'width', 'suffix: lanes'],
    ['Value #D', 'expected width', 'suffix: lanes'],
    ['Value #E', 'speed × width vs expected', 'percent', [
      { id: 'thresholds', value: steps([[null, 'red'], [100, 'green']]) },
      { id: 'custom.cellOptions', value: { type: 'color-background', mode: 'basic' } },
    ]],
  ],
  // The PCIe targets of a device selector `s` (raw series) and `rs` (recording rules), limited to
  // `only` (a vector whose device labels to keep).
  // Every target carries the device's firmware and HCA type, so the merged rows line up.
  local pcieTargets(s, rs, only) = [
    target(f('(' + e + ') * on (%(cluster)s, %(node)s, device) group_left (hca_type, fw_ver) rdma_device_info{' + s + '}'), instant=true)
    for e in [
      e + ' and on (%(cluster)s, %(node)s, device) ' + only
      for e in [
        'max by (%(cluster)s, %(node)s, device) (rdma_pcie_link_transfers_per_second{' + s + ', kind="current"}) / 1e9',
        'device:rdma_pcie_expected_link_transfers_per_second:min{' + rs + '} / 1e9',
        'max by (%(cluster)s, %(node)s, device) (rdma_pcie_link_width_lanes{' + s + ', kind="current"})',
        'device:rdma_pcie_expected_link_width_lanes:min{' + rs + '}',
      ]
    ] + [only]
  ],
  // Bandwidth of the PCIe link (speed × width) as % of what card and slot both support.
  local pcieRatio(s, rs) = std.strReplace(std.strReplace(|||
    100 * (
      max by (%(cluster)s, %(node)s, device) (rdma_pcie_link_transfers_per_second{SEL, kind="current"})
      * max by (%(cluster)s, %(node)s, device) (rdma_pcie_link_width_lanes{SEL, kind="current"})
    )
    / on (%(cluster)s, %(node)s, device) (
      device:rdma_pcie_expected_link_transfers_per_second:min{RSEL} * device:rdma_pcie_expected_link_width_lanes:min{RSEL}
    )
  |||, 'RSEL', rs), 'SEL', s),

  // ---- fabric overview -------------------------------------------------------------------

  local overview = dashboard(
    'fabric-overview',
    'RDMA / Fabric overview',
    'Which node or rail slows the job: node × rail grids of utilisation, pause (culprit and victim) and errors, the slowest rails, top error and pause sources, firmware and PCIe, RoCE checks and active alerts (rdma_exporter).',
    [
      row('Ports'),
      [
        [stat('Nodes', f('count(count by (%(node)s) (rdma_exporter_build_info{%(sel)s}))'), 'none', [[null, 'blue']]), 4, 4],
        [stat('Rails up', f('sum(node:rdma_rails_up:sum{%(rsel)s}) / sum(node:rdma_rails:count{%(rsel)s})'), 'percentunit', [[null, 'red'], [1, 'green']], 'Rail ports up (ACTIVE and LinkUp) out of all rails (device_port:rdma_rail:info).'), 4, 4],
        [stat('Ports down', f('count(rdma_port_up{%(sel)s} == 0) or vector(0)'), 'none', [[null, 'green'], [1, 'red']], 'Ports not ACTIVE / LinkUp (rails and others).'), 4, 4],
        [stat('Degraded links', f(|||
           count(
             device_port:rdma_port_rate_bytes_per_second:by_hca_type{%(rsel)s}
               < on (%(cluster)s, hca_type, link_layer) group_left () hca_type:rdma_port_rate_bytes_per_second:median
           ) or vector(0)
         |||), 'none', [[null, 'green'], [1, 'orange']], 'Up ports running below the median rate of their HCA type in the fleet.'), 4, 4],
        [stat('PCIe downtrained', f(|||
           count(
             rdma_pcie_link_width_lanes{%(sel)s, kind="current"}
               < on (%(cluster)s, %(node)s, device) group_left () device:rdma_pcie_expected_link_width_lanes:min
             or
             rdma_pcie_link_transfers_per_second{%(sel)s, kind="current"}
               < on (%(cluster)s, %(node)s, device) group_left () device:rdma_pcie_expected_link_transfers_per_second:min
           ) or vector(0)
         |||), 'none', [[null, 'green'], [1, 'orange']], 'PCIe links below min(card maximum, slot maximum) in width or speed.'), 4, 4],
        [stat('Firing alerts', f('count(ALERTS{alertstate="firing", alertname=~"Rdma.*", %(cluster)s=~"$cluster"}) or vector(0)'), 'none', [[null, 'green'], [1, 'red']]), 4, 4],
      ],
      row('Which node / rail is slow now (node × rail)'),
      [
        [matrix('Rail utilisation (% of line rate)', railUtil(byNodeRail), 'percent', 100, 'Busier direction of each rail as % of its line rate (rdma_port_rate_bytes_per_second), 5m rate. Collectives move equal bytes per rail: a rail clearly below its siblings of the same node, or a node below the others of the job, is the slow one.', 'continuous-BlPu'), 8, 10],
        [matrix('Paused by the fabric (victim)', railVictim(byNodeRail), 'percentunit', 1, 'Share of time the rail was held back by its peer: RoCE rx PFC pause (highest priority), InfiniBand port_xmit_wait. A whole column or leaf of victims points at the fabric or at the culprit that pauses it.'), 8, 10],
        [matrix('Rail errors (per second)', railErrors(byNodeRail), 'cps', 10, 'Error and drop counters of the rail summed (device_port:rdma_port_errors): PMA, PHY and transport. Any steady non-zero cell is worth a look at the node dashboard.'), 8, 10],
      ],
      [
        [matrix('Pausing the fabric (culprit, RoCE tx pause)', railCulprit(byNodeRail), 'percentunit', 1, 'Share of time the rail sent PFC pause (highest priority): this NIC cannot drain and stops its switch port, which spreads to the victims. InfiniBand rails have no such counter (empty cells).'), 8, 10],
        [timeseries('Rail utilisation across the fleet', [
          target('max(%s)' % railUtil(byPortRail), 'max'),
          target('quantile(0.5, %s)' % railUtil(byPortRail), 'median'),
          target('quantile(0.1, %s)' % railUtil(byPortRail), '10th percentile'),
          target('min(%s)' % railUtil(byPortRail), 'min'),
        ], 'percent', 'Distribution of rail utilisation over all selected rails instead of one line per rail: a min far below the median is a slow rail (see "Least utilised rails").'), 8, 10],
        [timeseries('Least utilised rails', [target('bottomk(10, %s)' % railUtil(byPortRail), railLegend)], 'percent', 'The 10 rails with the lowest utilisation (% of line rate). In a running job these are the rails NCCL waits for.'), 8, 10],
      ],
      row('Throughput'),
      [
        [timeseries('Fabric throughput', [
          target(f('sum(node:rdma_port_data_transmitted_bytes:%(r)s{%(rsel)s})'), 'transmit'),
          target(f('sum(node:rdma_port_data_received_bytes:%(r)s{%(rsel)s})'), 'receive'),
        ], 'Bps', 'All selected nodes together.'), 12, 8],
        [timeseries('Busiest nodes (transmit)', [target(f('topk(10, node:rdma_port_data_transmitted_bytes:%(r)s{%(rsel)s})'), node)], 'Bps', 'The 10 nodes sending most (all ports).'), 12, 8],
      ],
      row('Errors and congestion'),
      [
        [timeseries('Top error sources', [target(f('topk(10, device_port:rdma_port_errors:%(r)s{%(rsel)s})'), node + ' {{device}}/{{port}} {{counter}}')], 'cps', 'Error and drop counters per second, the 10 highest (PMA, PHY, transport).'), 8, 9],
        [timeseries('Top TX pause: pausing the fabric (culprit)', [target(f('topk(10, device_port_priority:rdma_pfc_pause_ratio:%(r)s{%(rsel)s, direction="tx"})'), node + ' {{device}} prio {{priority}}')], 'percentunit', 'Share of wall time this NIC sent PFC pause: it cannot drain (host, PCIe, stuck receive pipeline) and stops its switch port. Fix these first.'), 8, 9],
        [timeseries('Top RX pause: paused by the fabric (victim)', [target(f('topk(10, device_port_priority:rdma_pfc_pause_ratio:%(r)s{%(rsel)s, direction="rx"})'), node + ' {{device}} prio {{priority}}')], 'percentunit', 'Share of wall time the switch paused this NIC: congestion or a culprit elsewhere in the fabric.'), 8, 9],
      ],
      [
        [timeseries('Top ECN / CNP nodes', [target(f('topk(10, sum by (%(node)s, counter) (device_port:rdma_congestion_packets:%(r)s{%(rsel)s}))'), node + ' {{counter}}')], 'pps', 'The 10 highest node/counter pairs of ECN-marked packets and CNPs sent and handled (DCQCN at work; normal under incast).'), 6, 9],
        [timeseries('Rail balance (lowest)', [target(f('bottomk(10, device_port:rdma_rail_traffic_ratio:%(r)s{%(rsel)s})'), node + ' {{device}}/{{port}}')], 'percentunit', 'Traffic of each rail relative to the median rail of its node; a rail far below 100 % was dropped by NCCL.'), 6, 9],
        [timeseries('InfiniBand lost bandwidth (xmit wait)', [target(f('topk(10, device_port:rdma_port_transmit_wait_ratio:%(r)s{%(rsel)s})'), node + ' {{device}}/{{port}}')], 'percentunit', 'Share of time the port had data but no credits. port_xmit_wait is 32-bit and saturates on congested fast ports: no value while it is saturated (see rdma_port_counters_saturated), never a false 0.'), 6, 9],
        [timeseries('Effective bit error rate (highest)', [target(f('topk(10, device_port:rdma_effective_bit_error_rate:%(r)s{%(rsel)s})'), node + ' {{device}}/{{port}}')], 'sci', 'Post-FEC errors per bit of line rate.', log=true), 6, 9],
      ],
      row('Firmware and PCIe'),
      [
        [table('Firmware versions', [target(f('count by (hca_type, board_id, fw_ver) (rdma_device_info{%(sel)s, physfn=""})'), instant=true)], 'Physical functions per (HCA type, board, firmware). More than one firmware per HCA type is drift: NVIDIA support asks for the current firmware first.', unit='none', columns=[['Value', 'devices', 'none']]), 10, 9],
        [table('PCIe links, slowest first', pcieTargets(sel, rsel, f('bottomk(20, %s)' % pcieRatio(sel, rsel))), 'The 20 devices with the lowest PCIe bandwidth (speed × width) relative to what card and slot both support (device:rdma_pcie_expected_link_*:min). Below 100 %: downtrained (reseat, slot, BIOS).', unit='none', columns=pcieColumns), 14, 9],
      ],
      row('Switches (LLDP)'),
      [
        // Ports grouped by the switch at the other end (lldp, ib_peer): many degraded ports
        // behind one switch point at the switch (RdmaSwitchPortsDegraded).
        local onPort = 'on (%s, %s, device, port)' % [c.clusterLabel, c.nodeLabel];
        local peers = f('max by (%(cluster)s, %(node)s, device, port, peer_description) (rdma_port_peer_info{%(sel)s, peer_description!=""})');
        local zero = 'count by (peer_description) (%s) * 0' % peers;
        [table('Ports by switch', [
          target('count by (peer_description) (%s)' % peers, instant=true),
          target('count by (peer_description) (%s and %s (rdma_port_up{%s} == 0)) or %s' % [peers, onPort, sel, zero], instant=true),
          target('count by (peer_description) (%s and %s (device_port:rdma_effective_bit_error_rate:%s{%s} > %g)) or %s' % [peers, onPort, r, rsel, c.thresholds.bitErrorRateTicket, zero], instant=true),
        ], 'RDMA ports per link peer (switch: LLDP system name or InfiniBand node description), how many are down and how many run a bit error rate above the ticket level. Empty without the lldp and ib_peer collectors (--collector.lldp, --collector.ib_peer).', columns=[['Value #A', 'ports', 'none'], ['Value #B', 'down', 'none'], ['Value #C', 'BER above ticket', 'none']]), 24, 8],
      ],
      row('Configuration and alerts'),
      [
        [table('RoCE configuration checks', [target(f('min by (%(node)s, check) (rdma_roce_config_ok{%(sel)s})'), instant=true)], 'Worst result of each check per node: FAIL if any port fails it.', columns=[['Value', 'result', 'none', colored(okMapping)]]), 10, 9],
        [table('Active alerts', [target(f('ALERTS{alertstate="firing", alertname=~"Rdma.*", %(cluster)s=~"$cluster"}'), instant=true)], 'Firing rdma_exporter alerts.', hide=['Value', 'alertstate']), 14, 9],
      ],
    ],
    withDevice=false,
    multiNode=true,
    annotations=linkEvents,
  ),

  // ---- node / HCA drilldown ---------------------------------------------------------------

  local portLegend = '{{device}}/{{port}}',
  local upMapping = [{ type: 'value', options: { '0': { text: 'DOWN', color: 'red', index: 0 }, '1': { text: 'up', color: 'green', index: 1 } } }],
  local drilldown = dashboard(
    'node',
    'RDMA / Node and HCA',
    'Rails of one node (utilisation, pause as culprit and victim, errors), per-port throughput and packets, PMA and hw counters, PFC per priority, ECN/CNP, PHY/FEC, firmware and PCIe, GID table and netdev state, with link events as annotations (rdma_exporter).',
    [
      row('Ports and rails'),
      [
        [table('Ports', [
          target(f('rdma_port_up{%(selDev)s} * on (%(cluster)s, %(node)s, device, port) group_left (link_layer, netdev) rdma_port_info{%(selDev)s}'), instant=true) { legendFormat: 'up' },
          target(f('rdma_port_rate_bytes_per_second{%(selDev)s}'), instant=true),
          target(f('rdma_port_link_width_lanes{%(selDev)s}'), instant=true),
        ], 'State (up = ACTIVE and LinkUp), line rate and link width of every port.', columns=[
          ['Value #A', 'state', 'none', colored(upMapping)],
          ['Value #B', 'line rate', 'Bps'],
          ['Value #C', 'width', 'suffix: lanes'],
        ]), 12, 8],
        [table('Rails', [
          target(railUtil(byPortRail, dev=true), instant=true),
          target(railVictim(byPortRail, dev=true, allPorts=false), instant=true),
          target(railErrors(byPortRail, dev=true), instant=true),
        ], 'The rail ports of the node (device_port:rdma_rail:info) now: utilisation of the busier direction as % of line rate, share of time held back by the fabric (RoCE rx PFC pause, InfiniBand port_xmit_wait) and errors per second. A rail below its siblings in utilisation, or above them in pause or errors, is the slow one.', columns=[
          ['Value #A', 'utilisation', 'percent', [{ id: 'custom.cellOptions', value: { type: 'gauge', mode: 'basic' } }, { id: 'min', value: 0 }, { id: 'max', value: 100 }]],
          ['Value #B', 'paused by the fabric', 'percentunit', colored() + [{ id: 'thresholds', value: steps([[null, 'green'], [0.1, 'orange'], [0.5, 'red']]) }]],
          ['Value #C', 'errors', 'cps', colored() + [{ id: 'thresholds', value: steps([[null, 'green'], [0.001, 'orange'], [1, 'red']]) }]],
        ]), 12, 8],
      ],
      [
        [timeseries('Rail utilisation', [target(railUtil(byPortRail, dev=true), '{{rail}}')], 'percent', 'Busier direction of each rail as % of its line rate. Collectives move equal bytes per rail: the lines should lie on top of each other.'), 12, 8],
        [timeseries('Port up', [target(f('rdma_port_up{%(selDev)s}'), portLegend)], 'none', '1 = ACTIVE and LinkUp.'), 12, 8],
      ],
      row('Traffic'),
      [
        [timeseries('Throughput per port', [
          target(f('device_port:rdma_port_data_transmitted_bytes:%(r)s{%(rselDev)s}'), portLegend + ' tx'),
          target(f('device_port:rdma_port_data_received_bytes:%(r)s{%(rselDev)s}'), portLegend + ' rx'),
        ], 'Bps'), 12, 8],
        [timeseries('Packets per port', [
          target(f('device_port:rdma_port_packets_transmitted:%(r)s{%(rselDev)s}'), portLegend + ' tx'),
          target(f('device_port:rdma_port_packets_received:%(r)s{%(rselDev)s}'), portLegend + ' rx'),
        ], 'pps'), 12, 8],
      ],
      row('Errors (PMA and hw counters)'),
      [
        [timeseries('Link and PMA errors (highest 10)', [target(f('topk(10, device_port:rdma_port_errors:%(r)s{%(rselDev)s, counter=~"symbol_error|link_error_recovery|link_downed|port_rcv_.*|port_xmit_.*|local_link_integrity_errors|excessive_buffer_overrun_errors|VL15_dropped"})'), portLegend + ' {{counter}}')], 'cps', 'The 10 highest port/counter pairs of the node (about ten counters per port).'), 12, 8],
        [timeseries('Transport (hw counters, highest 10)', [target(f('topk(10, device_port:rdma_port_errors:%(r)s{%(rselDev)s, counter=~"out_of_buffer|out_of_sequence|packet_seq_err|local_ack_timeout_err|req_.*|resp_.*|rnr_nak_retry_err|duplicate_request|implied_nak_seq_err|retry_exceeded_err|rcvd_seq_err|completer_retry_err"})'), portLegend + ' {{counter}}')], 'cps', 'The 10 highest port/counter pairs of the node.'), 12, 8],
      ],
      row('Lossless fabric (RoCE)'),
      [
        [timeseries('TX pause: pausing the fabric (culprit)', [target(f('device_port_priority:rdma_pfc_pause_ratio:%(r)s{%(rselDev)s, direction="tx"}'), '{{device}} prio {{priority}}')], 'percentunit', 'Share of wall time this NIC sent PFC pause on the priority: the host cannot drain (PCIe, stuck receive pipeline) and stops its switch port.'), 8, 8],
        [timeseries('RX pause: paused by the fabric (victim)', [target(f('device_port_priority:rdma_pfc_pause_ratio:%(r)s{%(rselDev)s, direction="rx"}'), '{{device}} prio {{priority}}')], 'percentunit', 'Share of wall time the switch paused this NIC: congestion, or a culprit elsewhere.'), 8, 8],
        [timeseries('PFC pause frames', [target(f('device_port_priority:rdma_pfc_pause_frames:%(r)s{%(rselDev)s}'), '{{device}} {{direction}} prio {{priority}}')], 'pps'), 8, 8],
      ],
      [
        [timeseries('Traffic per priority', [target(f('device_port_priority:rdma_priority_bytes:%(r)s{%(rselDev)s}'), '{{device}} {{direction}} prio {{priority}}')], 'Bps'), 6, 8],
        [timeseries('Discards per priority (highest 10)', [target(f('topk(10, device_port_priority:rdma_priority_discards:%(r)s{%(rselDev)s})'), '{{device}} prio {{priority}} {{reason}}')], 'pps'), 6, 8],
        [timeseries('ECN / CNP', [
          target(f('device_port:rdma_congestion_packets:%(r)s{%(rselDev)s}'), portLegend + ' {{counter}}'),
          target(f('device_port_priority:rdma_priority_ecn_marked_packets:%(r)s{%(rselDev)s}'), '{{device}} prio {{priority}} marked'),
        ], 'pps'), 6, 8],
        [table('RoCE configuration checks', [target(f('rdma_roce_config_ok{%(selDev)s}'), instant=true)], 'Result of every check per port.', columns=[['Value', 'result', 'none', colored(okMapping)]]), 6, 8],
      ],
      row('PHY, FEC, firmware and PCIe'),
      [
        [timeseries('Bit error rate', [
          target(f('device_port:rdma_phy_pre_fec_bit_error_rate:%(r)s{%(rselDev)s}'), portLegend + ' pre-FEC'),
          target(f('device_port:rdma_effective_bit_error_rate:%(r)s{%(rselDev)s}'), portLegend + ' effective'),
        ], 'sci', 'Pre-FEC (corrected bits) and effective (post-FEC) bit error rate per bit of line rate.', log=true), 8, 8],
        [timeseries('PCIe outbound stalls', [target(f('rdma_pcie_outbound_stalled_ratio{%(selDev)s}'), '{{device}} {{kind}}')], 'percentunit', 'Share of the last second the NIC could not write to (or read from) host memory over PCIe (mlx5 outbound_pci_stalled_rd/wr): the host side cannot keep up.'), 8, 8],
        [timeseries('PCIe AER errors', [target(f('sum by (device, class) (rate(rdma_pcie_aer_errors_total{%(selDev)s}[$__rate_interval]))'), '{{device}} {{class}}')], 'cps', 'AER error reports per second by class (correctable, nonfatal, fatal).'), 8, 8],
      ],
      [
        [table('Firmware and PCIe', pcieTargets(selDev, rselDev, f(pcieRatio(selDev, rselDev))), 'Firmware, PCIe speed (Gen) and width of every device against what card and slot both support (device:rdma_pcie_expected_link_*:min). Below 100 %: downtrained (reseat, slot, BIOS).', columns=pcieColumns), 24, 8],
      ],
      row('GIDs and netdevs'),
      [
        [table('GID table', [target(f('rdma_gid_info{%(selDev)s}'), instant=true)], 'As show_gids: index, GID, type and netdev of every non-empty entry.', hide=['Value', 'cluster']), 12, 9],
        [table('Netdevs', [
          target(f('rdma_netdev_up{%(selDev)s}'), instant=true),
          target(f('rdma_netdev_mtu_bytes{%(selDev)s}'), instant=true),
          target(f('increase(rdma_netdev_carrier_changes_total{%(selDev)s}[$__range])'), instant=true),
        ], 'Operstate, MTU and carrier changes in the time range.', columns=[
          ['Value #A', 'operstate', 'none', colored(upMapping)],
          ['Value #B', 'MTU', 'bytes'],
          ['Value #C', 'carrier changes', 'short'],
        ]), 12, 9],
      ],
      [
        [timeseries('InfiniBand transmit wait (lost bandwidth)', [target(f('device_port:rdma_port_transmit_wait_ratio:%(r)s{%(rselDev)s}'), portLegend)], 'percentunit', 'No value while the 32-bit port_xmit_wait is saturated (rdma_port_counters_saturated{counter="port_xmit_wait"} == 1): a stuck counter would read as no congestion.'), 12, 8],
        [timeseries('Rail balance', [target(f('device_port:rdma_rail_traffic_ratio:%(r)s{%(rselDev)s}'), portLegend)], 'percentunit', 'Traffic of the rail relative to the median rail of the node.'), 12, 8],
      ],
      [
        [timeseries('Transceiver temperature', [target(f('rdma_module_temperature_celsius{%(selDev)s}'), '{{device}}/{{port}} {{netdev}}')], 'celsius', 'Module temperature from its EEPROM (the module collector, CAP_NET_ADMIN); RdmaModuleTemperatureHigh compares it with the module\'s own high warning.'), 12, 8],
        [timeseries('Optical receive power per lane', [target(f('rdma_module_rx_power_watts{%(selDev)s}'), '{{device}}/{{port}} {{netdev}} lane {{lane}}')], 'watt', 'Received optical power of each lane (log scale). A lane far below its siblings is a dirty or damaged fibre (RdmaModuleLaneRxPowerDrift); below the module\'s low warning, RdmaModuleRxPowerLow.', log=true), 12, 8],
      ],
    ],
    withDevice=true,
    multiNode=false,
    annotations=linkEvents,
  ),

  // ---- exporter health ---------------------------------------------------------------------

  local health = dashboard(
    'exporter',
    'RDMA / Exporter health',
    'rdma_exporter self-metrics: scrapes, polls, collectors, read errors, resources.',
    [
      row('Exporters'),
      [
        [stat('Exporters up', f('sum(up{%(sel)s})'), 'none', [[null, 'green']]), 6, 4],
        [stat('Exporters down', f('count(up{%(sel)s} == 0) or vector(0)'), 'none', [[null, 'green'], [1, 'red']]), 6, 4],
        [stat('Failing collectors', f('count(rdma_exporter_collector_success{%(sel)s} == 0) or vector(0)'), 'none', [[null, 'green'], [1, 'orange']]), 6, 4],
        [stat('RDMA devices', f('sum(rdma_exporter_devices{%(sel)s})'), 'none', [[null, 'blue']]), 6, 4],
      ],
      row('Polls and scrapes'),
      [
        [timeseries('Poll duration (slowest 10)', [target(f('topk(10, rdma_exporter_poll_duration_seconds{%(sel)s})'), node)], 's'), 8, 8],
        [timeseries('Age of the last poll (oldest 10)', [target(f('topk(10, time() - rdma_exporter_last_poll_timestamp_seconds{%(sel)s})'), node)], 's', 'Stays below the poll interval while the poller runs.'), 8, 8],
        [timeseries('Scrape duration (slowest 10)', [target(f('topk(10, scrape_duration_seconds{%(sel)s})'), node)], 's'), 8, 8],
      ],
      [
        [timeseries('Collector duration (slowest 10)', [target(f('topk(10, rdma_exporter_collector_duration_seconds{%(sel)s})'), node + ' {{collector}}')], 's'), 8, 8],
        [timeseries('Read errors (highest 10)', [target(f(|||
           topk(10,
           sum by (%(node)s, collector, reason) (rate(rdma_exporter_read_errors_total{%(sel)s}[$__rate_interval]))
           or
           sum by (%(node)s) (rdma_exporter_build_info{%(sel)s}) * 0
           )
         |||), node + ' {{collector}} {{reason}}')], 'cps', 'Failed or unparsable reads per second, the 10 highest (0 per node when there are none).'), 8, 8],
        [table('Collectors', [target(f('rdma_exporter_collector_success{%(sel)s}'), instant=true)], 'Result of the last run of each collector.', columns=[['Value', 'result', 'none', colored(okMapping)]]), 8, 8],
      ],
      row('Resources'),
      [
        [timeseries('CPU (highest 10)', [target(f('topk(10, rate(process_cpu_seconds_total{%(sel)s}[$__rate_interval]))'), node)], 'percentunit', 'CPU seconds per second (1 = one core).'), 6, 8],
        [timeseries('Resident memory (highest 10)', [target(f('topk(10, process_resident_memory_bytes{%(sel)s})'), node)], 'bytes'), 6, 8],
        [timeseries('Series per scrape (highest 10)', [target(f('topk(10, scrape_samples_scraped{%(sel)s})'), node)], 'short'), 6, 8],
        [table('Versions', [target(f('rdma_exporter_build_info{%(sel)s}'), instant=true)], hide=['Value']), 6, 8],
      ],
    ],
    withDevice=false,
    multiNode=true,
  ),

  // ---- my job ------------------------------------------------------------------------------
  // A job owner's view: pick namespace and pod(s); the nodes and ports they can use
  // (rdma_pod_info, from the kubelet's pod-resources API), and those ports' health, traffic,
  // pause and errors. Every query is limited to the job's ports by `and on (...) jobPorts`.

  local podSel = '%s, %s=~"$cluster", namespace=~"$namespace", pod=~"$pod"' % [c.selector, c.clusterLabel],
  local jobPorts = 'on (%s, %s, device, port) group by (%s, %s, device, port) (rdma_pod_info{%s})' % [c.clusterLabel, c.nodeLabel, c.clusterLabel, c.nodeLabel, podSel],
  local podVariable(name, label, query) = {
    type: 'query',
    name: name,
    label: label,
    datasource: ds,
    query: { query: query, refId: name },
    current: { text: 'All', value: '$__all' },
    includeAll: true,
    allValue: '.*',
    multi: true,
    refresh: 2,
    sort: 1,
    hide: 0,
    options: [],
  },
  local jobVariables = [v for v in variables(false, true) if v.name != 'node'] + [
    podVariable('namespace', 'Namespace', 'label_values(rdma_pod_info{%s, %s=~"$cluster"}, namespace)' % [c.selector, c.clusterLabel]),
    podVariable('pod', 'Pod', 'label_values(rdma_pod_info{%s, %s=~"$cluster", namespace=~"$namespace"}, pod)' % [c.selector, c.clusterLabel]),
  ],
  local jobLegend = node + ' {{device}}/{{port}}',
  // No $node variable here: the job decides the nodes.
  local jsel = '%s, %s=~"$cluster"' % [c.selector, c.clusterLabel],
  local jrsel = '%s=~"$cluster"' % c.clusterLabel,
  local jf(s) = s % { jsel: jsel, jrsel: jrsel, r: r, node: c.nodeLabel, cluster: c.clusterLabel },
  local job = dashboard(
    'job',
    'RDMA / My job',
    'The RDMA ports a job (namespace, pods) can use, from the kubelet pod-resources API, and their health: down ports, firing alerts, traffic, pause and errors.',
    [
      row("The job's ports"),
      [
        [stat('Nodes', 'count(count by (%s, %s) (rdma_pod_info{%s}))' % [c.clusterLabel, c.nodeLabel, podSel], 'none', [[null, 'blue']]), 6, 4],
        [stat('Ports', 'count(%s)' % std.strReplace(jobPorts, 'on (%s, %s, device, port) ' % [c.clusterLabel, c.nodeLabel], ''), 'none', [[null, 'blue']]), 6, 4],
        [stat('Ports down', jf('count((rdma_port_up{%(jsel)s} == 0) and ') + jobPorts + ') or vector(0)', 'none', [[null, 'green'], [1, 'red']]), 6, 4],
        [stat('Firing alerts on its ports', 'count(ALERTS{alertstate="firing"} and %s) or vector(0)' % jobPorts, 'none', [[null, 'green'], [1, 'orange']]), 6, 4],
      ],
      [
        [table('Where the job runs', [target('rdma_pod_info{%s}' % podSel, instant=true)], 'Each container, the ports it can use and how: vf (an SR-IOV VF given to it), shared (a shared device plugin pool), gpu_affinity (the HCA nearest one of its GPUs).', hide=['Value', c.clusterLabel]), 12, 8],
        [table('Port state', [
          target(jf('rdma_port_up{%(jsel)s} and ') + jobPorts, instant=true),
          target(jf('rdma_port_rate_bytes_per_second{%(jsel)s} and ') + jobPorts, instant=true),
        ], 'Link state and rate of each of its ports.', hide=[c.clusterLabel], columns=[
          ['Value #A', 'state', 'none', colored([{ type: 'value', options: { '0': { text: 'DOWN', color: 'red', index: 0 }, '1': { text: 'up', color: 'green', index: 1 } } }])],
          ['Value #B', 'rate', 'Bps'],
        ]), 12, 8],
      ],
      [
        [table('Firing alerts on its ports', [target('ALERTS{alertstate="firing"} and %s' % jobPorts, instant=true)], 'Alerts of the rdma_exporter rules on the ports the job can use.', hide=['Value', 'alertstate', c.clusterLabel]), 24, 7],
      ],
      row('Traffic, pause and errors'),
      [
        [timeseries('Data sent', [target(jf('device_port:rdma_port_data_transmitted_bytes:%(r)s{%(jrsel)s} and ') + jobPorts, jobLegend)], 'Bps'), 8, 8],
        [timeseries('Paused by the fabric', [target(jf('(device_port_priority:rdma_pfc_pause_ratio:%(r)s{%(jrsel)s, direction="rx"} or device_port:rdma_port_transmit_wait_ratio:%(r)s{%(jrsel)s}) and ') + jobPorts, jobLegend + ' {{priority}}')], 'percentunit', 'Share of time each port was held back: PFC pause received (RoCE) or transmit wait (InfiniBand).'), 8, 8],
        [timeseries('Errors and drops', [target(jf('sum by (%(cluster)s, %(node)s, device, port) (device_port:rdma_port_errors:%(r)s{%(jrsel)s}) and ') + jobPorts, jobLegend)], 'cps', 'Link, receive, discard and transport error counters of each port, per second.'), 8, 8],
      ],
    ],
    withDevice=false,
    multiNode=true,
    vars=jobVariables,
  ),

  grafanaDashboards+:: {
    'rdma-fabric-overview.json': overview,
    'rdma-node.json': drilldown,
    'rdma-exporter.json': health,
    'rdma-job.json': job,
  },
}
