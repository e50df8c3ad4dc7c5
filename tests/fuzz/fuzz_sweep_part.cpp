// Fuzzes the reader of a split sweep's part files (sim/cli/sweep_part.h), which gmpsim sweep
// --merge reads from files other machines wrote: a PartError is the expected answer to bad bytes;
// anything else is a bug. A part it takes must write back byte for byte (the format has one
// spelling of each value), and a whole sweep in one part (shard 1 of 1) must merge and print as
// the merge prints it (tables, bench lines, chart) without a crash or a hang, whatever its values.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "sim/cli/report.h"
#include "sim/cli/sweep_part.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  gmp::cli::SweepPart part;
  try {
    part = gmp::cli::read_sweep_part(text);
  } catch (const gmp::cli::PartError&) {
    return 0;
  }
  if (gmp::cli::write_sweep_part(part) != text) std::abort();  // read back otherwise than written
  if (part.shards != 1) return 0;
  std::vector<gmp::cli::NamedPart> parts{{"fuzz.part", std::move(part)}};
  std::vector<gmp::cli::SweepPoint> pts = gmp::cli::merge_sweep_parts(parts);  // one whole part: no MergeError
  const gmp::cli::SweepIdentity& id = parts.front().part.id;
  for (gmp::cli::SweepPoint& p : pts) {
    if (p.cores == 0) p.cores = p.runs.front().cores;  // as the merge's report does
  }
  (void)gmp::cli::format_sweep_tables(pts, id.dims);
  (void)gmp::cli::format_bench_lines(pts, id.dims);
  (void)gmp::cli::sweep_svg(pts, id.title, id.dims);
  return 0;
}
