#include <net/if.h>

#include "netns.h"

namespace rdma_exporter::testing {
namespace {

TEST(Netns, VethPairIsVisibleOnlyInsideTheNamespace) {
  RDMA_REQUIRE_ROOT();
  NetnsWithVeth ns;
  ASSERT_TRUE(ns.ok());
  EXPECT_EQ(if_nametoindex("rdx0"), 0u);  // not in the test's own namespace
  ns.Enter();
  EXPECT_NE(if_nametoindex("rdx0"), 0u);
  EXPECT_NE(if_nametoindex("rdx1"), 0u);
  ns.Leave();
  EXPECT_EQ(if_nametoindex("rdx0"), 0u);
}

}  // namespace
}  // namespace rdma_exporter::testing
