// What the exporter asks of the host it runs on, in one place: the wall clock (for timestamps
// and poll ages shown to people; durations use steady_clock) and the node's name.
#pragma once

#include <string>

namespace rdma_exporter {

// Seconds since the Unix epoch, from the system clock.
double WallClockSeconds();
// gethostname(), or "" when it fails.
std::string HostName();

}  // namespace rdma_exporter
