// The parsers of RDMA netlink (nldev) replies, exposed so tests can feed them the replies of
// mlx5 hardware that no test machine has, and so fuzzers can reach them.
#pragma once

#include <linux/netlink.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "rdma_exporter/kernel_readers.h"

namespace rdma_exporter {

// RDMA_NLDEV_CMD_GET (one device of a dump): its name and index. Returns 0, or ENOENT for a
// message without both (skipped by the caller), or EBADMSG.
[[nodiscard]] int ParseRdmaDevGetReply(const nlmsghdr* hdr, std::string* name, uint32_t* index);

// RDMA_NLDEV_CMD_RES_GET: the RES_SUMMARY entries (name -> current count) of `device`. Returns 0,
// ENODEV when the reply names another device (the index was reused), or EBADMSG.
[[nodiscard]] int ParseRdmaResGetReply(const nlmsghdr* hdr, const std::string& device,
                                       std::map<std::string, uint64_t>* counts);

// RDMA_NLDEV_CMD_STAT_GET (no STAT_RES): every STAT_HWCOUNTERS entry (name, value) of `device`,
// in message order, appended to *out. Returns 0, ENODEV (another device) or EBADMSG.
[[nodiscard]] int ParseRdmaStatGetReply(const nlmsghdr* hdr, const std::string& device,
                                        std::vector<std::pair<std::string, uint64_t>>* out);

// RDMA_NLDEV_CMD_RES_QP_GET (one message of a dump): each RES_QP_ENTRY's port and pid,
// appended to *out. Returns 0, ENODEV (another device) or EBADMSG.
[[nodiscard]] int ParseRdmaResQpReply(const nlmsghdr* hdr, const std::string& device,
                                      std::vector<RdmaQpOwner>* out);

}  // namespace rdma_exporter
