// A share of a sweep's runs, for sweeps split across machines (gmpsim sweep --shard I/N -o PART,
// then gmpsim sweep --merge PART...): what a part holds, its file format, and putting the parts
// of one sweep back together.
//
// The runs: a sweep's runs are numbered j = point * seeds + k (the point in the order cmd_sweep
// makes them, k the seed's index from 0); shard I of N (I from 1) holds the runs with
// j % N == I - 1, so every shard gets points of every size, not one shard all the largest.
//
// The file (text, in part_text.h's line format):
//   gmpsim-sweep-part 1            the format's version
//   the sweep: scenario, profile, title, the digests of the scenario and profile files, the flags
//     (the command line without --shard, -o, --jobs and --svg), the dimensions given, seed, seeds,
//     then each point (procs, cores, gogc, memlimit, cpu_quota)
//   shards N, shard I, runs R, then each run: "run j" and every field of its result
//   end HASH                       FNV-1a 64 of every byte before this line
// Parts of one sweep have the same lines up to "shard"; the reader checks that a part holds its
// shard's runs, each once and in order, and its checksum, which a truncated or altered file fails.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/cli/part_text.h"
#include "sim/cli/report.h"

namespace gmp::cli {

inline constexpr uint64_t kSweepPartVersion = 1;
// The most shards a sweep is split into (--shard's N), and seeds per point (--seeds').
inline constexpr uint64_t kMaxShards = 1000000;
// The largest part a merge reads, and so the largest a shard writes: a run at 4096 Ps takes about
// 80 KB (a utilisation line per P), so 1 GiB holds some 13,000 of them.
inline constexpr size_t kMaxPartBytes = size_t{1} << 30;
inline constexpr uint64_t kMaxPartSeeds = 10000;

// What makes a sweep the same sweep: everything its output depends on, but for the runs.
struct SweepIdentity {
  std::string scenario;         // its source, as "sweep of ..." prints it
  std::string profile;          // the profile's origin
  std::string title;            // the chart's title
  std::string scenario_digest;  // "fnv1a64:HEX" of the scenario file's bytes
  std::string profile_digest;   // the same of the profile file; "" for a builtin one
  std::string flags;            // the command line less --shard, -o, --jobs, --svg
  SweepDims dims;
  uint64_t seed = 0, seeds = 1;
  // Each point without its runs; cores as given (0: the profile's, filled in from the runs).
  std::vector<SweepPoint> points;
};

struct SweepPart {
  SweepIdentity id;
  uint64_t shards = 1, shard = 1;  // shard I of N, from 1
  std::vector<std::pair<uint64_t, engine::SimResult>> runs;  // (j, result), j increasing
};

// Whether run j is shard's (from 1) of shards.
inline bool in_shard(uint64_t j, uint64_t shard, uint64_t shards) { return j % shards == shard - 1; }
// How many of total runs shard holds.
uint64_t shard_runs(uint64_t total, uint64_t shard, uint64_t shards);

std::string write_sweep_part(const SweepPart& p);
// Throws PartError (byte offset and what is wrong): not a part, an unknown version, a field
// missing or misspelt, runs that are not the shard's, a checksum that does not match.
SweepPart read_sweep_part(std::string_view text);

// The digest SweepIdentity keeps of an input file's bytes.
std::string file_digest(std::string_view bytes);

// Parts named by their files, put together into the sweep's points with every run in place.
// Throws MergeError: parts of different sweeps (naming the first line that differs), a shard
// given twice or missing, a split into different numbers of shards.
class MergeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
struct NamedPart {
  std::string name;
  SweepPart part;
};
std::vector<SweepPoint> merge_sweep_parts(std::vector<NamedPart>& parts);

}  // namespace gmp::cli
