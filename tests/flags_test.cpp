// The flags of run, sweep and check reach the SimConfig of each run: the cgroup in engine units
// (quota CPUs times the period), --procs auto, --godebug. Bad values end the program (exit 2) and
// are tested end to end in cli_test.cpp.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "sim/cli/commands.h"

using namespace gmp;

namespace {

cli::RunOptions parse(std::vector<std::string> args) {
  args.insert(args.begin(), "x.textproto");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  cli::RunOptions o;
  cli::parse_sim_args("run", static_cast<int>(argv.size()), argv.data(), o, [](cli::Args&) { return false; });
  return o;
}

}  // namespace

TEST_CASE("a quota of 2.5 CPUs over the default 100ms period is 250ms per period") {
  const cli::RunOptions o = parse({"--cpu-quota", "2.5"});
  const engine::SimConfig c = cli::sim_config(o, 4, 8, 1);
  CHECK(c.cgroup.quota == 250'000'000);
  CHECK(c.cgroup.period == 100'000'000);
  CHECK(c.cgroup.burst == 0);
  CHECK(c.cgroup.cpuset.empty());
  CHECK(c.procs == 4);
  CHECK_FALSE(c.procs_auto);
  CHECK(c.containermaxprocs == 1);
  CHECK(c.updatemaxprocs == 1);
}

TEST_CASE("the period and burst given in any order and the cpuset reach the cgroup") {
  const cli::RunOptions o =
      parse({"--cpu-burst", "5ms", "--cpu-quota", "0.5", "--cpu-period=20ms", "--cpuset", "8,0-2", "--procs", "auto"});
  const engine::SimConfig c = cli::sim_config(o, o.procs.front(), 0, 1);
  CHECK(c.cgroup.period == 20'000'000);
  CHECK(c.cgroup.quota == 10'000'000);  // 0.5 CPUs of 20 ms
  CHECK(c.cgroup.burst == 5'000'000);
  CHECK(c.cgroup.cpuset == std::vector<int32_t>{0, 1, 2, 8});
  CHECK(c.procs_auto);
  CHECK(c.procs == 1);
}

TEST_CASE("no quota flag leaves the cgroup unlimited and a quota of 0 is no limit") {
  CHECK(cli::sim_config(parse({}), 1, 0, 1).cgroup.quota == -1);
  CHECK_FALSE(cli::sim_config(parse({}), 1, 0, 1).cgroup.limited());
  CHECK(cli::sim_config(parse({"--cpu-quota", "0"}), 1, 0, 1).cgroup.quota == -1);
}

TEST_CASE("godebug sets the keys it names and keeps Go's default for the others") {
  engine::SimConfig c = cli::sim_config(parse({"--godebug", "updatemaxprocs=0"}), 1, 0, 1);
  CHECK(c.updatemaxprocs == 0);
  CHECK(c.containermaxprocs == 1);
  c = cli::sim_config(parse({"--godebug", "containermaxprocs=0,updatemaxprocs=1"}), 1, 0, 1);
  CHECK(c.containermaxprocs == 0);
  CHECK(c.updatemaxprocs == 1);
}

TEST_CASE("a list of quotas and of procs with auto is kept for sweep in the order given") {
  const cli::RunOptions o = parse({"--cpu-quota", "0.5,1,1.5", "--procs", "1,auto,4"});
  CHECK(o.cpu_quota == std::vector<double>{0.5, 1, 1.5});
  CHECK(o.procs == std::vector<int64_t>{1, 0, 4});
  CHECK(cli::quota_ns(o, 1.5) == 150'000'000);
  CHECK(cli::sim_config(o, 4, 0, 1).cgroup.quota == 50'000'000);  // the first, as run takes it
}
