// The one place to set selectors, label names, thresholds and `for` durations of the
// rdma_exporter rules and dashboards. Override fields with `(import 'mixin.libsonnet') +
// { _config+:: { ... } }`, then regenerate (see README.md in this directory).
//
// Thresholds marked "site baseline" have no public reference value
// (the team's NCCL field guide, §3): calibrate them on your fleet.
{
  _config+:: {
    // Series of the exporter, as Prometheus scrapes it.
    selector: 'job="rdma_exporter"',
    // kube-state-metrics series (for the node-label / allocatable check).
    ksmSelector: 'job="kube-state-metrics"',
    // Label that tells clusters apart (absent = one cluster) and the label naming a node.
    // Joins use (clusterLabel, nodeLabel, device[, port]); node rules aggregate by both.
    clusterLabel: 'cluster',
    nodeLabel: 'instance',

    // Window of every recorded rate; recording rule names end in `:rate<window>`.
    rateWindow: '5m',
    // Where docs/runbook.md is served; each alert links <base>#<alertname in lower case>.
    // Set it to an absolute URL of your copy (a Git forge, an internal docs site).
    runbookUrlBase: 'docs/runbook.md',

    // Bytes one PortXmitWait tick stands for (NVIDIA Quantum: 8 bytes per count, "lost bytes =
    // counter * (tick + 1)", tick 7; ibdiagnet "Congestion Assessment on InfiniBand Links").
    xmitWaitBytesPerTick: 8,

    // The `for` duration of each alert.
    'for': {
      portDown: '2m',
      portFlapping: '0m',
      // 5m: a burst of drops settles into one of RdmaLinkDowned / RdmaLinkDownedRising /
      // RdmaPortFlapping before any fires (each excludes the next), instead of all three.
      linkDownedRising: '5m',
      rateBelowExpected: '10m',
      pcieDowntrained: '10m',
      physicalErrors: '0m',
      // RdmaPfcStorm: with windows.pfcStormFast (1m) a full pause pages ~2 min after it starts.
      pfcStorm: '1m',
      pfcStormWatchdog: '0m',
      ncclPriorityPaused: '15m',
      congestionSurge: '15m',
      outOfBuffer: '10m',
      // Retries page on their own evidence (sustained / outlier, see windows), not on `for`.
      transportRetries: '0m',
      roceConfig: '5m',
      counterSaturated: '5m',
      disappeared: '10m',
      exporterDown: '5m',
      exporterTargetMissing: '15m',
      exporterPollStale: '5m',
      collectorFailing: '15m',
      readErrors: '15m',
      nodeWithoutHca: '15m',
      railImbalance: '15m',
      transmitWait: '15m',
      // The leaf waiting on this HCA (the neighbour's PortXmitWait; slow tier, 60 s samples).
      slowReceiver: '15m',
      laneErrorsSkewed: '15m',
      moduleEvents: '0m',
      // Transceiver DOM (the `module` collector): below / above the module's own thresholds.
      moduleRxPowerLow: '10m',
      moduleTemperatureHigh: '10m',
      moduleAlarm: '5m',
      moduleLaneRxPowerDrift: '30m',
      losslessDiscards: '5m',
      receiveDiscards: '10m',
      // --- lossless/transport ---
      pfcStormWarning: '0m',
      rnrRetries: '0m',
      // Configuration states: long enough to ride out a `mlnx_qos` / driver reload sequence.
      pfcWithoutEcn: '15m',
      ecnWithoutCnp: '15m',
      resourcesNearLimit: '10m',
      // --- link/physical ---
      // Any link drop (the window windows.linkDownedOnce holds it); 5m as linkDownedRising.
      linkDowned: '5m',
      // Post-FEC BER: the ticket reads a 1h rate (a short `for` only rides out scrape gaps);
      // the drain level reads the 5m rate and needs 10m, twice the window, so a single burst
      // of errors (a link retraining) can never page; a sustained BER pages within ~11m at 10x
      // the level and within 15m at 1.5x (tests/rules/link.test.yaml).
      bitErrorRateTicket: '5m',
      bitErrorRateDrain: '10m',
      preFecBitErrorRate: '30m',
      // Rates over the 5m window for twice the window: the burst of discards / errors of one
      // link drop never fires.
      transmitDiscards: '10m',
      receiveErrors: '10m',
      pcieAerFatal: '0m',
      pcieAerNonFatal: '0m',
      pcieSignalIntegrity: '0m',
      // --- rails/fleet ---
      // A port down on a non-rail PF (storage / management NIC); rail ports use portDown.
      nonRailPortDown: '5m',
      // An SR-IOV VF port down while its PF is up (info; pod restarts take minutes).
      vfPortDown: '15m',
      // Rail ports down on many nodes of a cluster at once (one page for a leaf switch).
      portsDownOnManyNodes: '2m',
      // Several ports behind one LLDP neighbour (switch) degraded at once.
      switchPortsDegraded: '5m',
      fewerRails: '15m',
      railOutlier: '15m',
      // Fleet drift: firmware rollouts and MTU / QoS changes take hours across a fleet.
      firmwareDrift: '6h',
      mtuDrift: '1h',
      ncclPriorityDrift: '1h',
      roceChecksMissing: '30m',
    },

    // Windows of the count-based alerts (increase over the window).
    windows: {
      flap: '15m',
      linkDowned: '6h',
      physicalErrors: '1h',
      transport: '5m',
      stormEvents: '10m',
      // The device / port memory (RdmaDeviceDisappeared, RdmaPortDisappeared) reads its own
      // previous value over this window: a Prometheus outage or rule-evaluation gap longer than
      // this forgets the devices that were already missing then (docs/runbook.md). Each
      // evaluation reads ~window/interval samples per remembered device.
      inventoryCarry: '1h',
      // Per-lane raw PHY errors and transceiver module events (increase over the window).
      laneErrors: '1h',
      moduleEvents: '1h',
      // --- lossless/transport ---
      // Short window of the full-pause page of RdmaPfcStorm. Assumes a scrape interval <= 15s
      // (>= 4 samples per window); with a 30s or 60s scrape set it to 2m / 4m (pages later).
      pfcStormFast: '1m',
      // RdmaTransportRetries pages when a port's retries were above threshold at every 1m
      // step of this window (retries in each 5m window for ~20 min: a broken path, not a peer
      // that died once; NCCL gives up on a dead peer within ~34 s, field guide §2).
      transportSustained: '20m',
      // --- link/physical ---
      // A single link drop stays visible (RdmaLinkDowned) this long.
      linkDownedOnce: '1h',
      // Post-FEC BER ticket window: long enough that a handful of errors at NDR is measurable
      // (1e-14 x 400 Gb/s x 1h = 14 errors).
      bitErrorRateTicket: '1h',
      // Pre-FEC baseline: the port's own average over baselineRange, offset baselineOffset (so
      // the fault being detected is not in its own baseline), sampled every baselineStep (a
      // subquery: 168 points per port and evaluation instead of 10080 raw samples).
      preFecBaselineRange: '7d',
      preFecBaselineOffset: '1d',
      preFecBaselineStep: '1h',
      // PCIe AER and signal-integrity events (increase over the window).
      pcieAer: '1h',
      pcieSignalIntegrity: '1h',
      // A port_xmit_wait that reached its 32-bit maximum within this window on a busy port is
      // evidence of credit waiting (RdmaPortTransmitWaitHigh).
      transmitWaitSaturated: '1h',
      // --- rails/fleet ---
      // An SR-IOV VF down while its PF is up is reported only if the VF was up within this
      // window (a VF never brought up is unused, not broken).
      vfWasUp: '1h',
    },

    // The device / port memory forgets the devices of a node whose exporter has not been up for
    // this long (decommissioned nodes, renamed instances); while a node's exporter is up its
    // missing devices are remembered until they come back or are listed in forgetDevices.
    inventoryForgetSeconds: 7 * 24 * 3600,
    // Acknowledged removals: objects of label equalities, e.g. { instance: 'gpu17', device:
    // 'mlx5_3' } (a device and its ports) or with `port: '2'` (one port), optionally with the
    // cluster label. The memory drops a listed device once it is missing, which resolves its
    // alert; a listed device that is present is still learned, so an entry can stay.
    forgetDevices: [],

    // keep_firing_for of every alert on the exporter's series (link, lossless, transport,
    // fleet): when the exporter goes down their series vanish and, without it, every open alert
    // of the node would resolve at once. Longer than for.exporterDown so that RdmaExporterDown
    // fires before any of them resolves; the price: a real recovery resolves this much later.
    // Needs Prometheus >= 2.42. '0s' leaves the field out.
    keepFiringFor: '10m',

    // RdmaExporterDown, the kube-prometheus TargetDown pattern: one alert per group of
    // targets (these labels and clusterLabel) when more than this percentage of the group's
    // exporter targets is down. kube-prometheus uses 10 % for generic targets; here every
    // target is a node's fabric going unmonitored, so any (0).
    exporterDownGroupLabels: ['job', 'namespace', 'service'],
    exporterDownPercent: 0,

    thresholds: {
      // rdma_port_up transitions within windows.flap (4 = two down/up cycles; one flap = 2).
      flapStateChanges: 4,
      // Link-down events (PMA link_downed or PHY link_down_events) within windows.flap.
      flapLinkDowns: 2,
      // link_downed / link_down_events_phy within windows.linkDowned (one flap = 1).
      linkDownedEvents: 2,
      // link_error_recovery (infiniband-diags error_thresholds example LinkErrorRecoveryCounter=10)
      // and Ethernet rx_crc_errors_phy within windows.physicalErrors. Symbol errors are in the
      // normalised BER (RdmaPortHighBitErrorRate), not here.
      physicalErrors: 10,
      // Share of wall time a priority sends PFC pause within the 5m rate: a partial storm
      // (site baseline: no public "storm %" figure exists, field guide §3; a healthy NIC pauses
      // its switch a few % of the time).
      pfcStormPauseRatio: 0.5,
      // Share of wall time the NCCL priority is paused by the fabric (field guide: 0.1 for 15m).
      ncclPauseRatio: 0.1,
      // RDMA packets dropped per second for lack of a receive WQE (site baseline).
      outOfBufferPerSecond: 10,
      // Within windows.transport: retries exceeded (any is bad), local ACK timeouts (field
      // guide: 8), packet sequence errors (site baseline).
      transportRetriesExceeded: 0,
      localAckTimeouts: 8,
      packetSeqErrors: 10,
      // Exporter poll older than this (seconds) = stale.
      pollStaleSeconds: 60,
      // Rail imbalance: a port carrying less than this share of the median traffic of its
      // node's up PF ports, on nodes whose median port carries at least railMinBytesPerSecond.
      railTrafficRatio: 0.2,
      railMinBytesPerSecond: 100e6,
      // Share of time an InfiniBand port wanted to send but had no credits (lost bandwidth).
      transmitWaitRatio: 0.1,
      // Share of time the switch port at the other end had data for this HCA but no credits
      // (RdmaPortSlowReceiver): the same lost-bandwidth measure, seen from the leaf.
      slowReceiverWaitRatio: 0.1,
      // One lane far worse than its siblings (the failing optic): its raw pre-FEC errors within
      // windows.laneErrors exceed this many times those of the cleanest lane of the port, and
      // laneMinErrors (site baseline: healthy PAM4 lanes count pre-FEC errors all the time, so
      // only the ratio between lanes means something; a real bad lane is 100x-1000x).
      laneErrorSkewRatio: 10,
      laneMinErrors: 1000,
      // RdmaModuleLaneRxPowerDrift: a lane receiving less than this share of the median of its
      // module's lanes (0.5 = 3 dB: the lanes of one module see one fibre bundle, one far-end
      // transmitter; a single weak lane is a dirty or damaged fibre or connector). Optics specs
      // allow ~1-2 dB between lanes.
      moduleLaneRxPowerRatio: 0.5,
      // rx_discards_phy per second (site baseline; lossy traffic classes may drop by design).
      // Discards on a PFC-enabled priority alert at any rate.
      receiveDiscardsPerSecond: 10,
      // --- lossless/transport ---
      // RdmaPfcStorm full pause: share of wall time the NIC sends pause within
      // windows.pfcStormFast (field guide #6: rate(tx_prio3_pause_duration[1m]) > 9e5 µs/s).
      pfcStormFullPauseRatio: 0.9,
      // RdmaCongestionSurge: share of received RDMA packets that arrive ECN-marked
      // (np_ecn_marked_roce_packets / port_rcv_packets), only on ports receiving below
      // congestionMaxReceiveUtilisation of line rate (a receiver at line rate is incast: DCQCN
      // working as designed) and at least congestionMinPacketsPerSecond. All site baseline: no
      // public healthy-vs-congested CNP figure exists (field guide §3) and Meta runs DCQCN off.
      congestionMarkedRatio: 0.1,
      congestionMaxReceiveUtilisation: 0.5,
      congestionMinPacketsPerSecond: 1000,
      // RdmaEcnWithoutCnp: ECN-marked packets per second received while np_cnp_sent stays 0
      // (site baseline, above noise: sustained marking must trigger CNPs, field guide #7).
      ecnWithoutCnpMarkedPerSecond: 1,
      // RdmaPfcWithoutEcn exists only when the fabric runs DCQCN: set false on PFC-only
      // fabrics (Meta's 400G RoCE backend, field guide §5.2).
      dcqcnExpected: true,
      // RdmaTransportRetries pages when sustained (windows.transportSustained) or when its node
      // is an outlier: its retry events within windows.transport >= transportOutlierFactor x
      // the median of the cluster's nodes that see any, with >= transportOutlierMinNodes such
      // nodes (site baseline: a dead peer gives its neighbours similar counts, a broken node
      // retries on all its QPs, several times each neighbour's count).
      transportOutlierFactor: 4,
      transportOutlierMinNodes: 3,
      // RNR retries within windows.transport: NCCL sets rnr_retry 7 (retry forever) and "RNRs
      // should not happen by design" (field guide #8), so any.
      rnrRetries: 0,
      // QPs / MRs allocated as a share of the device limit (site baseline: 10 % headroom for
      // the next job; exhaustion fails ibv_create_qp / ibv_reg_mr, field guide #12).
      resourceUsageRatio: 0.9,
      // --- link/physical ---
      // Effective (post-FEC) bit error rate, errors per bit of line rate (InfiniBand
      // symbol_error, on HDR/NDR the errors left after FEC; Ethernet rx_pcs_symbol_err_phy).
      // Drain (critical) above 1e-12: ibdiagnet's BER threshold, NVIDIA's cable guidance
      // (field guide [IBD-BER]). Ticket (warning) above 1e-14 over windows.bitErrorRateTicket
      // (issue 16: 12 errors/h on NDR is ~1e-14), with at least bitErrorsTicketMin errors so a
      // single error on a slow port (1 per hour at 25 Gb/s is 1.1e-14) is not a ticket.
      bitErrorRateTicket: 1e-14,
      bitErrorRateDrain: 1e-12,
      bitErrorsTicketMin: 3,
      // Pre-FEC BER against the port's own baseline (field guide row 3: > 10x its 7-day average
      // offset 1d; site baseline) and above an absolute floor, so a clean port whose near-zero
      // rate moves from 1e-12 to 1e-10 does not fire. 1e-8 is four decades below the pre-FEC BER
      // RS(544,514) "KP4" FEC is commonly quoted to correct (~2.4e-4); site baseline.
      preFecBaselineRatio: 10,
      preFecBitErrorRateFloor: 1e-8,
      // InfiniBand port_xmit_discards and port_rcv_errors per second (site baseline: a healthy
      // lossless port reads 0; 0.1/s for 10m is 60 lost packets, far above the burst of one
      // link drop, which the `for` never lets fire).
      transmitDiscardsPerSecond: 0.1,
      receiveErrorsPerSecond: 0.1,
      // PCIe link recoveries (rx/tx_pci_signal_integrity) within windows.pcieSignalIntegrity.
      // The field guide's sketch alerts on any; a handful of recoveries costs microseconds
      // (site baseline).
      pcieSignalIntegrityErrors: 10,
      // Share of line rate a port must transmit for a port_xmit_wait that just saturated to
      // count as credit waiting (site baseline; an idle port saturating is not congestion now).
      transmitWaitSaturatedMinUtilisation: 0.05,

      // --- rails/fleet ---
      // RdmaPortsDownOnManyNodes: rail ports down on at least this many nodes of a cluster at
      // once is one cause (leaf / spine switch, subnet manager, a rack's power or cabling) and
      // pages once; the per-port RdmaPortDown drops to info meanwhile. Site baseline: in a
      // rail-optimised fabric one leaf serves one rail of a whole scalable unit (16-32 nodes),
      // while independent cable / NIC failures on 3 nodes within the same 2 minutes are rare
      // (Llama 3: 35 switch/cable + 7 NIC interruptions in 54 days on 16K GPUs, nccl-field-guide
      // §5.3).
      portsDownNodes: 3,
      // RdmaSwitchPortsDegraded: ports (on any nodes) behind one switch, by its LLDP system name,
      // that are down, dropped their link or run a BER above bitErrorRateTicket (site baseline:
      // independent cable or NIC faults on 3 ports of one leaf within minutes are rare).
      switchDegradedPorts: 3,
      // Rails every node should have (RdmaFewerRailsThanExpected); 0 = the most common rail
      // count of the nodes of the cluster (set it on small or mixed clusters).
      railsPerNode: 0,
      // RdmaRailImbalance fires only on nodes where at least this share of the up rails is
      // busy (>= railTrafficRatio of the median rail): a job on every GPU uses every rail, a
      // job on half the GPUs only half of them (site baseline: jobs use 1, 2, 4 or 8 GPUs per
      // node, so 3/4 busy means a full-node job with a rail left out).
      railBusyShare: 0.75,
      // RdmaRailOutlier: a busy rail (>= railMinBytesPerSecond) whose signal exceeds this many
      // times the median of the node's busy rails (at least railOutlierMinRails of them) and
      // the signal's floor. Collectives move equal bytes per rail, so a slow rail shows up as
      // more pause, xmit_wait, CNP or errors than its siblings (nccl-field-guide §4 "per-rail
      // skew with pauses on only some rails"); the factor and floors are site baselines (no
      // public per-rail figure): 4x keeps normal spread between rails quiet, the floors keep
      // noise on otherwise clean rails quiet.
      railOutlierFactor: 4,
      railOutlierMinRails: 3,
      railOutlierFloors: {
        // share of wall time paused (received / sent PFC pause), share of time waiting for
        // credits: 2 %, a fifth of the absolute NCCL-paused threshold (ncclPauseRatio 0.1)
        pfc_rx_pause_ratio: 0.02,
        pfc_tx_pause_ratio: 0.02,
        port_xmit_wait_ratio: 0.02,
        // CNP handled / ECN-marked packets per second (the old absolute congestionSurge value)
        rp_cnp_handled: 1000,
        np_ecn_marked_roce_packets: 1000,
        // errors + drops per second summed over every counter of device_port:rdma_port_errors
        errors: 1,
      },
    },

    // kube-state-metrics: nodes labelled <rdmaNodeLabel>=<rdmaNodeLabelValue> (KSM exports
    // node label rdma as label_rdma when allowed by --metric-labels-allowlist) must have
    // allocatable <hcaResource> and an exporter target. hcaResource is the Kubernetes resource
    // name; the rules match KSM's `resource` label, the name with every character outside
    // [a-zA-Z0-9_] replaced by `_` (kube-state-metrics internal/store sanitizeLabelName):
    // rdma/hca_shared_devices_a -> rdma_hca_shared_devices_a. The default is the resource of
    // the k8s-rdma-shared-dev-plugin's example config (resourcePrefix rdma, resourceName
    // hca_shared_devices_a); set yours (e.g. 'rdma/hca', 'nvidia.com/hostdev').
    rdmaNodeLabel: 'label_rdma',
    rdmaNodeLabelValue: 'true',
    hcaResource: 'rdma/hca_shared_devices_a',
    ksmNodeLabel: 'node',
    // RdmaExporterTargetMissing joins KSM's ksmNodeLabel with the node name the exporter's
    // `up` carries: label targetNodeNameLabel, its value matched against targetNodeNameRegex
    // and $1 kept (the shipped ServiceMonitor / PodMonitor / scrape job set instance = node
    // name; use '([^:]+)(?::[0-9]+)?' if yours keeps a port).
    targetNodeNameLabel: 'instance',
    targetNodeNameRegex: '(.+)',

    // Rails: the ports NCCL stripes a job over (one per GPU in a rail-optimised node), told
    // apart from storage / management NICs and SR-IOV VFs, so rail comparisons and the rail
    // label of alerts only look at them. Recorded as device_port:rdma_rail:info{rail=...}.
    rails: {
      // PromQL label matchers on device_port:rdma_port_labels:info (labels device, port,
      // netdev, link_layer, board_id, hca_type, node_guid, fw_ver, physfn), e.g.
      // 'device=~"mlx5_[0-7]"' or 'board_id="MT_0000000838"'. Empty = the default: the
      // physical-function ports of the node's most common (board_id, link_layer), i.e. the
      // NIC model the node has most of (8 ConnectX-7 rails beside one storage ConnectX-6:
      // the ConnectX-7 ports). A node with two equally common models picks one of them;
      // set a selector on such fleets.
      selector: '',
      // The rail's name (the `rail` label): this label of the port, through railRegex ($1).
      // The device name is the same rail on every node of a uniform fleet (mlx5_0 .. mlx5_7);
      // use 'netdev' where device numbering differs between nodes.
      idLabel: 'device',
      idRegex: '(.*)',
    },

    // Dashboards.
    dashboardTags: ['rdma', 'rdma_exporter'],
    dashboardRefresh: '30s',
    dashboardTimeFrom: 'now-1h',
    dashboardUidPrefix: 'rdma-exporter-',
  },
}
