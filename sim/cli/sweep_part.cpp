#include "sim/cli/sweep_part.h"

#include <cstring>

#include "sim/cli/result_text.h"

namespace gmp::cli {

namespace {

constexpr std::string_view kMagic = "gmpsim-sweep-part";

// The sweep's lines, in order (V: PartWriter or PartReader; I: the identity, const or not).
template <class V, class I>
void visit_identity(V& v, I& id) {
  v.text("scenario", id.scenario);
  v.text("profile", id.profile);
  v.text("title", id.title);
  v.text("scenario_digest", id.scenario_digest);
  v.text("profile_digest", id.profile_digest);
  v.text("flags", id.flags);
  v.num("dim_gogc", id.dims.gogc);
  v.num("dim_memlimit", id.dims.memlimit);
  v.num("dim_cpu_quota", id.dims.quota);
  v.num("seed", id.seed);
  v.ranged("seeds", id.seeds, 1, kMaxPartSeeds);
  v.list("points", id.points, [](auto& w, auto& p) {
    w.num("procs", p.procs);
    w.num("cores", p.cores);
    w.num("gogc", p.gc.gcPercent);
    w.num("memlimit", p.gc.memoryLimit);
    w.num("cpu_quota", p.cpu_quota);
  });
}

std::string identity_text(const SweepIdentity& id) {
  PartWriter w;
  visit_identity(w, id);
  return w.out();
}

// A line of a message, cut short.
std::string cut(std::string_view s) {
  return s.size() <= 120 ? std::string(s) : std::string(s.substr(0, 120)) + "...";
}

}  // namespace

uint64_t shard_runs(uint64_t total, uint64_t shard, uint64_t shards) {
  return total / shards + (shard - 1 < total % shards ? 1 : 0);
}

std::string file_digest(std::string_view bytes) { return "fnv1a64:" + hex16(fnv1a64(bytes)); }

std::string write_sweep_part(const SweepPart& p) {
  PartWriter w;
  w.num(kMagic, kSweepPartVersion);
  visit_identity(w, p.id);
  w.num("shards", p.shards);
  w.num("shard", p.shard);
  w.num("runs", static_cast<uint64_t>(p.runs.size()));
  for (const auto& [j, r] : p.runs) {
    w.num("run", j);
    write_result(w, r);
  }
  std::string& out = w.out();
  const uint64_t sum = fnv1a64(out);
  out += "end " + hex16(sum) + "\n";
  return std::move(out);
}

SweepPart read_sweep_part(std::string_view text) {
  PartReader rd(text);
  if (text.substr(0, kMagic.size() + 1) != std::string(kMagic) + " ") {
    rd.fail(0, "not a gmpsim sweep part (it does not begin with \"" + std::string(kMagic) + " \")");
  }
  {
    const size_t at = rd.offset();
    const uint64_t version = rd.bounded(kMagic, 0, UINT64_MAX);
    if (version != kSweepPartVersion) {
      rd.fail(at, "format version " + std::to_string(version) + " is not known (this gmpsim reads version " +
                      std::to_string(kSweepPartVersion) + ")");
    }
  }
  SweepPart p;
  const size_t points_at = rd.offset();
  visit_identity(rd, p.id);
  if (p.id.points.empty()) rd.fail(points_at, "the sweep has no points");
  const uint64_t total = static_cast<uint64_t>(p.id.points.size()) * p.id.seeds;
  rd.ranged("shards", p.shards, 1, kMaxShards);
  rd.ranged("shard", p.shard, 1, p.shards);
  const size_t runs_at = rd.offset();
  uint64_t n = 0;
  rd.num("runs", n);
  const uint64_t expected = shard_runs(total, p.shard, p.shards);
  if (n != expected) {
    rd.fail(runs_at, "the part says it holds " + std::to_string(n) + " runs; shard " + std::to_string(p.shard) +
                         " of " + std::to_string(p.shards) + " of a sweep of " + std::to_string(total) +
                         " runs holds " + std::to_string(expected));
  }
  for (uint64_t i = 0; i < n; i++) {
    const size_t at = rd.offset();
    uint64_t j = 0;
    rd.num("run", j);
    const uint64_t want = p.shard - 1 + i * p.shards;
    if (j != want) {
      rd.fail(at, "run " + std::to_string(j) + " where the shard's run " + std::to_string(want) + " belongs");
    }
    p.runs.emplace_back(j, read_result(rd));
  }
  const size_t end_at = rd.offset();
  const PartReader::Line end = rd.next_line("end");
  if (end.key != "end") rd.fail(end.at, "expected \"end\" after the last run");
  const std::string sum = hex16(fnv1a64(text.substr(0, end_at)));
  if (!end.has_value || end.value != sum) {
    rd.fail(end.value_at, "the checksum does not match the bytes before it (" + sum +
                              "): the part was altered or damaged");
  }
  if (!rd.at_end()) rd.fail(rd.offset(), "bytes after the end line");
  return p;
}

std::vector<SweepPoint> merge_sweep_parts(std::vector<NamedPart>& parts) {
  if (parts.empty()) throw MergeError("no parts");
  const NamedPart& first = parts.front();
  const std::string first_id = identity_text(first.part.id);
  const uint64_t shards = first.part.shards;
  for (const NamedPart& np : parts) {
    const std::string id = identity_text(np.part.id);
    if (id != first_id) {
      // The first line that differs names the field.
      size_t from = 0;
      while (true) {
        const size_t a = first_id.find('\n', from), b = id.find('\n', from);
        if (first_id.compare(from, a - from, id, from, b - from) != 0 || a != b) break;
        from = a + 1;
      }
      const std::string_view la = std::string_view(first_id).substr(from, first_id.find('\n', from) - from);
      const std::string_view lb = std::string_view(id).substr(from, id.find('\n', from) - from);
      const std::string key(la.substr(0, la.find(' ')));
      throw MergeError(np.name + " is not a part of the same sweep as " + first.name + ": they differ at '" + key +
                       "' (" + first.name + ": " + cut(la) + "; " + np.name + ": " + cut(lb) + ")");
    }
    if (np.part.shards != shards) {
      throw MergeError(np.name + " is shard " + std::to_string(np.part.shard) + " of " + std::to_string(np.part.shards) +
                       ", " + first.name + " shard " + std::to_string(first.part.shard) + " of " +
                       std::to_string(shards) + ": the parts come from splits into different numbers of shards");
    }
  }
  std::vector<const NamedPart*> by_shard(shards, nullptr);
  for (const NamedPart& np : parts) {
    const NamedPart*& slot = by_shard[np.part.shard - 1];
    if (slot != nullptr) {
      throw MergeError(slot->name + " and " + np.name + " are both shard " + std::to_string(np.part.shard) + " of " +
                       std::to_string(shards));
    }
    slot = &np;
  }
  for (uint64_t s = 0; s < shards; s++) {
    if (by_shard[s] == nullptr) {
      throw MergeError("shard " + std::to_string(s + 1) + " of " + std::to_string(shards) + " is missing (" +
                       std::to_string(parts.size()) + " of " + std::to_string(shards) + " parts given)");
    }
  }
  std::vector<SweepPoint> pts = first.part.id.points;
  const uint64_t seeds = first.part.id.seeds;
  for (SweepPoint& pt : pts) pt.runs.resize(seeds);
  for (NamedPart& np : parts) {
    for (auto& [j, r] : np.part.runs) pts[j / seeds].runs[j % seeds] = std::move(r);
  }
  return pts;
}

}  // namespace gmp::cli
