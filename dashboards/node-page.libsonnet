// The thresholds of the exporter's node page (/ and /api/v1/status), taken from the same
// _config as the alert rules so that a port turns amber or red on the page when the rule that
// pages for it would fire on a sustained rate. Written to out/node-page-thresholds.json, which
// the exporter's build compiles in (exporter/health/CMakeLists.txt): change config.libsonnet,
// run ./generate.sh, rebuild.
//
// The page compares rates between the poller's last two snapshots (seconds apart), not over
// the rules' windows: counts within a window become per-second rates here, and the rules' `for`
// does not apply (the page shows now, the alert waits). Flat: name -> number.
local seconds(d) =
  local units = { s: 1, m: 60, h: 3600, d: 86400 };
  local unit = d[std.length(d) - 1];
  std.parseInt(std.substr(d, 0, std.length(d) - 1)) * units[unit];

function(c) {
  local t = c.thresholds,
  local transport = seconds(c.windows.transport),
  // RdmaPfcStormWarning (warning) / RdmaPfcStorm (critical): share of time the NIC sends pause.
  pfcTxPauseWarnRatio: t.pfcStormPauseRatio,
  pfcTxPauseCritRatio: t.pfcStormFullPauseRatio,
  // RdmaNcclPriorityPaused (warning): share of time the fabric pauses the NCCL priority.
  ncclRxPauseWarnRatio: t.ncclPauseRatio,
  // RdmaPortHighBitErrorRate: ticket (warning) and drain (critical), errors per bit.
  bitErrorRateWarn: t.bitErrorRateTicket,
  bitErrorRateCrit: t.bitErrorRateDrain,
  // RdmaPortReceiveErrors, RdmaPortTransmitDiscards, RdmaPortReceiveDiscards, RdmaOutOfBuffer.
  receiveErrorsPerSecond: t.receiveErrorsPerSecond,
  transmitDiscardsPerSecond: t.transmitDiscardsPerSecond,
  receiveDiscardsPerSecond: t.receiveDiscardsPerSecond,
  outOfBufferPerSecond: t.outOfBufferPerSecond,
  // RdmaTransportRetries: counts within windows.transport as rates.
  localAckTimeoutsPerSecond: t.localAckTimeouts / transport,
  packetSeqErrorsPerSecond: t.packetSeqErrors / transport,
  retriesExceededPerSecond: t.transportRetriesExceeded / transport,
  // Events a rate between two polls must count before it colours a port: a few seconds apart,
  // one rare error is a huge rate, while the rules need several in their window (a BER ticket
  // needs bitErrorsTicketMin errors, a retry warning more than its count in windows.transport).
  // Any retries exceeded or link drop counts at once (their rules fire on any).
  minEvents: t.bitErrorsTicketMin,
  localAckTimeoutsMinEvents: t.localAckTimeouts + 1,
  packetSeqErrorsMinEvents: t.packetSeqErrors + 1,
  // RdmaPortTransmitWaitHigh: share of time waiting for credits.
  transmitWaitRatio: t.transmitWaitRatio,
  xmitWaitBytesPerTick: c.xmitWaitBytesPerTick,
  // RdmaModuleLaneRxPowerDrift: a lane below this share of its module's median lane.
  moduleLaneRxPowerRatio: t.moduleLaneRxPowerRatio,
  // RdmaExporterPollStale: the last poll older than this.
  pollStaleSeconds: t.pollStaleSeconds,
}
