// Recording and alerting rules of rdma_exporter, built from _config (config.libsonnet).
// Every expression takes its selectors, windows and thresholds from there.
{
  local c = $._config,
  local t = c.thresholds,
  local w = c.windows,
  // Values for the templates below: '%(sel)s' % v etc.
  local v = c + t {
    winFlap: w.flap,
    winLinkDowned: w.linkDowned,
    winPhysicalErrors: w.physicalErrors,
    winTransport: w.transport,
    winStormEvents: w.stormEvents,
    winInventoryCarry: w.inventoryCarry,
    winLaneErrors: w.laneErrors,
    winModuleEvents: w.moduleEvents,
    // --- link/physical ---
    winLinkDownedOnce: w.linkDownedOnce,
    winBerTicket: w.bitErrorRateTicket,
    winPreFecRange: w.preFecBaselineRange,
    winPreFecOffset: w.preFecBaselineOffset,
    winPreFecStep: w.preFecBaselineStep,
    winPcieAer: w.pcieAer,
    winPcieSignalIntegrity: w.pcieSignalIntegrity,
    winTransmitWaitSaturated: w.transmitWaitSaturated,
    onPortCounter: 'on (%s, %s, device, port, counter)' % [c.clusterLabel, c.nodeLabel],
    sel: c.selector,
    w: c.rateWindow,
    r: 'rate' + c.rateWindow,  // recording rule suffix
    node: '%s, %s' % [c.clusterLabel, c.nodeLabel],
    onNode: 'on (%s, %s)' % [c.clusterLabel, c.nodeLabel],
    onDev: 'on (%s, %s, device)' % [c.clusterLabel, c.nodeLabel],
    onPort: 'on (%s, %s, device, port)' % [c.clusterLabel, c.nodeLabel],
  },
  local fmt(s) = s % v,

  // ---- recording rules -------------------------------------------------------------------

  // [counter label, metric, has a netdev label]: error and drop counters recorded as one family
  // device_port:rdma_port_errors:rate<w>{counter="<name as sysfs / ethtool -S shows it>"}.
  local errorCounters = [
    ['symbol_error', 'rdma_port_symbol_errors_total', false],
    ['link_error_recovery', 'rdma_port_link_error_recovery_total', false],
    ['link_downed', 'rdma_port_link_downed_total', false],
    ['port_rcv_errors', 'rdma_port_receive_errors_total', false],
    ['port_rcv_remote_physical_errors', 'rdma_port_receive_remote_physical_errors_total', false],
    ['port_rcv_switch_relay_errors', 'rdma_port_receive_switch_relay_errors_total', false],
    ['port_xmit_discards', 'rdma_port_transmit_discards_total', false],
    ['port_xmit_constraint_errors', 'rdma_port_transmit_constraint_errors_total', false],
    ['port_rcv_constraint_errors', 'rdma_port_receive_constraint_errors_total', false],
    ['local_link_integrity_errors', 'rdma_port_local_link_integrity_errors_total', false],
    ['excessive_buffer_overrun_errors', 'rdma_port_excessive_buffer_overrun_errors_total', false],
    ['VL15_dropped', 'rdma_port_vl15_dropped_total', false],
    ['rx_symbol_err_phy', 'rdma_phy_symbol_errors_total', true],
    ['rx_crc_errors_phy', 'rdma_phy_crc_errors_total', true],
    ['rx_pcs_symbol_err_phy', 'rdma_phy_uncorrectable_symbol_errors_total', true],
    ['link_down_events_phy', 'rdma_phy_link_down_events_total', true],
    ['rx_discards_phy', 'rdma_phy_receive_discards_total', true],
    ['out_of_buffer', 'rdma_hw_out_of_buffer_total', false],
    ['out_of_sequence', 'rdma_hw_out_of_sequence_total', false],
    ['packet_seq_err', 'rdma_hw_packet_seq_err_total', false],
    ['local_ack_timeout_err', 'rdma_hw_local_ack_timeout_err_total', false],
    ['req_transport_retries_exceeded', 'rdma_hw_req_transport_retries_exceeded_total', false],
    ['req_rnr_retries_exceeded', 'rdma_hw_req_rnr_retries_exceeded_total', false],
    ['rnr_nak_retry_err', 'rdma_hw_rnr_nak_retry_err_total', false],
    ['duplicate_request', 'rdma_hw_duplicate_request_total', false],
    ['implied_nak_seq_err', 'rdma_hw_implied_nak_seq_err_total', false],
    ['req_cqe_error', 'rdma_hw_req_cqe_error_total', false],
    ['resp_cqe_error', 'rdma_hw_resp_cqe_error_total', false],
    // rxe names of the transport counters
    ['retry_exceeded_err', 'rdma_hw_retry_exceeded_err_total', false],
    ['rcvd_seq_err', 'rdma_hw_rcvd_seq_err_total', false],
    ['completer_retry_err', 'rdma_hw_completer_retry_err_total', false],
  ],
  local congestionCounters = [
    ['np_ecn_marked_roce_packets', 'rdma_hw_np_ecn_marked_roce_packets_total'],
    ['np_cnp_sent', 'rdma_hw_np_cnp_sent_total'],
    ['rp_cnp_handled', 'rdma_hw_rp_cnp_handled_total'],
  ],

  local portRules = [
    { record: fmt('device_port:rdma_port_data_transmitted_bytes:%(r)s'), expr: fmt('rate(rdma_port_data_transmitted_bytes_total{%(sel)s}[%(w)s])') },
    { record: fmt('device_port:rdma_port_data_received_bytes:%(r)s'), expr: fmt('rate(rdma_port_data_received_bytes_total{%(sel)s}[%(w)s])') },
    { record: fmt('device_port:rdma_port_packets_transmitted:%(r)s'), expr: fmt('rate(rdma_port_packets_transmitted_total{%(sel)s}[%(w)s])') },
    { record: fmt('device_port:rdma_port_packets_received:%(r)s'), expr: fmt('rate(rdma_port_packets_received_total{%(sel)s}[%(w)s])') },
    {
      // Both directions: the load a rail carries.
      record: fmt('device_port:rdma_port_traffic_bytes:%(r)s'),
      expr: fmt('device_port:rdma_port_data_transmitted_bytes:%(r)s + device_port:rdma_port_data_received_bytes:%(r)s'),
    },
  ] + [
    {
      record: fmt('device_port:rdma_port_errors:%(r)s'),
      expr: if e[2] then
        fmt('sum without (netdev) (rate(%s{%%(sel)s}[%%(w)s]))' % e[1])
      else
        fmt('rate(%s{%%(sel)s}[%%(w)s])' % e[1]),
      labels: { counter: e[0] },
    }
    for e in errorCounters
  ] + [
    {
      record: fmt('device_port:rdma_congestion_packets:%(r)s'),
      expr: fmt('rate(%s{%%(sel)s}[%%(w)s])' % e[1]),
      labels: { counter: e[0] },
    }
    for e in congestionCounters
  ] + [
    {
      // Lost bandwidth on InfiniBand: share of time the port had data but no credits.
      // port_xmit_wait is 32-bit (PortCounters in every kernel table) and saturates within
      // seconds on a congested NDR port: once it sits at 2^32-1 its rate reads 0 (or the part of
      // the window before it stopped), which looks like "no congestion". No value at all while
      // it was saturated at any time in the window; RdmaPortTransmitWaitHigh then reads the
      // saturation itself as evidence of waiting.
      record: fmt('device_port:rdma_port_transmit_wait_ratio:%(r)s'),
      expr: fmt(|||
        (
          rate(rdma_port_transmit_wait_ticks_total{%(sel)s}[%(w)s]) * %(xmitWaitBytesPerTick)g
            / (rdma_port_rate_bytes_per_second{%(sel)s} > 0)
          and %(onPort)s rdma_port_info{%(sel)s, link_layer="InfiniBand"}
        )
        unless %(onPort)s
        max_over_time(rdma_port_counters_saturated{%(sel)s, counter="port_xmit_wait"}[%(w)s]) == 1
      |||),
    },
    {
      // The same link seen from the leaf: the share of time the switch port had data for this
      // HCA but no credits (its 64-bit PortXmitWait from its PMA, read by the ib_peer collector
      // in the slow tier; no saturation). A slow receiver: PCIe or host memory cannot drain.
      record: fmt('device_port:rdma_port_peer_transmit_wait_ratio:%(r)s'),
      expr: fmt(|||
        rate(rdma_port_peer_transmit_wait_ticks_total{%(sel)s}[%(w)s]) * %(xmitWaitBytesPerTick)g
          / (rdma_port_rate_bytes_per_second{%(sel)s} > 0)
      |||),
    },
  ] + [
    // Effective (post-FEC) bit error rate: InfiniBand symbol errors (on HDR/NDR the errors left
    // after FEC) or Ethernet PHY uncorrectable symbols, per bit of line rate; `counter` names
    // the counter. The 5m rate feeds the drain level and the dashboards, the ticket window
    // (1h) makes a handful of errors on a fast link measurable.
    {
      record: 'device_port:rdma_effective_bit_error_rate:rate' + window,
      expr: fmt(|||
        label_replace(
          rate(rdma_port_symbol_errors_total{%%(sel)s}[%(win)s])
            / (rdma_port_rate_bytes_per_second{%%(sel)s} * 8 > 0)
          and %%(onPort)s rdma_port_info{%%(sel)s, link_layer="InfiniBand"},
          "counter", "symbol_error", "", "")
        or
        label_replace(
          sum without (netdev) (
            rate(rdma_phy_uncorrectable_symbol_errors_total{%%(sel)s}[%(win)s])
              / (rdma_netdev_speed_bytes_per_second{%%(sel)s} * 8 > 0)
          ),
          "counter", "rx_pcs_symbol_err_phy", "", "")
      ||| % { win: window }),
    }
    for window in std.set([c.rateWindow, w.bitErrorRateTicket])
  ] + [
    {
      // Pre-FEC bit error rate of Ethernet ports: bits FEC corrected per bit of line rate.
      record: fmt('device_port:rdma_phy_pre_fec_bit_error_rate:%(r)s'),
      expr: fmt(|||
        sum without (netdev) (
          rate(rdma_phy_fec_corrected_bit_errors_total{%(sel)s}[%(w)s])
            / (rdma_netdev_speed_bytes_per_second{%(sel)s} * 8 > 0)
        )
      |||),
    },
    {
      // Rate of each up port with its HCA type and link layer, for the fleet comparison.
      record: 'device_port:rdma_port_rate_bytes_per_second:by_hca_type',
      expr: fmt(|||
        rdma_port_rate_bytes_per_second{%(sel)s}
          * %(onDev)s group_left (hca_type) rdma_device_info{%(sel)s}
          * %(onPort)s group_left (link_layer) rdma_port_info{%(sel)s}
        and %(onPort)s rdma_port_up{%(sel)s} == 1
      |||),
    },
  ],

  // Expected PCIe link = min(card max, upstream port max): the link trains to the lower
  // capability of both ends (a Gen5 card in a Gen4 slot runs Gen4 at best). Without the
  // upstream series (root complex parent, older exporter) the card's maximum alone.
  local pcieRules = [
    {
      record: 'device:rdma_pcie_expected_link_transfers_per_second:min',
      expr: fmt(|||
        min by (%(node)s, device) (
          rdma_pcie_link_transfers_per_second{%(sel)s, kind="max"}
          or rdma_pcie_upstream_max_link_transfers_per_second{%(sel)s}
        )
      |||),
    },
    {
      record: 'device:rdma_pcie_expected_link_width_lanes:min',
      expr: fmt(|||
        min by (%(node)s, device) (
          rdma_pcie_link_width_lanes{%(sel)s, kind="max"}
          or rdma_pcie_upstream_max_link_width_lanes{%(sel)s}
        )
      |||),
    },
  ],

  // Memory of the devices and ports each node had (the baseline of RdmaDeviceDisappeared and
  // RdmaPortDisappeared; `offset 1d` forgot a missing device after a day). Each rule reads its
  // own previous value: an entry is kept while the node's exporter is up (value = now), whether
  // or not the device is still reported, so a missing device stays expected until it returns
  // or is acknowledged in forgetDevices; entries of nodes whose exporter is not up keep their
  // last value and are dropped after inventoryForgetSeconds.
  local forgotten(keys) = std.join('', [
    // absent() of an equality selector returns exactly those labels: one acknowledged entry.
    '\n      unless on (%s) absent(rdma_mixin_acknowledged_removal{%s})' % [
      std.join(', ', std.objectFields(e)),
      std.join(', ', ['%s="%s"' % [k, e[k]] for k in std.objectFields(e)]),
    ]
    for e in c.forgetDevices
    // a device entry forgets the device and its ports; a port entry only that port
    if std.length(std.setDiff(std.objectFields(e), std.set(keys))) == 0
  ]),
  local memoryRule(record, info, labels) = {
    local byLabels = std.join(', ', [c.clusterLabel, c.nodeLabel] + labels),
    local remembered = 'last_over_time(%s[%s])%s' % [
      record, w.inventoryCarry, forgotten([c.clusterLabel, c.nodeLabel] + labels),
    ],
    record: record,
    expr: |||
      (
        group by (%(by)s) (%(info)s{%(sel)s})
        or
        group by (%(by)s) (%(mem)s)
      )
        * %(onNode)s group_left () (max by (%(node)s) (up{%(sel)s}) == 1) * time()
      or
      (%(mem)s) > time() - %(forget)d
    ||| % v {
      by: byLabels,
      info: info,
      mem: remembered,
      forget: c.inventoryForgetSeconds,
    },
  },
  local inventoryRules = [
    memoryRule('device:rdma_device_expected:last_monitored_timestamp_seconds', 'rdma_device_info', ['device']),
    memoryRule('device_port:rdma_port_expected:last_monitored_timestamp_seconds', 'rdma_port_info', ['device', 'port']),
  ],

  // The rail model (config.libsonnet `rails`). One info series per port joining the port
  // and device labels, then the subset of ports that are rails, then per-node rail counts.
  local portLabelsInfo = 'device_port:rdma_port_labels:info',
  local alertLabelsInfo = 'device_port:rdma_alert_labels:info',
  local podsInfo = 'device_port:rdma_pod:info',
  local railSelected = if c.rails.selector != '' then
    '%s{physfn="", %s}' % [portLabelsInfo, c.rails.selector]
  else
    // PF ports of the (board_id, link_layer) the node has most ports of. A tie (the demo
    // fabric: one board model, half its ports InfiniBand, half Ethernet) goes to InfiniBand
    // (+0.5), so topk cannot flip the rails between evaluations.
    |||
      %(info)s{physfn=""}
        and on (%(node)s, board_id, link_layer)
      topk by (%(node)s) (1,
        (count by (%(node)s, board_id, link_layer) (%(info)s{physfn="", link_layer="InfiniBand"}) + 0.5)
        or count by (%(node)s, board_id, link_layer) (%(info)s{physfn=""})
      )
    ||| % v { info: portLabelsInfo },

  local railRules = [
    {
      record: portLabelsInfo,
      expr: fmt(|||
        group by (%(node)s, device, port, netdev, link_layer) (rdma_port_info{%(sel)s})
          * %(onDev)s group_left (board_id, hca_type, node_guid, fw_ver, physfn)
        group by (%(node)s, device, board_id, hca_type, node_guid, fw_ver, physfn) (rdma_device_info{%(sel)s})
      |||),
    },
    {
      record: 'device_port:rdma_rail:info',
      expr: |||
        group by (%(node)s, device, port, rail) (
          label_replace(%(rails)s, "rail", "$1", "%(idLabel)s", "%(idRegex)s")
        )
      ||| % v { rails: std.rstripChars(railSelected, '
'), idLabel: c.rails.idLabel, idRegex: c.rails.idRegex },
    },
    { record: 'node:rdma_rails:count', expr: 'count by (%(node)s) (device_port:rdma_rail:info)' % v },
    {
      record: 'node:rdma_rails_up:sum',
      expr: fmt('sum by (%(node)s) (rdma_port_up{%(sel)s} and %(onPort)s device_port:rdma_rail:info)'),
    },
  ] + railFleetRules,

  // --- rails/fleet recording rules ---
  local railFleetRules = [
    {
      // The jobs that can use each port (rdma_pod_info, from the kubelet's pod-resources API):
      // one series per port and pod, whatever the container, resource or way.
      record: podsInfo,
      expr: fmt('group by (%(node)s, device, port, namespace, pod) (rdma_pod_info{%(sel)s})'),
    },
    {
      // The routing labels of the alerts (withRoutingLabels below): one series per port,
      // rail label only on rails. topk makes it unique per port even while two port-info
      // series overlap (a renamed netdev seen by two targets), so the alerts' group_left join
      // can never fail with "many-to-many".
      record: alertLabelsInfo,
      expr: |||
        topk by (%(node)s, device, port) (1,
          group by (%(node)s, device, port, link_layer, netdev, node_guid, rail, namespace, pod) (
            (
              %(ports)s
            )
              * %(onPort)s group_left (namespace, pod)
            (%(pods)s and %(onPort)s (count by (%(node)s, device, port) (%(pods)s) == 1))
            or %(onPort)s
            (
              %(ports)s
            )
          )
        )
      ||| % v {
        ports: '%(info)s * %(onPort)s group_left (rail) device_port:rdma_rail:info\n    or %(onPort)s %(info)s' % v { info: portLabelsInfo },
        pods: podsInfo,
      },
    },
    {
      // Nodes of each cluster with at least one rail port down (or a down port the rail model
      // cannot classify): RdmaPortsDownOnManyNodes, and RdmaPortDown's suppression.
      record: 'cluster:rdma_nodes_with_rail_ports_down:count',
      expr: 'count by (%s) (group by (%s) (%s))' % [c.clusterLabel, v.node, std.rstripChars(railOrUnknownDown, '\n')],
    },
    {
      // The most common rail count of the cluster's nodes (RdmaFewerRailsThanExpected with
      // railsPerNode 0): each node weighted by how many nodes share its count, the count of
      // the most shared one.
      record: 'cluster:rdma_rails_per_node:mode',
      expr: |||
        max by (%(clusterLabel)s) (
          node:rdma_rails:count
            and %(onNode)s
          topk by (%(clusterLabel)s) (1,
            count_values by (%(node)s) ("rails", node:rdma_rails:count)
              * on (%(clusterLabel)s, rails) group_left ()
            count_values by (%(clusterLabel)s) ("rails", node:rdma_rails:count)
          )
        )
      ||| % v,
    },
  ] + [
    {
      // Rail settings that must agree across the fleet, as labels (setting, value) next to
      // the rail's link layer: netdev MTU, verbs active MTU, the NCCL priority.
      record: 'device_port:rdma_rail_settings:info',
      expr: |||
        count_values without () ("value",
          %(metric)s{%(sel)s}
            * %(onPort)s group_left (link_layer) %(info)s{rail!=""}
        )
      ||| % v { metric: st[1], info: alertLabelsInfo },
      labels: { setting: st[0] },
    }
    for st in [['netdev_mtu', 'rdma_netdev_mtu_bytes'], ['active_mtu', 'rdma_port_active_mtu_bytes'], ['nccl_priority', 'rdma_nccl_priority']]
  ] + [
    {
      // Most common value of each rail setting per cluster and link layer (a tie picks one).
      record: 'cluster:rdma_rail_settings:mode',
      expr: 'topk by (%(clusterLabel)s, link_layer, setting) (1, count by (%(clusterLabel)s, link_layer, setting, value) (device_port:rdma_rail_settings:info))' % v,
    },
    {
      // Most common firmware of each NIC model (hca_type, board_id) per cluster, counted in
      // nodes (VFs and rxe, which has no firmware, left out).
      record: 'cluster:rdma_firmware:mode',
      expr: 'topk by (%(clusterLabel)s, hca_type, board_id) (1, count by (%(clusterLabel)s, hca_type, board_id, fw_ver) (%(fw)s))' % v { fw: firmwarePerNode },
    },
  ],
  local firmwarePerNode = 'group by (%s, hca_type, board_id, fw_ver) (rdma_device_info{%s, physfn="", fw_ver!=""})' % [v.node, c.selector],

  // Down ports by what they are (device_port:rdma_port_labels:info, device_port:rdma_rail:info).
  // A port the rail model knows nothing about (no device info yet) counts as a rail: paging
  // for it is the safe side.
  local knownNonRail = '(%s unless %s device_port:rdma_rail:info)' % [portLabelsInfo, v.onPort],
  local railOrUnknownDown = |||
    rdma_port_up{%(sel)s} == 0
      unless %(onPort)s
    %(nonRail)s
  ||| % v { nonRail: knownNonRail },
  local manyNodesDown = 'cluster:rdma_nodes_with_rail_ports_down:count >= %d' % t.portsDownNodes,
  // Ports behind one switch (rdma_port_peer_info of the lldp and ib_peer collectors: the
  // switch's system name or node description) that are down, dropped their link within windows.flap, or run a BER above the ticket
  // level: counted per switch over every node of the cluster.
  local switchPortsDegraded = fmt(|||
    count by (%(clusterLabel)s, peer_description) (
      max by (%(node)s, device, port, peer_description) (rdma_port_peer_info{%(sel)s, peer_description!=""})
      and %(onPort)s
      (
        rdma_port_up{%(sel)s} == 0
        or %(onPort)s
        device_port:rdma_effective_bit_error_rate:%(r)s > %(bitErrorRateTicket)g
        or %(onPort)s
        sum without (netdev) (increase(rdma_phy_link_down_events_total{%(sel)s}[%(winFlap)s])) > 0
        or %(onPort)s
        increase(rdma_port_link_downed_total{%(sel)s}[%(winFlap)s]) > 0
      )
    ) >= %(switchDegradedPorts)d
  |||),

  local priorityRules = [
    {
      // Share of wall time the priority was paused (direction rx: paused by the peer,
      // tx: this NIC paused the peer).
      record: fmt('device_port_priority:rdma_pfc_pause_ratio:%(r)s'),
      expr: fmt('rate(rdma_pfc_pause_duration_seconds_total{%(sel)s}[%(w)s])'),
    },
    { record: fmt('device_port_priority:rdma_pfc_pause_frames:%(r)s'), expr: fmt('rate(rdma_pfc_pause_frames_total{%(sel)s}[%(w)s])') },
    { record: fmt('device_port_priority:rdma_priority_bytes:%(r)s'), expr: fmt('rate(rdma_priority_bytes_total{%(sel)s}[%(w)s])') },
    { record: fmt('device_port_priority:rdma_priority_packets:%(r)s'), expr: fmt('rate(rdma_priority_packets_total{%(sel)s}[%(w)s])') },
    { record: fmt('device_port_priority:rdma_priority_discards:%(r)s'), expr: fmt('rate(rdma_priority_discards_total{%(sel)s}[%(w)s])') },
    { record: fmt('device_port_priority:rdma_priority_ecn_marked_packets:%(r)s'), expr: fmt('rate(rdma_priority_ecn_marked_packets_total{%(sel)s}[%(w)s])') },
  ],

  // --- rails/fleet: the per-rail signals of RdmaRailOutlier ---
  // [signal, per-port expression (device, port labels)]; every name here needs a floor in
  // thresholds.railOutlierFloors.
  local railSignals = [
    ['pfc_rx_pause_ratio', 'max without (netdev, priority, direction) (device_port_priority:rdma_pfc_pause_ratio:%(r)s{direction="rx"})'],
    ['pfc_tx_pause_ratio', 'max without (netdev, priority, direction) (device_port_priority:rdma_pfc_pause_ratio:%(r)s{direction="tx"})'],
    ['port_xmit_wait_ratio', 'device_port:rdma_port_transmit_wait_ratio:%(r)s'],
    ['rp_cnp_handled', 'sum without (counter) (device_port:rdma_congestion_packets:%(r)s{counter="rp_cnp_handled"})'],
    ['np_ecn_marked_roce_packets', 'sum without (counter) (device_port:rdma_congestion_packets:%(r)s{counter="np_ecn_marked_roce_packets"})'],
    ['errors', 'sum without (counter) (device_port:rdma_port_errors:%(r)s)'],
  ],
  local busyRailSignal = fmt(|||
    device_port:rdma_rail_signal:%(r)s
      and %(onPort)s device_port:rdma_port_traffic_bytes:%(r)s >= %(railMinBytesPerSecond)g
  |||),

  local nodeRules = [
    { record: fmt('node:rdma_port_data_transmitted_bytes:%(r)s'), expr: fmt('sum by (%(node)s) (device_port:rdma_port_data_transmitted_bytes:%(r)s)') },
    { record: fmt('node:rdma_port_data_received_bytes:%(r)s'), expr: fmt('sum by (%(node)s) (device_port:rdma_port_data_received_bytes:%(r)s)') },
    { record: fmt('node:rdma_port_errors:%(r)s'), expr: fmt('sum by (%(node)s, counter) (device_port:rdma_port_errors:%(r)s)') },
    { record: 'node:rdma_ports_up:sum', expr: fmt('sum by (%(node)s) (rdma_port_up{%(sel)s})') },
    { record: 'node:rdma_ports:count', expr: fmt('count by (%(node)s) (rdma_port_up{%(sel)s})') },
    {
      record: fmt('node_priority:rdma_pfc_pause_ratio:max_%(r)s'),
      expr: fmt('max by (%(node)s, priority, direction) (device_port_priority:rdma_pfc_pause_ratio:%(r)s)'),
    },
    // --- rails/fleet: rail comparisons, on the rails of the rail model only ---
    {
      // Median load of the node's up rails (storage / management NICs and VFs are not rails).
      record: fmt('node:rdma_rail_traffic_bytes:median_%(r)s'),
      expr: fmt(|||
        quantile by (%(node)s) (0.5,
          device_port:rdma_port_traffic_bytes:%(r)s
          and %(onPort)s device_port:rdma_rail:info
          and %(onPort)s rdma_port_up{%(sel)s} == 1
        )
      |||),
    },
    {
      // Load of each up rail relative to the median rail of its node, on nodes whose rails
      // carry traffic (rail imbalance: NCCL silently stopped using a rail).
      record: fmt('device_port:rdma_rail_traffic_ratio:%(r)s'),
      expr: fmt(|||
        (
          device_port:rdma_port_traffic_bytes:%(r)s
          and %(onPort)s device_port:rdma_rail:info
          and %(onPort)s rdma_port_up{%(sel)s} == 1
        )
        / %(onNode)s group_left ()
        (node:rdma_rail_traffic_bytes:median_%(r)s >= %(railMinBytesPerSecond)g)
      |||),
    },
    {
      // Share of the node's up rails that are busy (>= railTrafficRatio of the median rail):
      // 1 for a job on every GPU, ~0.5 for a job on half of them.
      record: fmt('node:rdma_rails_busy:ratio_%(r)s'),
      expr: fmt(|||
        count by (%(node)s) (device_port:rdma_rail_traffic_ratio:%(r)s >= %(railTrafficRatio)g)
          / %(onNode)s
        count by (%(node)s) (device_port:rdma_rail_traffic_ratio:%(r)s)
      |||),
    },
    {
      // Median rate of the up rails of each HCA type and link layer in the cluster ("the rate
      // this kind of rail normally runs at"; the most common rate while most rails share it).
      // Rails only: a 200G storage NIC of the same HCA type beside 400G rails is not compared.
      record: 'hca_type:rdma_port_rate_bytes_per_second:median',
      expr: fmt(|||
        quantile by (%(clusterLabel)s, hca_type, link_layer) (0.5,
          device_port:rdma_port_rate_bytes_per_second:by_hca_type
          and %(onPort)s device_port:rdma_rail:info
        )
      |||),
    },
    {
      // Median rate of the node's up rails (a rail trained below its siblings).
      record: 'node:rdma_rail_rate_bytes_per_second:median',
      expr: fmt(|||
        quantile by (%(node)s) (0.5,
          device_port:rdma_port_rate_bytes_per_second:by_hca_type
          and %(onPort)s device_port:rdma_rail:info
        )
      |||),
    },
  ] + [
    {
      // The signals a slow rail shows against its siblings, per rail (rail label), recorded as
      // one family device_port:rdma_rail_signal:rate<w>{signal}.
      record: fmt('device_port:rdma_rail_signal:%(r)s'),
      expr: fmt(|||
        %s
          * %%(onPort)s group_left (rail) device_port:rdma_rail:info
      ||| % sig[1]),
      labels: { signal: sig[0] },
    }
    for sig in railSignals
  ] + [
    {
      // Median of each signal over the node's busy rails (>= railMinBytesPerSecond), where at
      // least railOutlierMinRails busy rails have it (two rails have no "odd one out").
      record: fmt('node_signal:rdma_rail_signal:median_%(r)s'),
      expr: |||
        quantile by (%(node)s, signal) (0.5, %(busySignal)s)
          and on (%(node)s, signal)
        count by (%(node)s, signal) (%(busySignal)s) >= %(railOutlierMinRails)d
      ||| % v { busySignal: std.rstripChars(busyRailSignal, '\n') },
    },
  ],

  // ---- alerts ----------------------------------------------------------------------------

  // --- rails/fleet: routing labels ---
  // Every alert on a port gets link_layer, netdev, node_guid, rail (absent when the port is
  // not a rail: Alertmanager matches rail="" for non-rail ports), and namespace and pod when
  // exactly one pod can use the port (rdma_pod_info; with several, the dashboards list them) from
  // device_port:rdma_alert_labels:info; alerts on a device get node_guid. The join never loses
  // an alert: without the info series (device info not scraped yet, a port unknown to the
  // rail model) the alert fires with the labels of its expression alone, value unchanged.
  // 'port_netdev' alerts keep their own netdev (a LAG slave, not the bond of the port info).
  local routingLabels = {
    port: ['link_layer', 'netdev', 'node_guid', 'rail', 'namespace', 'pod'],
    port_netdev: ['link_layer', 'node_guid', 'rail', 'namespace', 'pod'],
    device: ['node_guid'],
  },
  local indentBy(s, n) = std.join('\n' + std.repeat(' ', n), std.split(std.rstripChars(s, '\n'), '\n')),
  local withRoutingLabels(expr, scope) =
    if !std.objectHas(routingLabels, scope) then expr
    else
      local keys = if scope == 'device' then ['device'] else ['device', 'port'];
      local on = 'on (%s)' % std.join(', ', [c.clusterLabel, c.nodeLabel] + keys);
      local info = if scope == 'device' then
        'group by (%s) (%s)' % [std.join(', ', [c.clusterLabel, c.nodeLabel] + keys + routingLabels[scope]), alertLabelsInfo]
      else alertLabelsInfo;
      |||
        (
          %(e)s
        )
          * %(on)s group_left (%(labels)s)
        %(info)s
        or %(on)s
        (
          %(e)s
        )
      ||| % { e: indentBy(expr, 2), on: on, labels: std.join(', ', routingLabels[scope]), info: info },

  local port = '{{ $labels.device }}/{{ $labels.port }} on {{ $labels.%s }}' % c.nodeLabel,
  local dev = '{{ $labels.device }} on {{ $labels.%s }}' % c.nodeLabel,
  // scope: what the alert's series identify, for the routing labels added to every alert
  // ('port': device+port, no netdev label; 'port_netdev': device+port+netdev (ethtool-based);
  // 'device'; 'node'; 'none': leave the labels as the expression makes them).
  local alert(name, severity, forKey, expr, summary, description, scope='none') = {
    alert: name,
    expr: withRoutingLabels(expr, scope),
    'for': c['for'][forKey],
    labels: { severity: severity },
    annotations: {
      summary: summary,
      description: description,
      runbook_url: '%s#%s' % [c.runbookUrlBase, std.asciiLower(name)],
    },
  },

  // --- link/physical ---
  // PMA error counters the link alerts read as signals, their saturation included (on
  // InfiniBand ports): a saturated counter reads a rate of 0 and would hide a bad link.
  local signalCounters = ['symbol_error', 'link_downed', 'link_error_recovery', 'port_rcv_errors', 'port_xmit_discards'],
  // An InfiniBand port's PMA counter sitting at its maximum, labelled saturated="true" (the
  // alert's description then says the rate is unknown instead of quoting a value).
  local saturatedIb(counter) = fmt(|||
    label_replace(
      rdma_port_counters_saturated{%%(sel)s, counter="%s"} == 1
      and %%(onPort)s rdma_port_info{%%(sel)s, link_layer="InfiniBand"},
      "saturated", "true", "", "")
  ||| % counter),
  // Link drops within a window, one series per port, labelled with the counter that moved:
  // Ethernet link_down_events_phy, else (InfiniBand) the PMA link_downed.
  local linkDowns(window) = fmt(|||
    label_replace(sum without (netdev) (increase(rdma_phy_link_down_events_total{%%(sel)s}[%(win)s])), "counter", "link_down_events_phy", "", "")
    or %%(onPort)s
    label_replace(increase(rdma_port_link_downed_total{%%(sel)s}[%(win)s]), "counter", "link_downed", "", "")
  ||| % { win: window }),
  local linkDownsRising = '(%s) >= %d' % [linkDowns(w.linkDowned), t.linkDownedEvents],
  local flapping = fmt(|||
    changes(rdma_port_up{%(sel)s}[%(winFlap)s]) >= %(flapStateChanges)d
    or
    sum without (netdev) (increase(rdma_netdev_carrier_down_total{%(sel)s}[%(winFlap)s])) >= %(flapLinkDowns)d
  |||),
  local linkAlerts = [
    alert('RdmaPortFlapping', 'warning', 'portFlapping',
          flapping,
          'RDMA port is flapping.',
          'RDMA port %s went down and up repeatedly within %s; every flap can kill the NCCL jobs using it.' % [port, w.flap],
          scope='port'),
    // One drop = RdmaLinkDowned, a second within windows.linkDowned = RdmaLinkDownedRising,
    // several within windows.flap = RdmaPortFlapping: each port has at most one of the three.
    alert('RdmaLinkDowned', 'warning', 'linkDowned',
          fmt(|||
            (
              (%(linkDownsOnce)s) > 0
              unless %(onPort)s (%(linkDownsRising)s)
              unless %(onPort)s (%(flapping)s)
              unless %(onPort)s rdma_port_up{%(sel)s} == 0
            )
            or
            %(linkDownedSaturated)s
          ||| % v {
            linkDownsOnce: linkDowns(w.linkDownedOnce),
            linkDownsRising: linkDownsRising,
            flapping: flapping,
            linkDownedSaturated: saturatedIb('link_downed'),
          }),
          'RDMA link went down.',
          '{{ if $labels.saturated }}The {{ $labels.counter }} counter of %s sits at its maximum (255): new link drops are invisible until it is cleared.{{ else }}The link of %s went down ({{ $labels.counter }} +{{ $value | humanize }} within %s): the jobs using it lost their QPs.{{ end }}' % [port, port, w.linkDownedOnce],
          scope='port'),
    alert('RdmaLinkDownedRising', 'warning', 'linkDownedRising',
          fmt(|||
            (%(linkDownsRising)s)
            unless %(onPort)s (%(flapping)s)
          ||| % v { linkDownsRising: linkDownsRising, flapping: flapping }),
          'RDMA link keeps going down (link_downed rising).',
          'The link of %s went down {{ $value | humanize }} times within %s ({{ $labels.counter }}), even if every drop was too short to see in a scrape.' % [port, w.linkDowned],
          scope='port'),
    alert('RdmaPcieDowntrained', 'warning', 'pcieDowntrained',
          fmt(|||
            max without (kind) (
              rdma_pcie_link_width_lanes{%(sel)s, kind="current"}
                < %(onDev)s group_left () device:rdma_pcie_expected_link_width_lanes:min
            )
            or
            max without (kind) (
              rdma_pcie_link_transfers_per_second{%(sel)s, kind="current"}
                < %(onDev)s group_left () device:rdma_pcie_expected_link_transfers_per_second:min
            )
          |||),
          'HCA PCIe link trained below its maximum.',
          'The PCIe link of %s runs below the maximum width or speed of the card and its slot (the lower of both): the HCA cannot reach line rate.' % dev,
          scope='device'),
    alert('RdmaPcieAerFatalErrors', 'critical', 'pcieAerFatal',
          fmt('increase(rdma_pcie_aer_errors_total{%(sel)s, class="fatal"}[%(winPcieAer)s]) > 0'),
          'Fatal PCIe error (AER) on an RDMA HCA.',
          'The PCIe function of %s reported {{ $value | humanize }} fatal uncorrectable AER error(s) within %s: the link was reset or the device is unusable; the jobs on this HCA are dead or dying.' % [dev, w.pcieAer],
          scope='device'),
    alert('RdmaPcieAerNonFatalErrors', 'warning', 'pcieAerNonFatal',
          fmt('increase(rdma_pcie_aer_errors_total{%(sel)s, class="nonfatal"}[%(winPcieAer)s]) > 0'),
          'Non-fatal uncorrectable PCIe error (AER) on an RDMA HCA.',
          'The PCIe function of %s reported {{ $value | humanize }} non-fatal uncorrectable AER error(s) within %s: a PCIe transaction was lost and recovered; repeated ones precede fatal errors and downtraining.' % [dev, w.pcieAer],
          scope='device'),
    alert('RdmaPcieSignalIntegrityErrors', 'warning', 'pcieSignalIntegrity',
          fmt('increase(rdma_pcie_signal_integrity_errors_total{%(sel)s}[%(winPcieSignalIntegrity)s]) > %(pcieSignalIntegrityErrors)d'),
          'PCIe link of an RDMA HCA keeps entering recovery.',
          'The PCIe link of %s ({{ $labels.netdev }}) entered recovery {{ $value | humanize }} times within %s ({{ $labels.direction }}_pci_signal_integrity): framing or CRC errors on the slot, riser or card.' % [port, w.pcieSignalIntegrity],
          scope='port_netdev'),
    // Post-FEC BER, normalised by link rate (one threshold for every speed): a ticket above
    // 1e-14 over 1h (a saturated symbol_error counts as at least that: it reads a rate of 0 and
    // would hide the bad link), a page (drain the node) above 1e-12.
    alert('RdmaPortHighBitErrorRate', 'warning', 'bitErrorRateTicket',
          fmt(|||
            (
              device_port:rdma_effective_bit_error_rate:rate%(winBerTicket)s > %(bitErrorRateTicket)g
              and %(onPortCounter)s
              (
                label_replace(increase(rdma_port_symbol_errors_total{%(sel)s}[%(winBerTicket)s]), "counter", "symbol_error", "", "")
                or
                label_replace(sum without (netdev) (increase(rdma_phy_uncorrectable_symbol_errors_total{%(sel)s}[%(winBerTicket)s])), "counter", "rx_pcs_symbol_err_phy", "", "")
              ) >= %(bitErrorsTicketMin)d
            )
            or
            %(symbolErrorSaturated)s
          ||| % v { symbolErrorSaturated: saturatedIb('symbol_error') }),
          'RDMA port effective bit error rate above the ticket level.',
          '{{ if $labels.saturated }}The {{ $labels.counter }} counter of %s sits at its maximum (65535): its BER is unknown and a bad link would read as clean until the counter is cleared.{{ else }}RDMA port %s has an effective (post-FEC) bit error rate of {{ printf "%%.2g" $value }} over %s ({{ $labels.counter }}; ticket above %g, drain above %g): errors reach the transport.{{ end }}' % [port, port, w.bitErrorRateTicket, t.bitErrorRateTicket, t.bitErrorRateDrain],
          scope='port'),
    alert('RdmaPortHighBitErrorRate', 'critical', 'bitErrorRateDrain',
          fmt('device_port:rdma_effective_bit_error_rate:%(r)s > %(bitErrorRateDrain)g'),
          'RDMA port effective bit error rate above the drain level.',
          'RDMA port %s has an effective (post-FEC) bit error rate of {{ printf "%%.2g" $value }} ({{ $labels.counter }}; drain above %g): packets are lost at a rate that slows or kills the jobs using it. Drain the node, then fix the link.' % [port, t.bitErrorRateDrain],
          scope='port'),
    alert('RdmaPortPreFecBitErrorRateRising', 'warning', 'preFecBitErrorRate',
          fmt(|||
            device_port:rdma_phy_pre_fec_bit_error_rate:%(r)s
              > %(preFecBaselineRatio)g * avg_over_time(device_port:rdma_phy_pre_fec_bit_error_rate:%(r)s[%(winPreFecRange)s:%(winPreFecStep)s] offset %(winPreFecOffset)s)
            and
            device_port:rdma_phy_pre_fec_bit_error_rate:%(r)s > %(preFecBitErrorRateFloor)g
          |||),
          'RDMA port pre-FEC bit error rate far above its own baseline.',
          'RDMA port %s has a pre-FEC bit error rate of {{ printf "%%.2g" $value }}, more than %g times its average of the %s before the last %s and above %g: the link is degrading while FEC still hides it.' % [port, t.preFecBaselineRatio, w.preFecBaselineRange, w.preFecBaselineOffset, t.preFecBitErrorRateFloor],
          scope='port'),
    alert('RdmaPortPhysicalErrors', 'warning', 'physicalErrors',
          fmt(|||
            (
              label_replace(increase(rdma_port_link_error_recovery_total{%(sel)s}[%(winPhysicalErrors)s]), "counter", "link_error_recovery", "", "") > %(physicalErrors)d
              or
              label_replace(sum without (netdev) (increase(rdma_phy_crc_errors_total{%(sel)s}[%(winPhysicalErrors)s])), "counter", "rx_crc_errors_phy", "", "") > %(physicalErrors)d
            )
            unless %(onPort)s device_port:rdma_effective_bit_error_rate:rate%(winBerTicket)s > %(bitErrorRateTicket)g
            or
            %(linkErrorRecoverySaturated)s
          ||| % v { linkErrorRecoverySaturated: saturatedIb('link_error_recovery') }),
          'RDMA port link recoveries or CRC errors rising.',
          '{{ if $labels.saturated }}The {{ $labels.counter }} counter of %s sits at its maximum (255): new link recoveries are invisible until it is cleared.{{ else }}RDMA port %s counted {{ $value | humanize }} {{ $labels.counter }} within %s: marginal cable, optic or connector.{{ end }}' % [port, port, w.physicalErrors],
          scope='port'),
    alert('RdmaPortReceiveErrors', 'warning', 'receiveErrors',
          fmt(|||
            (
              device_port:rdma_port_errors:%(r)s{counter="port_rcv_errors"} > %(receiveErrorsPerSecond)g
              and %(onPort)s rdma_port_info{%(sel)s, link_layer="InfiniBand"}
              unless %(onPort)s device_port:rdma_effective_bit_error_rate:rate%(winBerTicket)s > %(bitErrorRateTicket)g
            )
            or
            %(receiveErrorsSaturated)s
          ||| % v { receiveErrorsSaturated: saturatedIb('port_rcv_errors') }),
          'InfiniBand port receives malformed packets.',
          '{{ if $labels.saturated }}The {{ $labels.counter }} counter of %s sits at its maximum (65535): new receive errors are invisible until it is cleared.{{ else }}InfiniBand port %s drops {{ $value | humanize }} received packets per second with errors (port_rcv_errors: CRC, malformed, buffer overrun) while its symbol error rate is low: every one is retransmitted by the transport.{{ end }}' % [port, port],
          scope='port'),
    alert('RdmaPortTransmitDiscards', 'warning', 'transmitDiscards',
          fmt(|||
            device_port:rdma_port_errors:%(r)s{counter="port_xmit_discards"} > %(transmitDiscardsPerSecond)g
            and %(onPort)s rdma_port_info{%(sel)s, link_layer="InfiniBand"}
            or
            %(transmitDiscardsSaturated)s
          ||| % v { transmitDiscardsSaturated: saturatedIb('port_xmit_discards') }),
          'InfiniBand port discards packets it should send.',
          '{{ if $labels.saturated }}The {{ $labels.counter }} counter of %s sits at its maximum (65535): new transmit discards are invisible until it is cleared.{{ else }}InfiniBand port %s discards {{ $value | humanize }} packets per second it should send (port_xmit_discards): credit starvation (head-of-queue lifetime expired behind a congested or failed downstream port) or the link going down.{{ end }}' % [port, port],
          scope='port'),
    alert('RdmaPortTransmitWaitHigh', 'warning', 'transmitWait',
          fmt(|||
            device_port:rdma_port_transmit_wait_ratio:%(r)s > %(transmitWaitRatio)g
            or
            label_replace(
              rdma_port_counters_saturated{%(sel)s, counter="port_xmit_wait"} == 1
              and %(onPort)s min_over_time(rdma_port_counters_saturated{%(sel)s, counter="port_xmit_wait"}[%(winTransmitWaitSaturated)s]) == 0
              and %(onPort)s (
                device_port:rdma_port_data_transmitted_bytes:%(r)s / (rdma_port_rate_bytes_per_second{%(sel)s} > 0)
              ) > %(transmitWaitSaturatedMinUtilisation)g
              and %(onPort)s rdma_port_info{%(sel)s, link_layer="InfiniBand"},
              "saturated", "true", "", "")
          |||),
          'InfiniBand port loses bandwidth waiting for credits.',
          '{{ if $labels.saturated }}InfiniBand port %s: port_xmit_wait climbed to its 32-bit maximum within the last %s while the port transmits: it waited for credits long enough to fill the counter; the share of time can no longer be measured until the counter is cleared.{{ else }}InfiniBand port %s waited for credits (port_xmit_wait) {{ $value | humanizePercentage }} of the time: congestion downstream of the port.{{ end }}' % [port, w.transmitWaitSaturated, port],
          scope='port'),
    alert('RdmaPortSlowReceiver', 'warning', 'slowReceiver',
          fmt('device_port:rdma_port_peer_transmit_wait_ratio:%(r)s > %(slowReceiverWaitRatio)g'),
          'The switch waits on this InfiniBand port: the host receives too slowly.',
          'The leaf port at the other end of %s had data for it but no credits {{ $value | humanizePercentage }} of the time (its PortXmitWait): this host does not drain what it receives fast enough (PCIe, host memory), and the wait spreads back into the fabric.' % port,
          scope='port'),
    alert('RdmaPhyLaneErrorsSkewed', 'warning', 'laneErrorsSkewed',
          fmt(|||
            (
              increase(rdma_phy_lane_errors_total{%(sel)s}[%(winLaneErrors)s])
                > ignoring (lane) group_left ()
              (%(laneErrorSkewRatio)g * min without (lane) (increase(rdma_phy_lane_errors_total{%(sel)s}[%(winLaneErrors)s])))
            )
            and
            increase(rdma_phy_lane_errors_total{%(sel)s}[%(winLaneErrors)s]) > %(laneMinErrors)g
          |||),
          'One physical lane of an RDMA port has far more errors than its siblings.',
          'Lane {{ $labels.lane }} of %s ({{ $labels.netdev }}) counted {{ $value | humanize }} raw (pre-FEC) errors within %s, more than %g times the cleanest lane of the port: the classic failing optic, cable or cage lane, before FEC stops hiding it.' % [port, w.laneErrors, t.laneErrorSkewRatio],
          scope='port_netdev'),
    alert('RdmaTransceiverModuleEvents', 'warning', 'moduleEvents',
          fmt('increase(rdma_module_events_total{%(sel)s}[%(winModuleEvents)s]) > 0'),
          'Transceiver module event on an RDMA port.',
          'The transceiver module of %s ({{ $labels.netdev }}) reported {{ $value | humanize }} {{ $labels.event }} event(s) within %s (unplug, I2C bus stuck, high temperature or bad/shorted module): expect link flaps until the module is reseated, cooled or replaced.' % [port, w.moduleEvents],
          scope='port_netdev'),
    // Transceiver DOM: the module's own thresholds say what is out of range for this optic.
    // A down port's optics read no light; RdmaPortDown owns that.
    alert('RdmaModuleRxPowerLow', 'warning', 'moduleRxPowerLow',
          fmt(|||
            rdma_module_rx_power_watts{%(sel)s}
              < on (%(node)s, device, port, netdev) group_left ()
            rdma_module_rx_power_threshold_watts{%(sel)s, threshold="low_warning"}
            unless %(onPort)s rdma_port_up{%(sel)s} == 0
          |||),
          'Optical receive power of an RDMA port below the module\'s low-warning threshold.',
          'Lane {{ $labels.lane }} of %s ({{ $labels.netdev }}) receives {{ $value | humanize }}W, below the low-warning threshold its transceiver declares: a dirty or damaged fibre or connector, or a failing far-end transmitter. Symbol errors, FEC corrections and link flaps follow.' % port,
          scope='port_netdev'),
    alert('RdmaModuleTemperatureHigh', 'warning', 'moduleTemperatureHigh',
          fmt(|||
            rdma_module_temperature_celsius{%(sel)s}
              > on (%(node)s, device, port, netdev) group_left ()
            rdma_module_temperature_threshold_celsius{%(sel)s, threshold="high_warning"}
          |||),
          'Transceiver of an RDMA port above its high-warning temperature.',
          'The transceiver of %s ({{ $labels.netdev }}) is at {{ $value | humanize }}°C, above the high-warning temperature it declares: airflow (fan, blanking, cable routing) or a failing module; optics degrade and shut down when hot.' % port,
          scope='port_netdev'),
    alert('RdmaModuleAlarm', 'warning', 'moduleAlarm',
          fmt('rdma_module_flags{%(sel)s, level="alarm"} > 0'),
          'Transceiver of an RDMA port raises an alarm flag.',
          'The transceiver of %s ({{ $labels.netdev }}) raises its {{ $labels.quantity }} alarm flag on {{ $value }} lane(s) (or the module): a value beyond the alarm threshold the module declares.' % port,
          scope='port_netdev'),
    alert('RdmaModuleLaneRxPowerDrift', 'warning', 'moduleLaneRxPowerDrift',
          fmt(|||
            rdma_module_rx_power_watts{%(sel)s}
              < on (%(node)s, device, port, netdev) group_left ()
            (%(moduleLaneRxPowerRatio)g * quantile without (lane) (0.5, rdma_module_rx_power_watts{%(sel)s}))
            unless on (%(node)s, device, port, netdev, lane)
            (
              rdma_module_rx_power_watts{%(sel)s}
                < on (%(node)s, device, port, netdev) group_left ()
              rdma_module_rx_power_threshold_watts{%(sel)s, threshold="low_warning"}
            )
            unless %(onPort)s rdma_port_up{%(sel)s} == 0
          |||),
          'One lane of a transceiver receives far less light than its siblings.',
          'Lane {{ $labels.lane }} of %s ({{ $labels.netdev }}) receives {{ $value | humanize }}W, less than %g of the median of the module\'s lanes, still above the module\'s low warning: one dirty or damaged fibre of the bundle. Clean or replace before it crosses the threshold.' % [port, t.moduleLaneRxPowerRatio],
          scope='port_netdev'),
    // Context only (dashboards, inhibition): the error counters above count their own
    // saturation on InfiniBand ports, port_xmit_wait is read by RdmaPortTransmitWaitHigh.
    alert('RdmaPortCounterSaturated', 'info', 'counterSaturated',
          fmt(|||
            rdma_port_counters_saturated{%(sel)s} == 1
            unless %(onPortCounter)s
            (
              rdma_port_counters_saturated{%(sel)s, counter=~"%(signalCounters)s"}
              and %(onPort)s rdma_port_info{%(sel)s, link_layer="InfiniBand"}
            )
          ||| % v { signalCounters: std.join('|', signalCounters) }),
          'RDMA port counter saturated.',
          'Counter {{ $labels.counter }} of %s sits at its maximum value and no longer counts: increases of it are invisible until it is cleared.' % port,
          scope='port'),
  ],

  // --- lossless/transport ---
  // Minutes of a Prometheus duration in whole minutes or hours ('20m', '1h').
  local durationMinutes(d) =
    local n = std.parseInt(std.substr(d, 0, std.length(d) - 1));
    local unit = std.substr(d, std.length(d) - 1, 1);
    if unit == 'm' then n else if unit == 'h' then 60 * n else error 'duration in m or h: ' + d,
  // Values of the lossless and transport templates: v plus their own windows.
  local lt = v {
    winPfcStormFast: w.pfcStormFast,
    winTransportSustained: w.transportSustained,
    // steps of 1m in windows.transportSustained (a retry window seen at each of them)
    sustainedSteps: durationMinutes(w.transportSustained),
    inc: 'increase' + w.transport,  // recording rule suffix of the transport increases
    onNodePort: 'on (%s, %s, device, port)' % [c.clusterLabel, c.nodeLabel],
    onPrio: 'on (%s, %s, device, port, netdev, priority)' % [c.clusterLabel, c.nodeLabel],
    // the NCCL priority of each netdev as a `priority` label (rdma_nccl_priority is a value)
    ncclPrio: 'count_values by (%s, %s, device, port, netdev) ("priority", rdma_nccl_priority{%s})' % [c.clusterLabel, c.nodeLabel, c.selector],
  },
  local lfmt(s) = s % lt,

  // Transport retry counters, most telling first: [counter, metric, threshold within
  // windows.transport]. A port above any threshold warns under the first counter above it.
  local retryCounters = [
    ['req_transport_retries_exceeded', 'rdma_hw_req_transport_retries_exceeded_total', t.transportRetriesExceeded],
    ['retry_exceeded_err', 'rdma_hw_retry_exceeded_err_total', t.transportRetriesExceeded],  // rxe
    ['local_ack_timeout_err', 'rdma_hw_local_ack_timeout_err_total', t.localAckTimeouts],
    ['packet_seq_err', 'rdma_hw_packet_seq_err_total', t.packetSeqErrors],
  ],
  local transportRules = [
    {
      record: lfmt('device_port:rdma_transport_retry_events:%(inc)s'),
      expr: lfmt('increase(%s{%%(sel)s}[%%(winTransport)s])' % e[1]),
      labels: { counter: e[0] },
    }
    for e in retryCounters
  ] + [
    {
      // One series per port above a threshold, labelled with the first counter (in
      // retryCounters order) above its threshold; value = that counter's increase.
      record: lfmt('device_port:rdma_transport_retries_above_threshold:%(inc)s'),
      expr: std.join('\nor %s\n' % lt.onNodePort, [
        lfmt('device_port:rdma_transport_retry_events:%%(inc)s{counter="%s"} > %d' % [e[0], e[2]])
        for e in retryCounters
      ]) + '\n',
    },
    {
      // Retry events (all counters) of each node's ports above a threshold. Ports below it
      // (a few timeouts now and then, on many nodes) stay out of the cluster median.
      record: lfmt('node:rdma_transport_retries_above_threshold:%(inc)s'),
      expr: lfmt(|||
        sum by (%(node)s) (
          device_port:rdma_transport_retry_events:%(inc)s
          and %(onNodePort)s device_port:rdma_transport_retries_above_threshold:%(inc)s
        )
      |||),
    },
  ],
  // Where retries point at this port (a page): sustained at every 1m step of
  // windows.transportSustained, or its node retries transportOutlierFactor x the median of the
  // cluster's nodes above a threshold (with enough of them for a median). A dead peer makes
  // each of its neighbours time out once and alike: neither.
  local retriesPointHere = lfmt(|||
    (
      device_port:rdma_transport_retries_above_threshold:%(inc)s
      and %(onNodePort)s
      count_over_time((max by (%(node)s, device, port) (device_port:rdma_transport_retries_above_threshold:%(inc)s))[%(winTransportSustained)s:1m]) >= %(sustainedSteps)d
    )
    or %(onNodePort)s
    (
      device_port:rdma_transport_retries_above_threshold:%(inc)s
      and %(onNode)s
      (
        node:rdma_transport_retries_above_threshold:%(inc)s
          >= on (%(clusterLabel)s) group_left ()
        (
          %(transportOutlierFactor)g * quantile by (%(clusterLabel)s) (0.5, node:rdma_transport_retries_above_threshold:%(inc)s)
          and on (%(clusterLabel)s)
          count by (%(clusterLabel)s) (node:rdma_transport_retries_above_threshold:%(inc)s) >= %(transportOutlierMinNodes)d
        )
      )
    )
  |||),

  local losslessAlerts = [
    alert('RdmaPfcStorm', 'critical', 'pfcStorm',
          lfmt(|||
            rate(rdma_pfc_pause_duration_seconds_total{%(sel)s, direction="tx"}[%(winPfcStormFast)s]) > %(pfcStormFullPauseRatio)g
            or
            device_port_priority:rdma_pfc_pause_ratio:%(r)s{direction="tx"} > %(pfcStormPauseRatio)g
          |||),
          'PFC pause storm from an RDMA NIC.',
          'RDMA port %s ({{ $labels.netdev }}) sends PFC pause on priority {{ $labels.priority }} {{ $value | humanizePercentage }} of the time: a NIC pause storm stalls the fabric.' % port,
          scope='port_netdev'),
    alert('RdmaPfcStormWatchdog', 'critical', 'pfcStormWatchdog',
          fmt('sum without (level) (increase(rdma_pfc_storm_events_total{%(sel)s, level="error"}[%(winStormEvents)s])) > 0'),
          'NIC PFC storm prevention disabled pause transmission.',
          'The PFC stall-prevention watchdog of %s ({{ $labels.netdev }}) fired (tx_pause_storm_error_events): pause transmission was disabled and lossless traffic may drop.' % port,
          scope='port_netdev'),
    alert('RdmaPfcStormWarning', 'warning', 'pfcStormWarning',
          lfmt(|||
            sum without (level) (increase(rdma_pfc_storm_events_total{%(sel)s, level="warning"}[%(winStormEvents)s])) > 0
            unless on (%(node)s, device, port, netdev)
            sum without (level) (increase(rdma_pfc_storm_events_total{%(sel)s, level="error"}[%(winStormEvents)s])) > 0
          |||),
          'NIC stalled past the PFC storm warning watermark.',
          'The receive pipeline of %s ({{ $labels.netdev }}) stalled past the PFC storm warning watermark {{ $value | humanize }} time(s) within %s (tx_pause_storm_warning_events): the NIC paused its switch port for long stretches; the stall-prevention watchdog has not fired yet.' % [port, w.stormEvents],
          scope='port_netdev'),
    alert('RdmaNcclPriorityPaused', 'warning', 'ncclPriorityPaused',
          fmt(|||
            device_port_priority:rdma_pfc_pause_ratio:%(r)s{direction="rx"} > %(ncclPauseRatio)g
            and on (%(node)s, device, port, priority)
            count_values by (%(node)s, device, port) ("priority", rdma_nccl_priority{%(sel)s})
          |||),
          'NCCL priority paused for a long time.',
          'RDMA port %s ({{ $labels.netdev }}) is paused by the fabric {{ $value | humanizePercentage }} of the time on the NCCL priority {{ $labels.priority }}: congestion or a pause storm elsewhere.' % port,
          scope='port_netdev'),
    alert('RdmaCongestionSurge', 'warning', 'congestionSurge',
          lfmt(|||
            (
              device_port:rdma_congestion_packets:%(r)s{counter="np_ecn_marked_roce_packets"}
                / %(onNodePort)s group_left ()
              (device_port:rdma_port_packets_received:%(r)s >= %(congestionMinPacketsPerSecond)g)
            ) > %(congestionMarkedRatio)g
            and %(onNodePort)s
            (
              device_port:rdma_port_data_received_bytes:%(r)s
                / %(onNodePort)s
              (rdma_port_rate_bytes_per_second{%(sel)s} > 0)
            ) < %(congestionMaxReceiveUtilisation)g
          |||),
          'RDMA port heavily ECN-marked while it receives well below line rate.',
          'RDMA port %s receives {{ $value | humanizePercentage }} of its RDMA packets ECN-marked while receiving below %s of line rate: the bottleneck is in the fabric (a hot link, ECMP collision), not this receiver, and DCQCN throttles the senders.' % [port, std.format('%g%%', 100 * t.congestionMaxReceiveUtilisation)],
          scope='port'),
    alert('RdmaEcnWithoutCnp', 'warning', 'ecnWithoutCnp',
          lfmt(|||
            device_port:rdma_congestion_packets:%(r)s{counter="np_ecn_marked_roce_packets"} > %(ecnWithoutCnpMarkedPerSecond)g
            and %(onNodePort)s
            device_port:rdma_congestion_packets:%(r)s{counter="np_cnp_sent"} == 0
          |||),
          'RDMA port receives ECN-marked packets but sends no CNP.',
          'RDMA port %s receives {{ $value | humanize }} ECN-marked RoCE packets per second and sends no CNP (np_cnp_sent flat): the DCQCN notification point is off or broken, senders never slow down and PFC has to stop them.' % port,
          scope='port'),
  ] + (
    if t.dcqcnExpected then [
      alert('RdmaPfcWithoutEcn', 'warning', 'pfcWithoutEcn',
            lfmt(|||
              rdma_ecn_enabled{%(sel)s} == 0
              and %(onPrio)s rdma_pfc_enabled{%(sel)s} == 1
              unless %(onPrio)s %(ncclPrio)s
            |||),
            'PFC priority without ECN.',
            'Priority {{ $labels.priority }} of %s ({{ $labels.netdev }}) has PFC on but RoCE ECN {{ $labels.role }} off: without DCQCN only PFC stops senders, and pauses spread congestion.' % port,
            scope='port_netdev'),
    ] else []
  ) + [
    alert('RdmaLosslessPriorityDiscards', 'warning', 'losslessDiscards',
          lfmt(|||
            device_port_priority:rdma_priority_discards:%(r)s{reason=~"port_buffer|host_buffer"} > 0
            and %(onPrio)s
            (rdma_pfc_enabled{%(sel)s} == 1 or %(ncclPrio)s)
          |||),
          'Packets dropped for lack of receive buffer on a lossless or the NCCL priority.',
          'RDMA port %s ({{ $labels.netdev }}) drops {{ $value | humanize }} packets per second on priority {{ $labels.priority }} (PFC or NCCL) for lack of receive buffer ({{ $labels.reason }}): the priority is not lossless (PFC off or headroom, buffer split, or the host does not drain the NIC).' % port,
          scope='port_netdev'),
    alert('RdmaPortReceiveDiscards', 'warning', 'receiveDiscards',
          fmt('device_port:rdma_port_errors:%(r)s{counter="rx_discards_phy"} > ' + ('%g' % t.receiveDiscardsPerSecond)),
          'RDMA port drops received packets for lack of port buffer.',
          'RDMA port %s drops {{ $value | humanize }} received packets per second for lack of port receive buffer (rx_discards_phy): RoCE retransmits (go-back-N) and bandwidth collapses if the drops hit RDMA traffic.' % port,
          scope='port'),
    alert('RdmaRoceConfigCheckFailing', 'warning', 'roceConfig',
          fmt('rdma_roce_config_ok{%(sel)s} == 0'),
          'RoCE configuration check failing.',
          'RoCE check {{ $labels.check }} fails on %s ({{ $labels.netdev }}): the port is not configured for lossless NCCL traffic.' % port,
          scope='port_netdev'),
  ],

  local transportAlerts = [
    alert('RdmaReceiveBufferExhausted', 'warning', 'outOfBuffer',
          fmt('device_port:rdma_port_errors:%(r)s{counter="out_of_buffer"} > ' + ('%g' % t.outOfBufferPerSecond)),
          'RDMA receive buffer exhaustion (out_of_buffer).',
          'RDMA port %s drops {{ $value | humanize }} packets per second for lack of a posted receive WQE (out_of_buffer): the receiver does not keep up.' % port,
          scope='port'),
    // Retries are evidence about a pair of ports: the critical rule pages when they point at
    // this port, the warning rule reports the rest (a peer died, a one-off burst).
    alert('RdmaTransportRetries', 'critical', 'transportRetries',
          retriesPointHere,
          'RDMA transport retries concentrate on a port.',
          'RDMA port %s counted {{ $value | humanize }} {{ $labels.counter }} within %s, sustained for %s or many times more than the other nodes that retry: this port or its path is the likely culprit, NCCL fails with status 12.' % [port, w.transport, w.transportSustained],
          scope='port'),
    alert('RdmaTransportRetries', 'warning', 'transportRetries',
          lfmt('device_port:rdma_transport_retries_above_threshold:%(inc)s\nunless %(onNodePort)s\n(\n') + retriesPointHere + ')\n',
          'RDMA transport retries on a port.',
          'RDMA port %s counted {{ $value | humanize }} {{ $labels.counter }} within %s: its QPs time out against a peer. Often the peer is the fault (a rank died, its node rebooted); it pages only when sustained or concentrated on this node.' % [port, w.transport],
          scope='port'),
    alert('RdmaRnrRetries', 'warning', 'rnrRetries',
          lfmt(|||
            label_replace(increase(rdma_hw_req_rnr_retries_exceeded_total{%(sel)s}[%(winTransport)s]), "counter", "req_rnr_retries_exceeded", "", "") > %(rnrRetries)d
            or %(onNodePort)s
            label_replace(increase(rdma_hw_rnr_nak_retry_err_total{%(sel)s}[%(winTransport)s]), "counter", "rnr_nak_retry_err", "", "") > %(rnrRetries)d
          |||),
          'RDMA receiver-not-ready retries on a port.',
          'RDMA port %s counted {{ $value | humanize }} {{ $labels.counter }} within %s: its peers had no receive WQE posted (RNR NAK). NCCL retries RNR forever and should never see one: a non-NCCL transport (UCX, MPI, storage) whose receiver does not keep up, or a job dying with status 13.' % [port, w.transport],
          scope='port'),
    alert('RdmaDeviceResourcesNearLimit', 'warning', 'resourcesNearLimit',
          lfmt(|||
            rdma_resources{%(sel)s, type="qp"} / on (%(node)s, device) group_left () (rdma_device_max_qps{%(sel)s} > 0) > %(resourceUsageRatio)g
            or
            rdma_resources{%(sel)s, type="mr"} / on (%(node)s, device) group_left () (rdma_device_max_mrs{%(sel)s} > 0) > %(resourceUsageRatio)g
          |||),
          'RDMA device close to its QP or MR limit.',
          'RDMA device %s has {{ $value | humanizePercentage }} of its {{ $labels.type }} limit allocated: the next job fails to create QPs or register memory (ibv_create_qp / ibv_reg_mr "Cannot allocate memory").' % dev,
          scope='device'),
  ],

  // --- rails/fleet: port down by kind of port, one page per leaf switch, rail checks ---
  // PF port of the parent of each VF up (label physfn = the PF's PCI address).
  local pfUpByPhysfn = |||
    max by (%(node)s, physfn) (
      label_replace(
        rdma_port_up{%(sel)s}
          * %(onDev)s group_left (pci_address)
        group by (%(node)s, device, pci_address) (rdma_device_info{%(sel)s, physfn=""}),
        "physfn", "$1", "pci_address", "(.+)"
      )
    )
  ||| % v,
  local railPortDownDescription = 'RDMA port %s is not ACTIVE / LinkUp: NCCL cannot use this rail.' % port,
  // The rails with their link layer (alert labels info restricted to rails).
  local railLabels = '%s{rail!=""}' % alertLabelsInfo,

  local railAlerts = [
    alert('RdmaPortDown', 'critical', 'portDown',
          |||
            %(down)s
              unless on (%(clusterLabel)s)
            %(many)s
          ||| % v { down: std.rstripChars(railOrUnknownDown, '\n'), many: manyNodesDown },
          'RDMA port is down.',
          railPortDownDescription, scope='port'),
    // While a leaf switch (or the subnet manager) takes down rail ports on many nodes, the
    // per-port alerts are context for the one RdmaPortsDownOnManyNodes page.
    alert('RdmaPortDown', 'info', 'portDown',
          |||
            %(down)s
              and on (%(clusterLabel)s)
            %(many)s
          ||| % v { down: std.rstripChars(railOrUnknownDown, '\n'), many: manyNodesDown },
          'RDMA port is down (part of RdmaPortsDownOnManyNodes).',
          railPortDownDescription + ' Rail ports are down on many nodes of the cluster at once: RdmaPortsDownOnManyNodes pages for all of them.', scope='port'),
    alert('RdmaPortDown', 'warning', 'nonRailPortDown',
          |||
            rdma_port_up{%(sel)s} == 0
              and %(onPort)s
            (%(info)s{physfn=""} unless %(onPort)s device_port:rdma_rail:info)
          ||| % v { info: portLabelsInfo },
          'RDMA port that is not a rail is down.',
          'RDMA port %s is down; it is not one of the node\'s rails (storage or management NIC, or an unused port): no NCCL rail is lost, but what uses this port (storage, checkpoints) is cut off.' % port, scope='port')
    + { labels+: { port_kind: 'non_rail' } },
    alert('RdmaPortDown', 'info', 'vfPortDown',
          |||
            (
              (rdma_port_up{%(sel)s} == 0)
                * %(onPort)s group_left (physfn)
              %(info)s{physfn!=""}
              and %(onPort)s
              max_over_time(rdma_port_up{%(sel)s}[%(vfWasUp)s]) == 1
            )
            unless on (%(node)s, physfn)
            (%(pfUp)s == 0)
          ||| % v { info: portLabelsInfo, vfWasUp: w.vfWasUp, pfUp: std.rstripChars(pfUpByPhysfn, '\n') },
          'SR-IOV VF port is down while its PF is up.',
          'SR-IOV VF port %s (PF {{ $labels.physfn }}) went down while its PF is up: the VF\'s consumer (pod, VM) brought it down or lost it. Not a fabric fault; the PF\'s own alerts cover the link.' % port, scope='port')
    + { labels+: { port_kind: 'vf' } },
    alert('RdmaPortsDownOnManyNodes', 'critical', 'portsDownOnManyNodes',
          manyNodesDown,
          'RDMA rail ports are down on many nodes at once.',
          'Rail ports are down on {{ $value }} nodes of cluster {{ $labels.%s }} at once: one common cause (a leaf or spine switch, the subnet manager, a rack\'s power or cabling), not {{ $value }} broken NICs. This is the one page; the ports are listed as RdmaPortDown with severity info.' % c.clusterLabel),
    alert('RdmaSwitchPortsDegraded', 'warning', 'switchPortsDegraded',
          switchPortsDegraded,
          'Several RDMA ports behind one switch are down or erroring.',
          '{{ $value }} RDMA ports whose link peer (LLDP or InfiniBand SMP) is switch {{ $labels.peer_description }} (cluster {{ $labels.%s }}) are down, dropped their link within %s, or run a bit error rate above the ticket level: suspect the switch (a line card, its optics batch, its firmware), not each node. Per-port alerts name the ports.' % [c.clusterLabel, w.flap]),
    alert('RdmaFewerRailsThanExpected', 'warning', 'fewerRails',
          local present = fmt('(node:rdma_rails:count or %(onNode)s (max by (%(node)s) (up{%(sel)s}) == 1) * 0)');
          if t.railsPerNode > 0 then
            '%d - %s > 0' % [t.railsPerNode, present]
          else
            'cluster:rdma_rails_per_node:mode - on (%s) group_right () %s > 0' % [c.clusterLabel, present],
          'RDMA node has fewer rails than expected.',
          'Node {{ $labels.%s }} has {{ $value }} rail(s) fewer than expected (%s): a NIC did not enumerate (driver, firmware, PCIe, BIOS) or its ports were never reported; NCCL runs every job on this node with fewer rails. Down rails are RdmaPortDown\'s and not counted here.' % [c.nodeLabel, if t.railsPerNode > 0 then 'railsPerNode %d' % t.railsPerNode else "the cluster's most common rail count"], scope='node'),
    alert('RdmaPortRateBelowExpected', 'warning', 'rateBelowExpected',
          fmt(|||
            (
              device_port:rdma_port_rate_bytes_per_second:by_hca_type
                and %(onPort)s device_port:rdma_rail:info
            )
              < %(onNode)s group_left ()
            node:rdma_rail_rate_bytes_per_second:median
            or
            (
              device_port:rdma_port_rate_bytes_per_second:by_hca_type
                and %(onPort)s device_port:rdma_rail:info
            )
              < on (%(clusterLabel)s, hca_type, link_layer) group_left ()
            hca_type:rdma_port_rate_bytes_per_second:median
          |||),
          'RDMA rail runs below the rate of its sibling rails.',
          'RDMA rail %s ({{ $labels.hca_type }}, {{ $labels.link_layer }}) runs at {{ $value | humanize }}B/s, below the median rate of the rails of its node or of the rails of its HCA type in the cluster: link speed or width downgraded.' % port, scope='port'),
    alert('RdmaRailImbalance', 'warning', 'railImbalance',
          fmt(|||
            device_port:rdma_rail_traffic_ratio:%(r)s < %(railTrafficRatio)g
              and %(onNode)s
            node:rdma_rails_busy:ratio_%(r)s >= %(railBusyShare)g
          |||),
          'RDMA rail carries far less traffic than its siblings.',
          'RDMA rail %s carries {{ $value | humanizePercentage }} of the median traffic of the rails on its node while most of its sibling rails are busy: NCCL probably stopped using this rail.' % port, scope='port'),
    alert('RdmaRailOutlier', 'warning', 'railOutlier',
          |||
            (
              %(busySignal)s
            )
              > on (%(node)s, signal) group_left ()
            (%(railOutlierFactor)g * node_signal:rdma_rail_signal:median_%(r)s)
            and
            (
              %(floors)s
            )
          ||| % v {
            busySignal: indentBy(busyRailSignal, 2),
            floors: std.join('\n  or\n  ', [
              'device_port:rdma_rail_signal:%s{signal="%s"} > %g' % [v.r, sig[0], t.railOutlierFloors[sig[0]]]
              for sig in railSignals
            ]),
          },
          'One RDMA rail is far worse than its sibling rails.',
          'RDMA rail %s shows {{ $labels.signal }} {{ printf "%%.3g" $value }} (ratios: share of time; others: per second), more than %g times the median of the busy rails of its node: collectives move equal bytes on every rail, so this rail (its link, NIC or switch path) is the slow one that holds the job back.' % [port, t.railOutlierFactor], scope='port'),
    // The shipped DaemonSet used to run without --nccl.ib-tc and with --no-collector.verbs: no
    // rdma_nccl_priority and no rdma_port_active_mtu_bytes, so the NCCL-priority and
    // active-MTU checks were absent and absent read as OK.
    alert('RdmaRoceRailChecksMissing', 'warning', 'roceChecksMissing',
          |||
            label_replace(
              %(rails)s, link_layer="Ethernet"} unless %(onPort)s rdma_nccl_priority{%(sel)s},
              "missing", "rdma_nccl_priority", "", ""
            )
            or
            label_replace(
              %(rails)s, link_layer="Ethernet"} unless %(onPort)s rdma_port_active_mtu_bytes{%(sel)s},
              "missing", "rdma_port_active_mtu_bytes", "", ""
            )
          ||| % v { rails: alertLabelsInfo + '{rail!=""' },
          'RoCE rail has no NCCL-priority or active-MTU check.',
          'RoCE rail %s exports no {{ $labels.missing }}: its lossless-priority (PFC/ECN on the NCCL priority) or active-MTU checks do not run, and a missing check reads as OK. Start the exporter with --nccl.ib-tc=<NCCL_IB_TC> and the verbs collector on.' % port, scope='port'),
  ],

  // --- rails/fleet: fleet drift (against the modes recorded in railFleetRules) ---
  // The series of `s` whose `l` is not the cluster's most common one (`mode`, grouped by
  // `groupBy`), with that most common value as label fleet_<l>.
  local driftFrom(s, mode, groupBy, l) =
    local g = std.join(', ', groupBy);
    |||
      (
        %(s)s
          unless on (%(g)s, %(l)s)
        %(mode)s
      )
        * on (%(g)s) group_left (fleet_%(l)s)
      group by (%(g)s, fleet_%(l)s) (label_replace(%(mode)s, "fleet_%(l)s", "$1", "%(l)s", "(.*)"))
    ||| % { s: s, g: g, l: l, mode: mode },
  local settingGroup = [c.clusterLabel, 'link_layer', 'setting'],
  local driftAlerts = [
    alert('RdmaFirmwareDrift', 'warning', 'firmwareDrift',
          driftFrom(firmwarePerNode, 'cluster:rdma_firmware:mode', [c.clusterLabel, 'hca_type', 'board_id'], 'fw_ver'),
          'RDMA NIC firmware differs from the rest of the fleet.',
          'The {{ $labels.hca_type }} ({{ $labels.board_id }}) NICs of {{ $labels.%s }} run firmware {{ $labels.fw_ver }}, the cluster\'s NICs of that model mostly {{ $labels.fleet_fw_ver }}: a node missed a firmware rollout (or got a card from another batch); firmware fixes and defaults (congestion control, PFC watchdog) then differ between ranks of one job.' % c.nodeLabel,
          scope='node'),
    alert('RdmaMtuDrift', 'warning', 'mtuDrift',
          driftFrom('device_port:rdma_rail_settings:info{setting=~"netdev_mtu|active_mtu"}', 'cluster:rdma_rail_settings:mode', settingGroup, 'value'),
          'RDMA rail MTU differs from the rest of the fleet.',
          'The {{ $labels.setting }} of rail %s is {{ $labels.value }} bytes, most {{ $labels.link_layer }} rails of the cluster use {{ $labels.fleet_value }}: a smaller MTU on one hop makes RoCE QPs time out on their first large message or caps the path MTU of every QP through it (nccl-field-guide #1, NCCL-709).' % port,
          scope='port_netdev'),
    alert('RdmaNcclPriorityDrift', 'warning', 'ncclPriorityDrift',
          driftFrom('device_port:rdma_rail_settings:info{setting="nccl_priority"}', 'cluster:rdma_rail_settings:mode', settingGroup, 'value'),
          'NCCL traffic class maps to a different priority on this rail.',
          'NCCL_IB_TC maps to priority {{ $labels.value }} on rail %s, to {{ $labels.fleet_value }} on most rails of the cluster: the DSCP-to-priority map of this port differs, so its NCCL traffic is not on the lossless (PFC) priority of the fabric.' % port,
          scope='port_netdev'),
  ],

  local fleetAlerts = [
    alert('RdmaDeviceDisappeared', 'warning', 'disappeared',
          fmt(|||
            device:rdma_device_expected:last_monitored_timestamp_seconds
            unless %(onDev)s rdma_device_info{%(sel)s}
            and %(onNode)s up{%(sel)s} == 1
          |||),
          'RDMA device disappeared.',
          'RDMA device %s was reported by the exporter before and is gone now while the exporter runs: HCA lost (driver, firmware, PCIe) or filtered. The alert lasts until the device is back or its removal is acknowledged (forgetDevices in the mixin config).' % dev, scope='device'),
    alert('RdmaPortDisappeared', 'warning', 'disappeared',
          fmt(|||
            device_port:rdma_port_expected:last_monitored_timestamp_seconds
            unless %(onPort)s rdma_port_info{%(sel)s}
            and %(onDev)s rdma_device_info{%(sel)s}
            and %(onNode)s up{%(sel)s} == 1
          |||),
          'RDMA port disappeared.',
          'RDMA port %s was reported by the exporter before and is gone now although its device is still there. The alert lasts until the port is back or its removal is acknowledged (forgetDevices in the mixin config).' % port, scope='port'),
  ],

  local exporterAlerts = [
    // kube-prometheus TargetDown: one alert per job / namespace / service, not one per node
    // (a Prometheus-side network problem or a bad rollout would page once per node).
    alert('RdmaExporterDown', 'warning', 'exporterDown',
          |||
            100 * (
              count by (%(by)s) (up{%(sel)s} == 0)
              / count by (%(by)s) (up{%(sel)s})
            ) > %(pct)s
          ||| % { by: std.join(', ', [c.clusterLabel] + c.exporterDownGroupLabels), sel: c.selector, pct: c.exporterDownPercent },
          'rdma_exporter targets are down.',
          '{{ $value | humanize }}%% of the rdma_exporter targets of job {{ $labels.job }} (namespace {{ $labels.namespace }}, service {{ $labels.service }}) cannot be scraped: the RDMA fabric of those nodes is not monitored. Which ones: up{%s} == 0.' % c.selector, scope='none'),
    alert('RdmaExporterPollStale', 'warning', 'exporterPollStale',
          fmt('time() - rdma_exporter_last_poll_timestamp_seconds{%(sel)s} > %(pollStaleSeconds)d'),
          'rdma_exporter serves stale data.',
          'The last poll of rdma_exporter on {{ $labels.%s }} finished {{ $value | humanizeDuration }} ago: the poller is stuck.' % c.nodeLabel, scope='node'),
    alert('RdmaExporterCollectorFailing', 'warning', 'collectorFailing',
          fmt('rdma_exporter_collector_success{%(sel)s} == 0'),
          'rdma_exporter collector failing.',
          'Collector {{ $labels.collector }} of rdma_exporter on {{ $labels.%s }} fails: its metrics are missing.' % c.nodeLabel, scope='node'),
    alert('RdmaExporterReadErrors', 'info', 'readErrors',
          fmt('rate(rdma_exporter_read_errors_total{%(sel)s}[%(w)s]) > 0'),
          'rdma_exporter read errors.',
          'Collector {{ $labels.collector }} of rdma_exporter on {{ $labels.%s }} keeps failing to read files (reason {{ $labels.reason }}): some series are missing.' % c.nodeLabel, scope='node'),
  ],

  // The node name the exporter's `up` carries, under the label kube-state-metrics uses.
  local upByNodeName = 'label_replace(up{%s}, "%s", "$1", "%s", "%s")' % [
    c.selector, c.ksmNodeLabel, c.targetNodeNameLabel, c.targetNodeNameRegex,
  ],
  // kube-state-metrics' `resource` label: the name with [^a-zA-Z0-9_] replaced by `_`.
  local ksmResource(name) = std.join('', [
    if (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' then ch else '_'
    for ch in std.stringChars(name)
  ]),

  local kubernetesAlerts = [
    alert('RdmaNodeWithoutHcaAllocatable', 'warning', 'nodeWithoutHca',
          |||
            kube_node_labels{%(ksmSelector)s, %(rdmaNodeLabel)s="%(rdmaNodeLabelValue)s"}
            unless on (%(clusterLabel)s, %(ksmNodeLabel)s)
            kube_node_status_allocatable{%(ksmSelector)s, resource="%(ksmHcaResource)s"} > 0
          ||| % c { ksmHcaResource: ksmResource(c.hcaResource) },
          'RDMA node has no allocatable HCA.',
          'Node {{ $labels.%s }} is labelled rdma=true but has no allocatable %s: the RDMA device plugin is not running there or found no HCA; RDMA pods cannot be scheduled on it.' % [c.ksmNodeLabel, c.hcaResource], scope='none'),
    // A node meant for RDMA without any exporter target: DaemonSet pod not scheduled (taint,
    // nodeSelector, quota) or not discovered. RdmaExporterDown only sees targets that exist.
    alert('RdmaExporterTargetMissing', 'warning', 'exporterTargetMissing',
          |||
            kube_node_labels{%(ksmSelector)s, %(rdmaNodeLabel)s="%(rdmaNodeLabelValue)s"}
            unless on (%(clusterLabel)s, %(ksmNodeLabel)s)
            %(up)s
          ||| % c { up: upByNodeName },
          'RDMA node has no rdma_exporter target.',
          'Node {{ $labels.%s }} is labelled rdma=true but Prometheus has no rdma_exporter target for it (no up{%s} naming the node): its RDMA fabric is not monitored at all.' % [c.ksmNodeLabel, c.selector], scope='none'),
  ],

  // Alerts on the exporter's series keep firing for keepFiringFor after their condition ends,
  // so an exporter outage does not resolve them all at once (see config.libsonnet).
  local keepFiring(rules) =
    if c.keepFiringFor == '0s' then rules
    else [r { keep_firing_for: c.keepFiringFor } for r in rules],

  prometheusRules+:: {
    groups+: [
      { name: 'rdma_exporter.port.rules', rules: portRules },
      { name: 'rdma_exporter.pcie.rules', rules: pcieRules },
      { name: 'rdma_exporter.inventory.rules', rules: inventoryRules },
      { name: 'rdma_exporter.rail.rules', rules: railRules },
      { name: 'rdma_exporter.priority.rules', rules: priorityRules },
      { name: 'rdma_exporter.node.rules', rules: nodeRules },
    ],
  },
  prometheusAlerts+:: {
    groups+: [
      { name: 'rdma_exporter.rail.alerts', rules: keepFiring(railAlerts) },
      { name: 'rdma_exporter.link.alerts', rules: keepFiring(linkAlerts) },
      { name: 'rdma_exporter.lossless.alerts', rules: keepFiring(losslessAlerts) },
      // The retry recording rules evaluate in the alerts' own group, just before them: rules
      // of one group run in order, groups concurrently, so an alert reading another group's
      // fresh recording could see the previous evaluation (a ramping retry count paged or
      // warned one evaluation late, and promtool tests flaked).
      { name: 'rdma_exporter.transport.alerts', rules: transportRules + keepFiring(transportAlerts) },
      { name: 'rdma_exporter.fleet.alerts', rules: keepFiring(fleetAlerts + driftAlerts) },
      { name: 'rdma_exporter.exporter.alerts', rules: exporterAlerts },
      { name: 'rdma_exporter.kubernetes.alerts', rules: kubernetesAlerts },
    ],
  },
}
