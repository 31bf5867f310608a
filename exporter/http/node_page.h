// The node page (/) and its refresh script (/node-page.js); private to the http library.
#pragma once

#include <string>

#include "rdma_exporter/node_status.h"

namespace rdma_exporter {

struct NodePageOptions {
  std::string telemetry_path = "/metrics";
  int refresh_seconds = 10;  // the poll interval: a refresh sooner shows the same snapshot
};

// The page for a status (nullptr before the first poll): HTML, no external assets, readable
// without JavaScript.
std::string RenderNodePage(const NodeHealth* health, const NodePageOptions& options);

// /node-page.js: swaps the page's <main id="status"> for a freshly fetched one every
// data-refresh seconds; counts its swaps in data-refreshes.
extern const char kNodePageScript[];

}  // namespace rdma_exporter
