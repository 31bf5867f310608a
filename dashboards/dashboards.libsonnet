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

  // An instant table of one or more queries merged on their labels.
  local table(title, targets, description='', hide=[]) = {
    type: 'table',
    title: title,
    description: description,
    datasource: ds,
    targets: withRefIds(targets),
    fieldConfig: {
      defaults: {},
      overrides: [],
    },
    options: { showHeader: true, cellHeight: 'sm', frameIndex: 0 },
    transformations: [
      { id: 'merge', options: {} },
      { id: 'organize', options: { excludeByName: { [h]: true for h in ['Time', '__name__', 'job'] + hide } } },
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

  local dashboard(uid, title, description, rows, withDevice, multiNode) = {
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
    annotations: { list: [] },
    templating: { list: variables(withDevice, multiNode) },
    panels: layout(rows),
  },

  local okMapping = [{ type: 'value', options: { '0': { text: 'FAIL', color: 'red', index: 0 }, '1': { text: 'ok', color: 'green', index: 1 } } }],

  // ---- fabric overview -------------------------------------------------------------------

  local overview = dashboard(
    'fabric-overview',
    'RDMA / Fabric overview',
    'Ports up and down, degraded links, throughput per node, top error and pause sources, RoCE checks and active alerts (rdma_exporter).',
    [
      row('Ports'),
      [
        [stat('Nodes', f('count(count by (%(node)s) (rdma_exporter_build_info{%(sel)s}))'), 'none', [[null, 'blue']]), 4, 4],
        [stat('Ports up', f('sum(rdma_port_up{%(sel)s})'), 'none', [[null, 'green']]), 4, 4],
        [stat('Ports down', f('count(rdma_port_up{%(sel)s} == 0) or vector(0)'), 'none', [[null, 'green'], [1, 'red']], 'Ports not ACTIVE / LinkUp.'), 4, 4],
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
      row('Throughput'),
      [
        [timeseries('Transmit per node', [target(f('node:rdma_port_data_transmitted_bytes:%(r)s{%(rsel)s}'), node)], 'Bps'), 12, 8],
        [timeseries('Receive per node', [target(f('node:rdma_port_data_received_bytes:%(r)s{%(rsel)s}'), node)], 'Bps'), 12, 8],
      ],
      row('Errors and congestion'),
      [
        [timeseries('Top error sources', [target(f('topk(10, device_port:rdma_port_errors:%(r)s{%(rsel)s})'), node + ' {{device}}/{{port}} {{counter}}')], 'cps', 'Error and drop counters per second, the 10 highest (PMA, PHY, transport).'), 8, 9],
        [timeseries('Top PFC pause sources', [target(f('topk(10, device_port_priority:rdma_pfc_pause_ratio:%(r)s{%(rsel)s})'), node + ' {{device}} {{direction}} prio {{priority}}')], 'percentunit', 'Share of wall time paused (tx: this NIC pauses its peer; rx: paused by the fabric).'), 8, 9],
        [timeseries('ECN / CNP per node', [target(f('sum by (%(node)s, counter) (device_port:rdma_congestion_packets:%(r)s{%(rsel)s})'), node + ' {{counter}}')], 'pps'), 8, 9],
      ],
      [
        [timeseries('Rail balance (lowest)', [target(f('bottomk(10, device_port:rdma_rail_traffic_ratio:%(r)s{%(rsel)s})'), node + ' {{device}}/{{port}}')], 'percentunit', 'Traffic of each rail relative to the median rail of its node; a rail far below 100 % was dropped by NCCL.'), 8, 9],
        [timeseries('InfiniBand lost bandwidth (xmit wait)', [target(f('topk(10, device_port:rdma_port_transmit_wait_ratio:%(r)s{%(rsel)s})'), node + ' {{device}}/{{port}}')], 'percentunit', 'Share of time the port had data but no credits. port_xmit_wait is 32-bit and saturates on congested fast ports: no value while it is saturated (see rdma_port_counters_saturated), never a false 0.'), 8, 9],
        [timeseries('Effective bit error rate (highest)', [target(f('topk(10, device_port:rdma_effective_bit_error_rate:%(r)s{%(rsel)s})'), node + ' {{device}}/{{port}}')], 'sci', 'Post-FEC errors per bit of line rate.', log=true), 8, 9],
      ],
      row('Configuration and alerts'),
      [
        [table('RoCE configuration checks', [target(f('min by (%(node)s, check) (rdma_roce_config_ok{%(sel)s})'), instant=true)], 'Worst result of each check per node: FAIL if any port fails it.') {
          fieldConfig+: { overrides: [{ matcher: { id: 'byName', options: 'Value' }, properties: [{ id: 'mappings', value: okMapping }, { id: 'custom.cellOptions', value: { type: 'color-background' } }] }] },
        }, 10, 9],
        [table('Active alerts', [target(f('ALERTS{alertstate="firing", alertname=~"Rdma.*", %(cluster)s=~"$cluster"}'), instant=true)], 'Firing rdma_exporter alerts.', hide=['Value', 'alertstate']), 14, 9],
      ],
    ],
    withDevice=false,
    multiNode=true,
  ),

  // ---- node / HCA drilldown ---------------------------------------------------------------

  local portLegend = '{{device}}/{{port}}',
  local drilldown = dashboard(
    'node',
    'RDMA / Node and HCA',
    'Per-port throughput and packets, PMA and hw counters, PFC per priority, ECN/CNP, PHY/FEC, PCIe, GID table and netdev state of one node (rdma_exporter).',
    [
      row('Ports'),
      [
        [table('Ports', [
          target(f('rdma_port_up{%(selDev)s} * on (%(cluster)s, %(node)s, device, port) group_left (link_layer, netdev) rdma_port_info{%(selDev)s}'), instant=true) { legendFormat: 'up' },
          target(f('rdma_port_rate_bytes_per_second{%(selDev)s}'), instant=true),
          target(f('rdma_port_link_width_lanes{%(selDev)s}'), instant=true),
        ], 'Up (1 = ACTIVE and LinkUp), rate (bytes/s), width (lanes).'), 12, 8],
        [timeseries('Port up', [target(f('rdma_port_up{%(selDev)s}'), portLegend)], 'none'), 12, 8],
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
        [timeseries('Link and PMA errors', [target(f('device_port:rdma_port_errors:%(r)s{%(rselDev)s, counter=~"symbol_error|link_error_recovery|link_downed|port_rcv_.*|port_xmit_.*|local_link_integrity_errors|excessive_buffer_overrun_errors|VL15_dropped"}'), portLegend + ' {{counter}}')], 'cps'), 12, 8],
        [timeseries('Transport (hw counters)', [target(f('device_port:rdma_port_errors:%(r)s{%(rselDev)s, counter=~"out_of_buffer|out_of_sequence|packet_seq_err|local_ack_timeout_err|req_.*|resp_.*|rnr_nak_retry_err|duplicate_request|implied_nak_seq_err|retry_exceeded_err|rcvd_seq_err|completer_retry_err"}'), portLegend + ' {{counter}}')], 'cps'), 12, 8],
      ],
      row('Lossless fabric (RoCE)'),
      [
        [timeseries('PFC pause share per priority', [target(f('device_port_priority:rdma_pfc_pause_ratio:%(r)s{%(rselDev)s}'), '{{device}} {{direction}} prio {{priority}}')], 'percentunit'), 8, 8],
        [timeseries('PFC pause frames', [target(f('device_port_priority:rdma_pfc_pause_frames:%(r)s{%(rselDev)s}'), '{{device}} {{direction}} prio {{priority}}')], 'pps'), 8, 8],
        [timeseries('Traffic per priority', [target(f('device_port_priority:rdma_priority_bytes:%(r)s{%(rselDev)s}'), '{{device}} {{direction}} prio {{priority}}')], 'Bps'), 8, 8],
      ],
      [
        [timeseries('Discards per priority', [target(f('device_port_priority:rdma_priority_discards:%(r)s{%(rselDev)s}'), '{{device}} prio {{priority}} {{reason}}')], 'pps'), 8, 8],
        [timeseries('ECN / CNP', [
          target(f('device_port:rdma_congestion_packets:%(r)s{%(rselDev)s}'), portLegend + ' {{counter}}'),
          target(f('device_port_priority:rdma_priority_ecn_marked_packets:%(r)s{%(rselDev)s}'), '{{device}} prio {{priority}} marked'),
        ], 'pps'), 8, 8],
        [table('RoCE configuration checks', [target(f('rdma_roce_config_ok{%(selDev)s}'), instant=true)]) {
          fieldConfig+: { overrides: [{ matcher: { id: 'byName', options: 'Value' }, properties: [{ id: 'mappings', value: okMapping }, { id: 'custom.cellOptions', value: { type: 'color-background' } }] }] },
        }, 8, 8],
      ],
      row('PHY, FEC and PCIe'),
      [
        [timeseries('Bit error rate', [
          target(f('device_port:rdma_phy_pre_fec_bit_error_rate:%(r)s{%(rselDev)s}'), portLegend + ' pre-FEC'),
          target(f('device_port:rdma_effective_bit_error_rate:%(r)s{%(rselDev)s}'), portLegend + ' effective'),
        ], 'sci', 'Pre-FEC (corrected bits) and effective (post-FEC) bit error rate per bit of line rate.', log=true), 8, 8],
        [timeseries('PCIe link', [
          target(f('rdma_pcie_link_width_lanes{%(selDev)s}'), '{{device}} width {{kind}}'),
          target(f('rdma_pcie_upstream_max_link_width_lanes{%(selDev)s}'), '{{device}} width slot max'),
        ], 'none', 'Current and maximum PCIe width of the card and the maximum of its slot (upstream port); a current below the lower maximum is a downtrained link.'), 8, 8],
        [timeseries('PCIe stalls and AER', [
          target(f('rdma_pcie_outbound_stalled_ratio{%(selDev)s}'), '{{device}} stalled {{kind}}'),
          target(f('sum by (device, severity) (rate(rdma_pcie_aer_errors_total{%(selDev)s}[$__rate_interval]))'), '{{device}} AER {{severity}}/s'),
        ], 'short'), 8, 8],
      ],
      row('GIDs and netdevs'),
      [
        [table('GID table', [target(f('rdma_gid_info{%(selDev)s}'), instant=true)], 'As show_gids: index, GID, type and netdev of every non-empty entry.', hide=['Value', 'cluster']), 12, 9],
        [table('Netdevs', [
          target(f('rdma_netdev_up{%(selDev)s}'), instant=true),
          target(f('rdma_netdev_mtu_bytes{%(selDev)s}'), instant=true),
          target(f('increase(rdma_netdev_carrier_changes_total{%(selDev)s}[$__range])'), instant=true),
        ], 'Operstate up, MTU, carrier changes in the time range.'), 12, 9],
      ],
      [
        [timeseries('InfiniBand transmit wait (lost bandwidth)', [target(f('device_port:rdma_port_transmit_wait_ratio:%(r)s{%(rselDev)s}'), portLegend)], 'percentunit', 'No value while the 32-bit port_xmit_wait is saturated (rdma_port_counters_saturated{counter="port_xmit_wait"} == 1): a stuck counter would read as no congestion.'), 12, 8],
        [timeseries('Rail balance', [target(f('device_port:rdma_rail_traffic_ratio:%(r)s{%(rselDev)s}'), portLegend)], 'percentunit', 'Traffic of the rail relative to the median rail of the node.'), 12, 8],
      ],
    ],
    withDevice=true,
    multiNode=false,
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
        [timeseries('Poll duration', [target(f('rdma_exporter_poll_duration_seconds{%(sel)s}'), node)], 's'), 8, 8],
        [timeseries('Age of the last poll', [target(f('time() - rdma_exporter_last_poll_timestamp_seconds{%(sel)s}'), node)], 's', 'Stays below the poll interval while the poller runs.'), 8, 8],
        [timeseries('Scrape duration', [target(f('scrape_duration_seconds{%(sel)s}'), node)], 's'), 8, 8],
      ],
      [
        [timeseries('Collector duration', [target(f('rdma_exporter_collector_duration_seconds{%(sel)s}'), node + ' {{collector}}')], 's'), 8, 8],
        [timeseries('Read errors', [target(f(|||
           sum by (%(node)s, collector, reason) (rate(rdma_exporter_read_errors_total{%(sel)s}[$__rate_interval]))
           or
           sum by (%(node)s) (rdma_exporter_build_info{%(sel)s}) * 0
         |||), node + ' {{collector}} {{reason}}')], 'cps', 'Failed or unparsable reads per second (0 per node when there are none).'), 8, 8],
        [table('Collectors', [target(f('rdma_exporter_collector_success{%(sel)s}'), instant=true)], '1 = ran.') {
          fieldConfig+: { overrides: [{ matcher: { id: 'byName', options: 'Value' }, properties: [{ id: 'mappings', value: okMapping }, { id: 'custom.cellOptions', value: { type: 'color-background' } }] }] },
        }, 8, 8],
      ],
      row('Resources'),
      [
        [timeseries('CPU', [target(f('rate(process_cpu_seconds_total{%(sel)s}[$__rate_interval])'), node)], 'percentunit'), 6, 8],
        [timeseries('Resident memory', [target(f('process_resident_memory_bytes{%(sel)s}'), node)], 'bytes'), 6, 8],
        [timeseries('Series per scrape', [target(f('scrape_samples_scraped{%(sel)s}'), node)], 'short'), 6, 8],
        [table('Versions', [target(f('rdma_exporter_build_info{%(sel)s}'), instant=true)], hide=['Value']), 6, 8],
      ],
    ],
    withDevice=false,
    multiNode=true,
  ),

  grafanaDashboards+:: {
    'rdma-fabric-overview.json': overview,
    'rdma-node.json': drilldown,
    'rdma-exporter.json': health,
  },
}
