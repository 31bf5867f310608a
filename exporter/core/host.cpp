#include "rdma_exporter/host.h"

#include <unistd.h>

#include <chrono>

namespace rdma_exporter {

double WallClockSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string HostName() {
  char host[256] = {};
  return gethostname(host, sizeof(host) - 1) == 0 ? host : "";
}

}  // namespace rdma_exporter
