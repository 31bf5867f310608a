// The flag tables (rdma_exporter/flag_spec.h): exact error texts of both parsers, every
// spelling of a flag, the shared flags meaning the same in both tables, the usage layout, and
// docs/flags.md being what the tables generate.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "exporter/flags.h"
#include "rdma_exporter/cli.h"
#include "rdma_exporter/flag_spec.h"

namespace rdma_exporter {
namespace {

struct ErrorCase {
  std::vector<std::string> args;
  std::string error;
};

// The messages as the hand-written parsers printed them before the tables; scripts and
// operators may match on them.
TEST(FlagErrors, ExporterMessagesAreExact) {
  const std::vector<ErrorCase> cases = {
      {{"--bogus"}, "unknown flag --bogus (see --help)"},
      {{"--collector.nosuch"}, "unknown collector \"nosuch\" in --collector.nosuch (see --help)"},
      {{"--collector.nosuch=1"}, "unknown collector \"nosuch\" in --collector.nosuch (see --help)"},
      {{"--no-collector.nosuch"},
       "unknown collector \"nosuch\" in --no-collector.nosuch (see --help)"},
      {{"--no-collector.gid=maybe"},
       "invalid value \"maybe\" for --no-collector.gid (want true or false)"},
      {{"--collector.gid=maybe"},
       "invalid value \"maybe\" for --collector.gid (want true or false)"},
      {{"--collector.gid="}, "invalid value \"\" for --collector.gid (want true or false)"},
      {{"--poll-interval=ten"},
       "invalid duration \"ten\" for --poll-interval (e.g. 10s, 500ms, 0)"},
      {{"--poll-interval=10ms"}, "--poll-interval must be 0 or at least 100ms"},
      {{"--poll-interval"}, "flag --poll-interval needs a value"},
      {{"--poll-interval.slow=soon"},
       "invalid duration \"soon\" for --poll-interval.slow (e.g. 60s, 5m, 0)"},
      {{"--log.level=loud"}, "invalid --log.level \"loud\" (debug, info, warn, error)"},
      {{"--log.format=xml"}, "invalid --log.format \"xml\" (logfmt or json)"},
      {{"--web.listen-address=nohost"},
       "invalid --web.listen-address \"nohost\" (want [host]:port)"},
      {{"--web.listen-address=:99999"}, "invalid port in --web.listen-address \":99999\""},
      {{"--web.listen-address=:"}, "invalid port in --web.listen-address \":\""},
      {{"--web.listen-address=[::]:9879"},
       "IPv6 listen addresses are not supported: \"[::]:9879\""},
      {{"--web.listen-address=300.1.1.1:80"},
       "invalid host in --web.listen-address \"300.1.1.1:80\" (want an IPv4 address)"},
      {{"--web.listen-address=a.b.c.d:80"},
       "invalid host in --web.listen-address \"a.b.c.d:80\" (want an IPv4 address)"},
      {{"--web.telemetry-path=metrics"},
       "invalid --web.telemetry-path \"metrics\" (must start with / and not be / or under /-/)"},
      {{"--web.telemetry-path=/"},
       "invalid --web.telemetry-path \"/\" (must start with / and not be / or under /-/)"},
      {{"--web.telemetry-path=/-/x"},
       "invalid --web.telemetry-path \"/-/x\" (must start with / and not be / or under /-/)"},
      {{"--web.telemetry-path="},
       "invalid --web.telemetry-path \"\" (must start with / and not be / or under /-/)"},
      {{"--web.max-connections=0"}, "invalid --web.max-connections \"0\" (want 1..16384)"},
      {{"--web.max-connections=16385"}, "invalid --web.max-connections \"16385\" (want 1..16384)"},
      {{"--web.max-connections=x"}, "invalid --web.max-connections \"x\" (want 1..16384)"},
      {{"--web.max-pending-connections=3"},
       "invalid --web.max-pending-connections \"3\" (want 4..1048576)"},
      {{"--web.max-pending-connections=1048577"},
       "invalid --web.max-pending-connections \"1048577\" (want 4..1048576)"},
      {{"--web.read-timeout=10ms"}, "invalid --web.read-timeout \"10ms\" (100ms..10m)"},
      {{"--web.read-timeout=11m"}, "invalid --web.read-timeout \"11m\" (100ms..10m)"},
      {{"--web.read-timeout=abc"}, "invalid --web.read-timeout \"abc\" (100ms..10m)"},
      {{"--path.sysfs"}, "flag --path.sysfs needs a value"},
      {{"--path.sysfs="}, "--path.sysfs must not be empty"},
      {{"positional"},
       "unknown command \"positional\" (commands: show-gids, show-counters, ibdev2netdev, doctor, "
       "status; "
       "flags start with --; see --help)"},
      {{"-h"}, "unexpected argument \"-h\" (flags start with --; see --help)"},
      {{"-v"}, "unexpected argument \"-v\" (flags start with --; see --help)"},
      {{"--version=maybe"}, "invalid value \"maybe\" for --version (want true or false)"},
      {{"--help=maybe"}, "invalid value \"maybe\" for --help (want true or false)"},
      {{"--h=maybe"}, "invalid value \"maybe\" for --h (want true or false)"},
      {{"--nccl.ib-tc=256"}, "invalid --nccl.ib-tc \"256\" (want 0..255)"},
      {{"--nccl.ib-tc=-1"}, "invalid --nccl.ib-tc \"-1\" (want 0..255)"},
      {{"--nccl.ib-tc="}, "invalid --nccl.ib-tc \"\" (want 0..255)"},
      {{"--roce.min-mtu=big"}, "invalid --roce.min-mtu \"big\" (want 0..65535)"},
      {{"--roce.min-mtu=65536"}, "invalid --roce.min-mtu \"65536\" (want 0..65535)"},
      {{"--collector.ethtool.bogus=1"}, "unknown flag --collector.ethtool.bogus (see --help)"},
      {{"--collector.hw_counters.source=mad"},
       "invalid --collector.hw_counters.source \"mad\" (auto, netlink or sysfs)"},
      {{"--json"}, "unknown flag --json (see --help)"},
      {{"show-gid"},
       "unknown command \"show-gid\" (commands: show-gids, show-counters, ibdev2netdev, doctor, "
       "status; "
       "flags start with --; see --help)"},
  };
  for (const auto& c : cases) {
    Options options;
    std::string error;
    EXPECT_FALSE(ParseFlags(c.args, &options, &error)) << c.args[0];
    EXPECT_EQ(error, c.error) << c.args[0];
  }
}

TEST(FlagErrors, SubcommandMessagesAreExact) {
  const std::vector<ErrorCase> cases = {
      {{"show-gids", "--bogus"},
       "show-gids: unknown flag --bogus (see rdma_exporter show-gids --help)"},
      {{"show-gids", "-x"},
       "show-gids: unexpected argument \"-x\" (see rdma_exporter show-gids --help)"},
      {{"show-gids", "--help=1"},
       "show-gids: unknown flag --help (see rdma_exporter show-gids --help)"},
      {{"show-gids", "--verbose"},
       "show-gids: unknown flag --verbose (see rdma_exporter show-gids --help)"},
      {{"show-gids", "--json=maybe"}, "show-gids: invalid value \"maybe\" for --json"},
      {{"show-gids", "--json="}, "show-gids: invalid value \"\" for --json"},
      {{"show-gids", "--path.sysfs="}, "show-gids: --path.sysfs must not be empty"},
      {{"show-gids", "--path.sysfs"}, "show-gids: flag --path.sysfs needs a value"},
      {{"show-gids", "--device-include=("},
       "show-gids: invalid regular expression for --device-include: \"(\""},
      {{"show-gids", "--device-exclude=["},
       "show-gids: invalid regular expression for --device-exclude: \"[\""},
      {{"show-gids", "--interval=1"},
       "show-gids: unknown flag --interval (see rdma_exporter show-gids --help)"},
      {{"show-counters", "--interval=0"},
       "show-counters: invalid --interval \"0\" (seconds, e.g. 1, 0.5, 500ms)"},
      {{"show-counters", "--interval=abc"},
       "show-counters: invalid --interval \"abc\" (seconds, e.g. 1, 0.5, 500ms)"},
      {{"show-counters", "--interval=3601"},
       "show-counters: invalid --interval \"3601\" (seconds, e.g. 1, 0.5, 500ms)"},
      {{"show-counters", "--interval=-1"},
       "show-counters: invalid --interval \"-1\" (seconds, e.g. 1, 0.5, 500ms)"},
      {{"show-counters", "--interval"}, "show-counters: flag --interval needs a value"},
      {{"show-counters", "--count=2"}, "show-counters: --count needs --interval"},
      {{"show-counters", "--count=x"},
       "show-counters: invalid --count \"x\" (a number of tables, 0 = no end)"},
      {{"show-counters", "--interval=1", "--count=-1"},
       "show-counters: invalid --count \"-1\" (a number of tables, 0 = no end)"},
      {{"show-counters", "--interval=1", "--count="},
       "show-counters: invalid --count \"\" (a number of tables, 0 = no end)"},
      {{"ibdev2netdev", "mlx5_0"},
       "ibdev2netdev: unexpected argument \"mlx5_0\" (see rdma_exporter ibdev2netdev --help)"},
      {{"ibdev2netdev", "--interval=1"},
       "ibdev2netdev: unknown flag --interval (see rdma_exporter ibdev2netdev --help)"},
      {{"ibdev2netdev", "--verbose=x"}, "ibdev2netdev: invalid value \"x\" for --verbose"},
      {{"ibdev2netdev", "-v=true"},
       "ibdev2netdev: unexpected argument \"-v=true\" (see rdma_exporter ibdev2netdev --help)"},
      {{"ibdev2netdev", "--v"},
       "ibdev2netdev: unknown flag --v (see rdma_exporter ibdev2netdev --help)"},
      {{"doctor", "mlx5_0"},
       "doctor: unexpected argument \"mlx5_0\" (see rdma_exporter doctor --help)"},
      {{"doctor", "-v"}, "doctor: unexpected argument \"-v\" (see rdma_exporter doctor --help)"},
      {{"doctor", "--nccl.ib-tc=300"}, "doctor: invalid --nccl.ib-tc \"300\" (want 0..255)"},
      {{"doctor", "--nccl.ib-tc=x"}, "doctor: invalid --nccl.ib-tc \"x\" (want 0..255)"},
      {{"doctor", "--roce.min-mtu=70000"},
       "doctor: invalid --roce.min-mtu \"70000\" (want 0..65535)"},
      {{"doctor", "--sample=-1"}, "doctor: invalid --sample \"-1\" (seconds, e.g. 1, 0.5, 500ms)"},
      {{"doctor", "--sample=3601"},
       "doctor: invalid --sample \"3601\" (seconds, e.g. 1, 0.5, 500ms)"},
      {{"doctor", "--sample=x"}, "doctor: invalid --sample \"x\" (seconds, e.g. 1, 0.5, 500ms)"},
      {{"doctor", "--json=maybe"}, "doctor: invalid value \"maybe\" for --json"},
      {{"doctor", "--path.dev="}, "doctor: --path.dev must not be empty"},
      {{"doctor", "--path.dev"}, "doctor: flag --path.dev needs a value"},
      {{"doctor", "--path.fixtures"}, "doctor: flag --path.fixtures needs a value"},
      {{"doctor", "--bogus=1"}, "doctor: unknown flag --bogus (see rdma_exporter doctor --help)"},
  };
  for (const auto& c : cases) {
    CliOptions options;
    std::string error;
    EXPECT_FALSE(ParseCliArgs(c.args, &options, &error)) << c.args[1];
    EXPECT_EQ(error, c.error) << c.args[1];
  }
}

// The exporter says why a regular expression is wrong (std::regex's words, which depend on the
// library), the subcommands quote it.
TEST(FlagErrors, RegexMessagesPerAudience) {
  Options options;
  std::string error;
  for (std::string flag :
       {"device-include", "device-exclude", "collector.ethtool.metrics-include"}) {
    EXPECT_FALSE(ParseFlags({"--" + flag + "=mlx5_("}, &options, &error));
    std::string prefix = "invalid regular expression for --" + flag + ": ";
    EXPECT_EQ(error.rfind(prefix, 0), 0u) << error;
    EXPECT_EQ(error.substr(prefix.size()), RegexError("mlx5_(")) << error;
  }
  EXPECT_FALSE(RegexError("mlx5_(").empty());
  EXPECT_EQ(RegexError("mlx5_[0-3]"), "");
}

Options ParsedOrFail(const std::vector<std::string>& args) {
  Options options;
  std::string error;
  EXPECT_TRUE(ParseFlags(args, &options, &error)) << args[0] << ": " << error;
  return options;
}

// Every value flag of the exporter as --name=value and as --name value, with the field it sets.
TEST(FlagSpellings, EqualsAndSeparateValueSetTheSameField) {
  struct Case {
    std::string flag, value;
    std::function<std::string(const Options&)> field;
  };
  const std::vector<Case> cases = {
      {"web.listen-address", "127.0.0.1:99", [](auto& o) { return o.listen_address; }},
      {"web.telemetry-path", "/m", [](auto& o) { return o.telemetry_path; }},
      {"web.config.file", "/etc/w.yml", [](auto& o) { return o.web_config_file; }},
      {"web.max-connections", "7", [](auto& o) { return std::to_string(o.web_max_connections); }},
      {"web.max-pending-connections", "64",
       [](auto& o) { return std::to_string(o.web_max_pending_connections); }},
      {"web.read-timeout", "2s",
       [](auto& o) { return std::to_string(o.web_read_timeout.count()); }},
      {"path.sysfs", "/s", [](auto& o) { return o.sysfs_root; }},
      {"path.fixtures", "/f", [](auto& o) { return o.fixtures_dir; }},
      {"poll-interval", "1m", [](auto& o) { return std::to_string(o.poll_interval.count()); }},
      {"poll-interval.slow", "2m",
       [](auto& o) { return std::to_string(o.slow_poll_interval.count()); }},
      {"device-include", "mlx5_.*", [](auto& o) { return o.device_include; }},
      {"device-exclude", "rxe.*", [](auto& o) { return o.device_exclude; }},
      {"collector.hw_counters.source", "sysfs",
       [](auto& o) {
         return std::to_string(static_cast<int>(o.collector_options.hw_counters_source));
       }},
      {"collector.ethtool.metrics-include", "rx_.*",
       [](auto& o) {
         return std::to_string(o.collector_options.ethtool_metrics_include.has_value());
       }},
      {"nccl.ib-tc", "106",
       [](auto& o) { return std::to_string(o.collector_options.nccl_ib_tc.value_or(-1)); }},
      {"roce.min-mtu", "9000",
       [](auto& o) { return std::to_string(o.collector_options.roce_min_mtu); }},
      {"log.level", "warn", [](auto& o) { return o.log_level; }},
      {"log.format", "json",
       [](auto& o) { return std::to_string(static_cast<int>(o.log_format)); }},
  };
  for (const auto& c : cases) {
    std::string joined = c.field(ParsedOrFail({"--" + c.flag + "=" + c.value}));
    EXPECT_EQ(joined, c.field(ParsedOrFail({"--" + c.flag, c.value}))) << c.flag;
    EXPECT_NE(joined, c.field(Options{})) << c.flag << " left its default";
  }
}

TEST(FlagSpellings, BooleansAndCollectorSwitches) {
  EXPECT_TRUE(ParsedOrFail({"--version"}).show_version);
  EXPECT_TRUE(ParsedOrFail({"--version=true"}).show_version);
  EXPECT_FALSE(ParsedOrFail({"--version", "--version=false"}).show_version);
  EXPECT_TRUE(ParsedOrFail({"--h"}).show_help);
  EXPECT_TRUE(ParsedOrFail({"--help=true"}).show_help);
  EXPECT_TRUE(ParsedOrFail({"--help-markdown"}).show_help_markdown);
  EXPECT_FALSE(ParsedOrFail({"--collector.gid=false"}).collector_overrides.at("gid"));
  EXPECT_TRUE(ParsedOrFail({"--no-collector.gid=false"}).collector_overrides.at("gid"));
  EXPECT_FALSE(ParsedOrFail({"--no-collector.gid=true"}).collector_overrides.at("gid"));
  // A boolean never takes the next argument as its value.
  Options options;
  std::string error;
  EXPECT_FALSE(ParseFlags({"--version", "true"}, &options, &error));

  CliOptions cli;
  ASSERT_TRUE(ParseCliArgs({"ibdev2netdev", "-v", "--json"}, &cli, &error)) << error;
  EXPECT_TRUE(cli.verbose);
  EXPECT_TRUE(cli.json);
  cli = CliOptions{};
  ASSERT_TRUE(ParseCliArgs({"ibdev2netdev", "--verbose=false", "--json=true"}, &cli, &error));
  EXPECT_FALSE(cli.verbose);
  EXPECT_TRUE(cli.json);
  cli = CliOptions{};
  ASSERT_TRUE(
      ParseCliArgs({"show-counters", "--interval", "0.5", "--count", "0", "mlx5_0"}, &cli, &error))
      << error;
  EXPECT_EQ(cli.interval_seconds, 0.5);
  EXPECT_EQ(cli.count, 0u);
  EXPECT_EQ(cli.devices, std::vector<std::string>{"mlx5_0"});
}

// A shared flag is one definition: the same value sets the same NodeOptions field in the
// exporter and in a subcommand.
TEST(SharedFlags, SetTheSameNodeOptionsInBothTables) {
  const std::vector<std::string> flags = {"--path.sysfs=/s",      "--path.fixtures=/f",
                                          "--device-include=a.*", "--device-exclude=b",
                                          "--nccl.ib-tc=3",       "--roce.min-mtu=1500"};
  Options exporter;
  CliOptions doctor;
  std::string error;
  ASSERT_TRUE(ParseFlags(flags, &exporter, &error)) << error;
  std::vector<std::string> cli_args = {"doctor"};
  cli_args.insert(cli_args.end(), flags.begin(), flags.end());
  ASSERT_TRUE(ParseCliArgs(cli_args, &doctor, &error)) << error;
  for (const NodeOptions* o :
       {static_cast<const NodeOptions*>(&exporter), static_cast<const NodeOptions*>(&doctor)}) {
    EXPECT_EQ(o->sysfs_root, "/s");
    EXPECT_EQ(o->fixtures_dir, "/f");
    EXPECT_EQ(o->device_include, "a.*");
    EXPECT_EQ(o->device_exclude, "b");
    EXPECT_EQ(o->collector_options.nccl_ib_tc, 3);
    EXPECT_EQ(o->collector_options.roce_min_mtu, 1500u);
  }
}

TEST(FlagUsage, RowsAlignHelpAndIndentContinuations) {
  EXPECT_EQ(UsageRow("--a=1", "Help.", 10), "  --a=1   Help.\n");
  // At least two spaces; a flag longer than the column puts its help on the next line.
  EXPECT_EQ(UsageRow("--abcdef", "Help.", 10), "  --abcdef  Help.\n");
  EXPECT_EQ(UsageRow("--abcdefghi", "One\nTwo.", 10),
            "  --abcdefghi\n          One\n          Two.\n");
}

TEST(FlagUsage, HiddenFlagsAreParsedButNotShown) {
  std::string usage = UsageText();
  EXPECT_EQ(usage.find("--help-markdown"), std::string::npos);
  EXPECT_EQ(usage.find("--h "), std::string::npos);
  EXPECT_EQ(usage.find("--h="), std::string::npos);
  std::string markdown = FlagsMarkdown();
  EXPECT_EQ(markdown.find("| `--help-markdown"), std::string::npos);
  EXPECT_EQ(markdown.find("| `--h`"), std::string::npos);
  EXPECT_NE(markdown.find("| `--web.listen-address=\":9879\"` |"), std::string::npos);
  EXPECT_NE(markdown.find("| `-v, --verbose` | ibdev2netdev |"), std::string::npos);
  EXPECT_EQ(MarkdownCell("a|b\nc"), "a\\|b c");
}

// docs/flags.md is generated (rdma_exporter --help-markdown); editing a flag's spec without
// regenerating it fails here.
TEST(FlagsDoc, MatchesWhatTheBinaryGenerates) {
  const std::string path = std::string(RDMA_TEST_FIXTURES) + "/../../docs/flags.md";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), FlagsMarkdown())
      << "docs/flags.md is stale: build/exporter/rdma_exporter --help-markdown > docs/flags.md";
}

}  // namespace
}  // namespace rdma_exporter
