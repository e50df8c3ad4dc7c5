// The cost profile: the shipped profiles load with a source for every number; each kind of bad
// input is reported as file:line:column at the place that is wrong.
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "sim/cost/profile.h"
#include "sim/cost/profile.pb.h"

namespace fs = std::filesystem;
using namespace gmp::cost;

namespace {

const std::string kDir = GMP_COST_PROFILE_DIR;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "gmp_cost_test.XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    const std::string p = (path / name).string();
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
};

// "line:column" (1-based) of the first `needle` at or after the first `anchor`.
std::string pos_of(const std::string& text, const std::string& needle, const std::string& anchor = "") {
  const size_t from = anchor.empty() ? 0 : text.find(anchor);
  REQUIRE(from != std::string::npos);
  const size_t at = text.find(needle, from);
  REQUIRE(at != std::string::npos);
  const size_t line_start = text.rfind('\n', at) == std::string::npos ? 0 : text.rfind('\n', at) + 1;
  const size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
  return std::to_string(line) + ":" + std::to_string(at - line_start + 1);
}

// Replaces the first `from` at or after `anchor` by `to`.
std::string edit(std::string text, const std::string& anchor, const std::string& from, const std::string& to) {
  const size_t a = text.find(anchor);
  REQUIRE(a != std::string::npos);
  const size_t at = text.find(from, a);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

// Removes the block "  <name> {\n ... \n  }\n" of a parameter.
std::string remove_param(std::string text, const std::string& name) {
  const size_t at = text.find("  " + name + " {\n");
  REQUIRE(at != std::string::npos);
  const size_t end = text.find("\n  }\n", at);
  REQUIRE(end != std::string::npos);
  return text.erase(at, end + 5 - at);
}

// The ProfileError message of loading `text` from a file.
std::string error_of(const TempDir& dir, const std::string& text) {
  const std::string path = dir.write("bad.textproto", text);
  try {
    load_profile(path);
  } catch (const ProfileError& err) {
    return err.what();
  }
  FAIL("no error for a bad profile");
  return "";
}

void check_profile(const Profile& p) {
  CHECK_FALSE(p.description.empty());
  CHECK_FALSE(p.machine.name.empty());
  CHECK(p.machine.cores() > 0);
  for (const CoreGroup& g : p.machine.core_groups) {
    CHECK(g.speed > 0);
    CHECK_FALSE(g.source.empty());
  }
  CHECK(p.machine.os_time_slice.value > 0);
  CHECK_FALSE(p.machine.os_time_slice.source.empty());
  CHECK(p.machine.speed_ns_per_iteration.value > 0);
  CHECK_FALSE(p.machine.speed_ns_per_iteration.source.empty());
  for (size_t i = 0; i < kNumParams; ++i) {
    const Param param = static_cast<Param>(i);
    INFO(param_name(param));
    CHECK(std::isfinite(p[param]));
    CHECK(p[param] >= 0);
    CHECK(p.sourced(param).value == p[param]);
    CHECK(p.sourced(param).unit == "ns");
    CHECK(p.sourced(param).source.size() > 10);
  }
}

}  // namespace

TEST_CASE("Param names are the fields of the Costs message, in order") {
  const auto* costs = gmp::cost::pb::Costs::descriptor();
  // The removed placement costs stay in the schema only so that the loader can name what replaced
  // them (issue 23); they are no parameters.
  std::vector<std::string> fields;
  for (int i = 0; i < costs->field_count(); ++i) {
    const std::string& name = costs->field(i)->name();
    if (name != "os_wake_in_place" && name != "os_balance_delay") fields.push_back(name);
  }
  REQUIRE(fields.size() == kNumParams);
  for (size_t i = 0; i < kNumParams; ++i) {
    const Param p = static_cast<Param>(i);
    CHECK(fields[i] == param_name(p));
    CHECK(param_by_name(param_name(p)) == p);
  }
  CHECK_FALSE(param_by_name("gc_assist").has_value());
}

TEST_CASE("the shipped profiles load and every number has a source") {
  for (const std::string name : {"default", "m1pro", "epyc-vm"}) {
    INFO(name);
    const Profile p = load_profile(kDir + "/" + name + ".textproto");
    check_profile(p);
    CHECK(p.origin == kDir + "/" + name + ".textproto");
  }
  const Profile m1 = load_profile(kDir + "/m1pro.textproto");
  REQUIRE(m1.machine.core_groups.size() == 2);
  CHECK(m1.machine.cores() == 10);
  CHECK(m1.machine.core_groups[1].kind == "efficiency");
  CHECK(m1.machine.speed_ns_per_iteration.value == Approx(24841.0 / 20000).epsilon(0.001));
}

// An M1 Pro's cores share caches in clusters: two of 4 performance cores, one of 2 efficiency
// cores; the profile text written back keeps them.
TEST_CASE("m1pro describes its clusters and the profile writer keeps them", "[engine][coherence]") {
  for (const std::string name : {"m1pro", "m1pro-fitted"}) {
    INFO(name);
    const Profile m1 = *builtin_profile(name);
    REQUIRE(m1.machine.core_groups.size() == 2);
    CHECK(m1.machine.core_groups[0].cluster_size == 4);
    CHECK(m1.machine.core_groups[1].cluster_size == 2);
    CHECK(m1[Param::CachelineTransferCluster] < m1[Param::CachelineTransfer]);
    const Profile again = parse_profile(profile_text(m1, ""), "again");
    CHECK(again.machine.core_groups[0].cluster_size == 4);
    CHECK(again.machine.core_groups[1].cluster_size == 2);
    CHECK(again.ns == m1.ns);
  }
  const Profile plain = parse_profile(profile_text(default_profile(), ""), "again");
  CHECK(plain.machine.core_groups[0].cluster_size == 0);
  CHECK(profile_text(default_profile(), "").find("cluster_size:") == std::string::npos);
}

TEST_CASE("the default profile is embedded in the library") {
  const Profile& embedded = default_profile();
  check_profile(embedded);
  CHECK(embedded.origin == "builtin:default");
  const Profile file = load_profile(kDir + "/default.textproto");
  CHECK(embedded.ns == file.ns);
  CHECK(embedded.machine.cores() == file.machine.cores());
  CHECK(&default_profile() == &embedded);  // parsed once

  const std::vector<std::string> names = builtin_profile_names();
  CHECK(std::set<std::string>(names.begin(), names.end()) == std::set<std::string>{"default", "epyc-vm", "epyc-vm-fitted", "m1pro", "m1pro-fitted"});
  REQUIRE(builtin_profile("m1pro").has_value());
  CHECK(builtin_profile("m1pro")->ns == load_profile(kDir + "/m1pro.textproto").ns);
  CHECK_FALSE(builtin_profile("nosuch").has_value());
}

TEST_CASE("bad profiles are reported at file:line:column") {
  TempDir dir;
  const std::string good = slurp(kDir + "/default.textproto");
  const std::string path = (dir.path / "bad.textproto").string();

  SECTION("unknown field") {
    const std::string text = edit(good, "costs {", "costs {\n", "costs {\n  atomic_lod { value: 1 }\n");
    const std::string err = error_of(dir, text);
    CHECK_THAT(err, Catch::Matchers::StartsWith(path + ":" + pos_of(text, "atomic_lod") + ": "));
    CHECK_THAT(err, Catch::Matchers::Contains("unknown field \"atomic_lod\" (fields of Costs: atomic_load, "));
  }
  SECTION("unknown field inside a parameter") {
    const std::string text = edit(good, "  nanotime {", "unit:", "units:");
    const std::string err = error_of(dir, text);
    CHECK_THAT(err, Catch::Matchers::StartsWith(path + ":" + pos_of(text, "units:") + ": "));
    CHECK_THAT(err, Catch::Matchers::Contains("unknown field \"units\" (fields of Sourced: value, unit, source)"));
  }
  SECTION("missing parameter, named, at its message's location") {
    const std::string text = remove_param(good, "nanotime");
    const std::string err = error_of(dir, text);
    CHECK(err == path + ":" + pos_of(text, "costs {") + ": costs: missing parameter nanotime");
  }
  SECTION("every missing parameter is named") {
    const std::string text = remove_param(remove_param(good, "gogo"), "select_op");
    const std::string err = error_of(dir, text);
    const std::string at = path + ":" + pos_of(text, "costs {") + ": ";
    CHECK(err == at + "costs: missing parameter gogo\n" + at + "costs: missing parameter select_op");
  }
  SECTION("missing value") {
    const std::string text = edit(good, "  goexit {", "value: 60", "");
    CHECK(error_of(dir, text) == path + ":" + pos_of(text, "goexit {") + ": costs.goexit: missing value");
  }
  SECTION("negative value") {
    const std::string text = edit(good, "  futex_wake_latency {", "value: 6000", "value: -6000");
    CHECK(error_of(dir, text) == path + ":" + pos_of(text, "value: -6000") +
                                     ": costs.futex_wake_latency: value -6000 is negative");
  }
  SECTION("non-finite value") {
    const std::string text = edit(good, "  chan_op {", "value: 20", "value: inf");
    CHECK(error_of(dir, text) == path + ":" + pos_of(text, "value: inf") + ": costs.chan_op: value inf is not finite");
  }
  SECTION("wrong unit") {
    const std::string text = edit(good, "  thread_create {", "unit: \"ns\"", "unit: \"us\"");
    CHECK(error_of(dir, text) == path + ":" + pos_of(text, "unit: \"us\"") +
                                     ": costs.thread_create: unit \"us\", expected \"ns\"");
  }
  SECTION("empty source") {
    // Replace the whole source field of mcall (a string over two lines) by a blank one.
    std::string text = good;
    const size_t at = text.find("source:", text.find("  mcall {"));
    text.replace(at, text.find("\n  }\n", at) - at, "source: \"  \"");
    CHECK(error_of(dir, text) == path + ":" + pos_of(text, "source: \"  \"") + ": costs.mcall: source is empty");
  }
  SECTION("absent source") {
    std::string text = good;
    const size_t at = text.find("source:", text.find("  mcall {"));
    text.erase(at, text.find("\n  }\n", at) - at);
    CHECK(error_of(dir, text) == path + ":" + pos_of(text, "mcall {") + ": costs.mcall: source is empty");
  }
  SECTION("syntax error") {
    const std::string text = edit(good, "  gogo {", "value: 5", "value 5 5");
    const std::string err = error_of(dir, text);
    CHECK_THAT(err, Catch::Matchers::StartsWith(path + ":" + pos_of(text, "5 5") + ": "));
    CHECK_THAT(err, Catch::Matchers::Contains("Expected \":\""));
  }
  SECTION("syntax error: unterminated message") {
    const std::string text = good.substr(0, good.rfind('}'));
    const std::string err = error_of(dir, text);
    const size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
    CHECK_THAT(err, Catch::Matchers::StartsWith(path + ":" + std::to_string(lines + 1) + ":1: "));
  }
  SECTION("zero cores") {
    const std::string text = edit(good, "core_groups {", "count: 16", "count: 0");
    CHECK(error_of(dir, text) == path + ":" + pos_of(text, "count: 0") + ": machine.core_groups[0]: count must be > 0");
  }
  SECTION("no machine") {
    const size_t at = good.find("machine {");
    const std::string text = good.substr(0, at) + good.substr(good.find("costs {"));
    CHECK(error_of(dir, text) == path + ":1:1: missing machine");
  }
  SECTION("empty machine") {
    const size_t at = good.find("machine {");
    const std::string text = good.substr(0, at) + "machine {}\n" + good.substr(good.find("costs {"));
    const std::string m = path + ":" + pos_of(text, "machine {}") + ": ";
    CHECK(error_of(dir, text) == m + "machine: name is empty\n" + m + "machine: no core_groups\n" + m +
                                     "machine: missing parameter os_time_slice\n" + m +
                                     "machine: missing parameter speed_ns_per_iteration");
  }
  SECTION("problems of every kind are reported together") {
    std::string text = edit(good, "  gogo {", "value: 5", "value: -5");
    text = edit(text, "  mcall {", "unit: \"ns\"", "unit: \"s\"");
    const std::string err = error_of(dir, text);
    CHECK(std::count(err.begin(), err.end(), '\n') == 1);
    CHECK_THAT(err, Catch::Matchers::Contains("costs.gogo: value -5 is negative"));
    CHECK_THAT(err, Catch::Matchers::Contains("costs.mcall: unit \"s\", expected \"ns\""));
  }
  SECTION("tabs advance the column to the next multiple of 8") {
    const std::string text = edit(good, "costs {", "costs {\n", "costs {\n\tatomic_lod { value: 1 }\n");
    const std::string line = pos_of(text, "atomic_lod");
    CHECK_THAT(error_of(dir, text), Catch::Matchers::StartsWith(path + ":" + line.substr(0, line.find(':')) + ":9: "));
  }
  // Values past these ranges overflowed the engine's clocks or made it silently wrong.
  SECTION("a cost above 1 s") {
    for (const char* v : {"1e19", "4e18", "1000000001"}) {
      const std::string text = edit(good, "  atomic_load {", "value: 1.0", std::string("value: ") + v);
      CHECK_THAT(error_of(dir, text), Catch::Matchers::StartsWith(path + ":" + pos_of(text, "value: " + std::string(v)) +
                                                                  ": costs.atomic_load: value ") &&
                                          Catch::Matchers::EndsWith(" is out of range: at most 1e+09 ns (1 s)"));
    }
    CHECK_NOTHROW(parse_profile(edit(good, "  atomic_load {", "value: 1.0", "value: 1e9"), "ok"));
  }
  SECTION("a time slice under 1 us or over 10 s") {
    for (const char* v : {"1e-300", "999", "1.1e10"}) {
      const std::string text = edit(good, "os_time_slice {", "value: 3000000", std::string("value: ") + v);
      CHECK_THAT(error_of(dir, text),
                 Catch::Matchers::StartsWith(path + ":" + pos_of(text, "value: " + std::string(v)) +
                                             ": machine.os_time_slice: value ") &&
                     Catch::Matchers::EndsWith(" is out of range: between 1000 ns (1 us) and 1e+10 ns (10 s)"));
    }
  }
  SECTION("speed_ns_per_iteration outside [0.001, 1000]") {
    for (const char* v : {"1e300", "1e-4"}) {
      const std::string text = edit(good, "speed_ns_per_iteration {", "value: 1.333", std::string("value: ") + v);
      CHECK_THAT(error_of(dir, text), Catch::Matchers::EndsWith("out of range: between 0.001 and 1000 ns/iteration"));
    }
  }
  SECTION("a core speed outside [0.001, 1000]") {
    for (const char* v : {"1e-300", "1001"}) {
      const std::string text = edit(good, "core_groups {", "speed: 1.0", std::string("speed: ") + v);
      CHECK(error_of(dir, text) == path + ":" + pos_of(text, "speed: " + std::string(v)) + ": machine.core_groups[0]: speed " +
                                       (v[1] == 'e' ? "1e-300" : "1001") + " is out of range: between 0.001 and 1000");
    }
  }
  SECTION("a cluster larger than its core group") {
    const std::string text = edit(good, "core_groups {", "count: 16", "count: 16\n    cluster_size: 17");
    CHECK(error_of(dir, text) == path + ":" + pos_of(text, "cluster_size: 17") +
                                     ": machine.core_groups[0]: cluster_size 17 is larger than the group's count 16");
    const std::string whole_text = edit(good, "core_groups {", "count: 16", "count: 16\n    cluster_size: 16");
    const Profile whole = parse_profile(whole_text, "ok");
    CHECK(whole.machine.core_groups[0].cluster_size == 16);
  }
  SECTION("more than 4096 cores") {
    for (const char* v : {"2147483648", "4294967295", "100000000", "4097"}) {
      const std::string text = edit(good, "core_groups {", "count: 16", std::string("count: ") + v);
      CHECK(error_of(dir, text) == path + ":" + pos_of(text, "count: " + std::string(v)) + ": machine.core_groups[0]: count " +
                                       v + " is too large: a machine has at most 4096 cores");
    }
    CHECK_NOTHROW(parse_profile(edit(good, "core_groups {", "count: 16", "count: 4096"), "ok"));
    // Two groups within the bound each, beyond it together.
    const size_t at = good.find("  core_groups {");
    const size_t end = good.find("\n  }\n", at) + 5;
    std::string group = good.substr(at, end - at);
    group = edit(group, "core_groups {", "count: 16", "count: 4000");
    const std::string text = good.substr(0, at) + group + group + good.substr(end);
    CHECK(error_of(dir, text) == path + ":" + pos_of(text, "core_groups {") + ": machine: 8000 cores in all: a machine has at most 4096");
  }
  SECTION("missing file") {
    CHECK_THROWS_WITH(load_profile(path + ".absent"), path + ".absent: cannot open: No such file or directory");
  }
}

TEST_CASE("an embedded profile reports errors under its builtin name") {
  CHECK_THROWS_WITH(parse_profile("costs { nanotime { value: -1 unit: \"ns\" source: \"x\" } }", "builtin:x"),
                    Catch::Matchers::StartsWith("builtin:x:1:1: missing machine\n") &&
                        Catch::Matchers::Contains("builtin:x:1:20: costs.nanotime: value -1 is negative") &&
                        Catch::Matchers::Contains("builtin:x:1:1: costs: missing parameter atomic_load"));
}


// A core group's speed curve and the machine's memory slowdown: optional, ranged, reported where
// they are wrong, and kept by the profile writer.
TEST_CASE("speed curves and memory_slowdown load, are checked, and round-trip", "[engine][speed]") {
  TempDir dir;
  const std::string good = slurp(kDir + "/default.textproto");
  const std::string path = (dir.path / "bad.textproto").string();
  auto curve = [&](const std::string& entries) {
    return edit(good, "core_groups {", "count: 16", "count: 16\n    cluster_size: 4\n" + entries);
  };
  const std::string point = "    busy_speed { busy: %B factor: %F source: \"s\" }\n";
  auto entry = [&](const std::string& busy, const std::string& factor) {
    std::string e = point;
    e.replace(e.find("%B"), 2, busy);
    e.replace(e.find("%F"), 2, factor);
    return e;
  };

  SECTION("absent: 1.0 at every count, and nothing written") {
    const CoreGroup& g = default_profile().machine.core_groups[0];
    CHECK(g.busy_speed.empty());
    for (uint32_t b : {0u, 1u, 4u, 100u}) CHECK(g.busy_factor(b) == 1.0);
    CHECK_FALSE(default_profile().machine.memory_slowdown.has_value());
    const std::string text = profile_text(default_profile(), "");
    CHECK(text.find("busy_speed") == std::string::npos);
    CHECK(text.find("memory_slowdown") == std::string::npos);
  }
  SECTION("a curve: steps at its entries, the last factor beyond") {
    const Profile p = parse_profile(curve(entry("2", "0.9") + entry("4", "0.8")), "ok");
    const CoreGroup& g = p.machine.core_groups[0];
    CHECK(g.busy_factor(1) == 1.0);
    CHECK(g.busy_factor(2) == 0.9);
    CHECK(g.busy_factor(3) == 0.9);
    CHECK(g.busy_factor(4) == 0.8);
    CHECK(g.busy_factor(9) == 0.8);
    const Profile again = parse_profile(profile_text(p, ""), "again");
    REQUIRE(again.machine.core_groups[0].busy_speed.size() == 2);
    CHECK(again.machine.core_groups[0].busy_speed[1].factor == 0.8);
    CHECK(again.machine.core_groups[0].busy_speed[1].source == "s");
  }
  SECTION("busy counts must increase") {
    const std::string text = curve(entry("2", "0.9") + entry("2", "0.8"));
    CHECK(error_of(dir, text) == path + ":" + pos_of(text, "busy: 2", "factor: 0.9") +
                                     ": machine.core_groups[0].busy_speed[1]: busy 2 does not follow the previous "
                                     "entry's 2: busy counts must increase");
  }
  SECTION("busy counts lie in 1..the cluster's size") {
    for (const char* b : {"0", "5"}) {
      const std::string text = curve(entry(b, "0.9"));
      CHECK(error_of(dir, text) == path + ":" + pos_of(text, std::string("busy: ") + b) +
                                       ": machine.core_groups[0].busy_speed[0]: busy " + b +
                                       " is out of range: between 1 and the cluster's 4 cores");
    }
    // Without cluster_size the cluster is the whole group.
    const std::string whole = edit(good, "core_groups {", "count: 16", "count: 16\n" + entry("16", "0.5"));
    CHECK(parse_profile(whole, "ok").machine.core_groups[0].busy_factor(16) == 0.5);
  }
  SECTION("factors lie in 0.1..1") {
    for (const char* f : {"0.09", "1.01", "nan", "-1"}) {
      const std::string text = curve(entry("2", f));
      CHECK_THAT(error_of(dir, text), Catch::Matchers::StartsWith(path + ":" + pos_of(text, std::string("factor: ") + f) +
                                                                  ": machine.core_groups[0].busy_speed[0]: factor "));
      CHECK_THAT(error_of(dir, text), Catch::Matchers::EndsWith("is out of range: between 0.1 and 1"));
    }
  }
  SECTION("an entry needs a source") {
    const std::string text = curve("    busy_speed { busy: 2 factor: 0.9 }\n");
    CHECK(error_of(dir, text) == path + ":" + pos_of(text, "busy_speed {") +
                                     ": machine.core_groups[0].busy_speed[0]: source is empty");
  }
  SECTION("memory_slowdown: 0 to 1, unit 1/core, written back") {
    const std::string ok = edit(good, "machine {", "core_groups {",
                                "memory_slowdown { value: 0.05 unit: \"1/core\" source: \"m\" }\n  core_groups {");
    const Profile p = parse_profile(ok, "ok");
    REQUIRE(p.machine.memory_slowdown.has_value());
    CHECK(p.machine.memory_slowdown->value == 0.05);
    CHECK(parse_profile(profile_text(p, ""), "again").machine.memory_slowdown->value == 0.05);
    const std::string big = edit(ok, "memory_slowdown", "0.05", "1.5");
    CHECK(error_of(dir, big) == path + ":" + pos_of(big, "value: 1.5") +
                                    ": machine.memory_slowdown: value 1.5 is out of range: between 0 and 1 (a "
                                    "fraction per other busy core)");
    const std::string unit = edit(ok, "memory_slowdown", "1/core", "ns");
    CHECK(error_of(dir, unit) == path + ":" + pos_of(unit, "unit: \"ns\"", "memory_slowdown") +
                                     ": machine.memory_slowdown: unit \"ns\", expected \"1/core\"");
  }
}

TEST_CASE("cfs_bandwidth loads with the kernel's defaults where absent, is checked, and round-trips",
          "[engine][cfs]") {
  TempDir dir;
  const std::string good = slurp(kDir + "/default.textproto");
  const std::string path = (dir.path / "bad.textproto").string();
  const size_t at = good.find("  cfs_bandwidth {\n");
  REQUIRE(at != std::string::npos);
  const std::string without = std::string(good).erase(at, good.find("\n  }\n", at) + 5 - at);

  SECTION("absent: the kernel's defaults, each with a source, and nothing written back") {
    const Profile p = parse_profile(without, "no-cfs");
    const CfsBandwidth& b = p.machine.cfs_bandwidth;
    CHECK_FALSE(b.from_profile);
    CHECK(b.bandwidth_slice.value == 5e6);
    CHECK(b.min_runtime.value == 1e6);
    CHECK(b.slack_period.value == 5e6);
    CHECK(b.min_expiration.value == 2e6);
    for (const Sourced* s : {&b.bandwidth_slice, &b.min_runtime, &b.slack_period, &b.min_expiration}) {
      CHECK(s->source.find("kernel/sched/fair.c") != std::string::npos);
    }
    CHECK(profile_text(p, "").find("cfs_bandwidth") == std::string::npos);
  }
  SECTION("present: read and written back") {
    const Profile p = parse_profile(edit(good, "bandwidth_slice", "5000000", "3000000"), "cfs");
    CHECK(p.machine.cfs_bandwidth.from_profile);
    CHECK(p.machine.cfs_bandwidth.bandwidth_slice.value == 3e6);
    const Profile again = parse_profile(profile_text(p, ""), "again");
    CHECK(again.machine.cfs_bandwidth.bandwidth_slice.value == 3e6);
    CHECK(again.machine.cfs_bandwidth.min_runtime.source == p.machine.cfs_bandwidth.min_runtime.source);
  }
  SECTION("out of range: reported where it is") {
    const std::string text = edit(good, "bandwidth_slice", "5000000", "10");
    CHECK(error_of(dir, text) == path + ":" + pos_of(text, "value: 10 ", "bandwidth_slice") +
                                     ": machine.cfs_bandwidth.bandwidth_slice: value 10 is out of range: between "
                                     "1000 ns (1 us) and 1e+09 ns (1 s)");
  }
}
