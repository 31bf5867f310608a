// Helpers of the CLI unit tests (cli_*_test.cpp): run a subcommand in-process and compare its
// output with a golden file under tests/golden/cli/.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "rdma_exporter/cli.h"

namespace rdma_exporter::testing {

struct CliRun {
  int code = -1;
  std::string out, err;
};

inline CliRun RunCliCommand(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  CliRun run;
  run.code = RunCli(args, out, err);
  run.out = out.str();
  run.err = err.str();
  return run;
}

// Compares text with tests/golden/cli/<name>; UPDATE_GOLDEN=1 rewrites the file instead.
inline void ExpectGolden(const std::string& name, const std::string& text) {
  std::string path = std::string(RDMA_TEST_GOLDEN) + "/cli/" + name;
  if (std::getenv("UPDATE_GOLDEN") != nullptr) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path) << text;
    return;
  }
  std::ifstream file(path);
  std::stringstream golden;
  golden << file.rdbuf();
  EXPECT_TRUE(file.good()) << "missing golden file " << path;
  EXPECT_EQ(text, golden.str()) << "golden " << name << " differs (UPDATE_GOLDEN=1 to refresh)";
}

}  // namespace rdma_exporter::testing
