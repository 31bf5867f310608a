// The interface between the readers and librdma_exporter_kubelet.so, the module that holds the
// kubelet pod-resources gRPC client and the shared device plugin config parser.
//
// Why a module: gRPC and protobuf make ~5 MB of their pages resident as soon as they are loaded
// (static initialisers and relocations of libgrpc, libprotobuf, libgrpc++, re2, abseil), while an
// idle exporter without them is ~11 MB. They are needed only on a node with a kubelet socket or a
// --collector.pod_resources.shared-config file, so pod_resources.cpp dlopen()s the module the
// first time one of those asks for it. The module is built with the exporter and installed beside
// the OpenSSL shims (lib/rdma_exporter); both sides are compiled from this header together, so
// C++ types cross the boundary (the version check catches a stale module file).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rdma_exporter/pod_resources.h"

namespace rdma_exporter {

inline constexpr int kKubeletModuleVersion = 1;
inline constexpr const char* kKubeletModuleFile = "librdma_exporter_kubelet.so";
inline constexpr const char* kKubeletModuleSymbol = "rdma_exporter_kubelet_module";

struct KubeletModule {
  int version;       // kKubeletModuleVersion
  size_t this_size;  // sizeof(KubeletModule) of the module's build
  // An opaque client for PodResourcesClient (see there for the semantics).
  void* (*new_client)(const std::string& socket_path, std::chrono::milliseconds deadline,
                      int max_response_bytes);
  void (*delete_client)(void* client);
  bool (*list)(void* client, std::vector<ContainerDeviceGrant>* out, std::string* reason,
               std::string* detail);
  std::optional<std::vector<SharedDevicePool>> (*parse_shared_device_plugin_config)(
      std::string_view json, std::string* error);
};

}  // namespace rdma_exporter

// The module's one exported symbol.
extern "C" const rdma_exporter::KubeletModule* rdma_exporter_kubelet_module();
