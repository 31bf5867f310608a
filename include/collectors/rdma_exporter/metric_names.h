// Names of the metric families that other layers read back: the landing page (http) and the
// doctor (cli) look samples up by these constants, and the collectors emit them through the
// same constants, so a rename cannot leave a reader behind. Families nobody reads back keep
// their name where they are emitted.
#pragma once

#include <string_view>

namespace rdma_exporter::metric {

// Every family's prefix.
inline constexpr std::string_view kPrefix = "rdma_";

// device, port (collectors/device_info, port_state)
// The prefix of the port families, the PMA counters below included.
inline constexpr std::string_view kPortPrefix = "rdma_port_";
inline constexpr std::string_view kDeviceInfo = "rdma_device_info";
inline constexpr std::string_view kPortInfo = "rdma_port_info";
inline constexpr std::string_view kPortState = "rdma_port_state";
inline constexpr std::string_view kPortPhysicalState = "rdma_port_physical_state";
inline constexpr std::string_view kPortUp = "rdma_port_up";
inline constexpr std::string_view kPortRate = "rdma_port_rate_bytes_per_second";
inline constexpr std::string_view kPortLinkWidth = "rdma_port_link_width_lanes";
// PMA counters (collectors/port_counters)
inline constexpr std::string_view kPortCountersSaturated = "rdma_port_counters_saturated";
inline constexpr std::string_view kPortSymbolErrors = "rdma_port_symbol_errors_total";
inline constexpr std::string_view kPortLinkErrorRecovery = "rdma_port_link_error_recovery_total";
inline constexpr std::string_view kPortLinkDowned = "rdma_port_link_downed_total";
inline constexpr std::string_view kPortReceiveErrors = "rdma_port_receive_errors_total";
inline constexpr std::string_view kPortReceiveRemotePhysicalErrors =
    "rdma_port_receive_remote_physical_errors_total";
inline constexpr std::string_view kPortReceiveSwitchRelayErrors =
    "rdma_port_receive_switch_relay_errors_total";
inline constexpr std::string_view kPortTransmitDiscards = "rdma_port_transmit_discards_total";
inline constexpr std::string_view kPortTransmitConstraintErrors =
    "rdma_port_transmit_constraint_errors_total";
inline constexpr std::string_view kPortReceiveConstraintErrors =
    "rdma_port_receive_constraint_errors_total";
inline constexpr std::string_view kPortLocalLinkIntegrityErrors =
    "rdma_port_local_link_integrity_errors_total";
inline constexpr std::string_view kPortExcessiveBufferOverrunErrors =
    "rdma_port_excessive_buffer_overrun_errors_total";
// hw counters (collectors/hw_counters): rdma_hw_<counter file>_total
inline constexpr std::string_view kHwPrefix = "rdma_hw_";
inline constexpr std::string_view kHwLocalAckTimeoutErr = "rdma_hw_local_ack_timeout_err_total";
inline constexpr std::string_view kHwPacketSeqErr = "rdma_hw_packet_seq_err_total";
inline constexpr std::string_view kHwOutOfSequence = "rdma_hw_out_of_sequence_total";
inline constexpr std::string_view kHwOutOfBuffer = "rdma_hw_out_of_buffer_total";
inline constexpr std::string_view kHwReqCqeError = "rdma_hw_req_cqe_error_total";
inline constexpr std::string_view kHwRespCqeError = "rdma_hw_resp_cqe_error_total";
inline constexpr std::string_view kHwRxIcrcEncapsulated = "rdma_hw_rx_icrc_encapsulated_total";
inline constexpr std::string_view kHwRcvdSeqErr = "rdma_hw_rcvd_seq_err_total";
inline constexpr std::string_view kHwCompleterRetryErr = "rdma_hw_completer_retry_err_total";
inline constexpr std::string_view kHwReqTransportRetriesExceeded =
    "rdma_hw_req_transport_retries_exceeded_total";
inline constexpr std::string_view kHwRetryExceededErr = "rdma_hw_retry_exceeded_err_total";
// PCIe (collectors/pcie)
inline constexpr std::string_view kPcieLinkSpeed = "rdma_pcie_link_transfers_per_second";
inline constexpr std::string_view kPcieLinkWidth = "rdma_pcie_link_width_lanes";
inline constexpr std::string_view kPcieAerErrors = "rdma_pcie_aer_errors_total";
// GPU rails (collectors/gpu_affinity)
inline constexpr std::string_view kGpuAffinityInfo = "rdma_gpu_affinity_info";
// Transceiver / cable modules (collectors/module)
inline constexpr std::string_view kModuleInfo = "rdma_module_info";
inline constexpr std::string_view kModuleTemperature = "rdma_module_temperature_celsius";
inline constexpr std::string_view kModuleTemperatureThreshold =
    "rdma_module_temperature_threshold_celsius";
inline constexpr std::string_view kModuleVoltage = "rdma_module_supply_voltage_volts";
inline constexpr std::string_view kModuleVoltageThreshold =
    "rdma_module_supply_voltage_threshold_volts";
inline constexpr std::string_view kModuleRxPower = "rdma_module_rx_power_watts";
inline constexpr std::string_view kModuleRxPowerThreshold = "rdma_module_rx_power_threshold_watts";
inline constexpr std::string_view kModuleTxPower = "rdma_module_tx_power_watts";
inline constexpr std::string_view kModuleTxPowerThreshold = "rdma_module_tx_power_threshold_watts";
inline constexpr std::string_view kModuleTxBias = "rdma_module_tx_bias_amperes";
inline constexpr std::string_view kModuleTxBiasThreshold = "rdma_module_tx_bias_threshold_amperes";
inline constexpr std::string_view kModuleFlags = "rdma_module_flags";
// The device at the other end of a port's link (lldp collector; InfiniBand SMPs later).
inline constexpr std::string_view kPortPeerInfo = "rdma_port_peer_info";
inline constexpr std::string_view kPortPeerTransmitWait =
    "rdma_port_peer_transmit_wait_ticks_total";
// Pods (collectors/pod_resources)
inline constexpr std::string_view kPodInfo = "rdma_pod_info";
inline constexpr std::string_view kPodQps = "rdma_pod_qps";
inline constexpr std::string_view kPodResourcesUp = "rdma_exporter_pod_resources_up";
// GIDs, verbs (collectors/gid_table, verbs)
inline constexpr std::string_view kGidInfo = "rdma_gid_info";
inline constexpr std::string_view kPortActiveMtu = "rdma_port_active_mtu_bytes";
// netdev (collectors/netdev)
inline constexpr std::string_view kNetdevMtu = "rdma_netdev_mtu_bytes";
inline constexpr std::string_view kNetdevCarrierDown = "rdma_netdev_carrier_down_total";
inline constexpr std::string_view kNetdevReceiveErrors = "rdma_netdev_receive_errors_total";
inline constexpr std::string_view kNetdevTransmitErrors = "rdma_netdev_transmit_errors_total";
// lossless fabric (collectors/ethtool, dcb, ecn, roce_config)
inline constexpr std::string_view kPriorityDiscards = "rdma_priority_discards_total";
inline constexpr std::string_view kPhyLinkDownEvents = "rdma_phy_link_down_events_total";
inline constexpr std::string_view kPfcStormEvents = "rdma_pfc_storm_events_total";
inline constexpr std::string_view kPfcPauseDuration = "rdma_pfc_pause_duration_seconds_total";
inline constexpr std::string_view kPfcPauseFrames = "rdma_pfc_pause_frames_total";
inline constexpr std::string_view kPhyLaneErrors = "rdma_phy_lane_errors_total";
inline constexpr std::string_view kPcieSignalIntegrity = "rdma_pcie_signal_integrity_errors_total";
inline constexpr std::string_view kModuleEvents = "rdma_module_events_total";
inline constexpr std::string_view kDcbSupported = "rdma_dcb_supported";
inline constexpr std::string_view kPfcEnabled = "rdma_pfc_enabled";
inline constexpr std::string_view kQosTrustInfo = "rdma_qos_trust_info";
inline constexpr std::string_view kEcnEnabled = "rdma_ecn_enabled";
inline constexpr std::string_view kNcclPriority = "rdma_nccl_priority";
inline constexpr std::string_view kRoceConfigOk = "rdma_roce_config_ok";

}  // namespace rdma_exporter::metric
