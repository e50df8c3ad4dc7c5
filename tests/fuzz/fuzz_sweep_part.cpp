// Fuzzes the reader of a split sweep's part files (sim/cli/sweep_part.h), which gmpsim sweep
// --merge reads from files other machines wrote: a PartError is the expected answer to bad bytes;
// anything else is a bug. A part it takes must write back byte for byte (the format has one
// spelling of each value), and a whole sweep in one part (shard 1 of 1) must merge and print as
// the merge prints it (tables, bench lines, chart) without a crash or a hang, whatever its values.
//
// A mutated part seldom keeps a matching checksum, which the reader checks last; so each input
// is also read with its end line's checksum made right, to take the mutation to the printing.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "sim/cli/part_text.h"
#include "sim/cli/report.h"
#include "sim/cli/sweep_part.h"

namespace {

void read_and_print(const std::string& text) {
  gmp::cli::SweepPart part;
  try {
    part = gmp::cli::read_sweep_part(text);
  } catch (const gmp::cli::PartError&) {
    return;
  }
  if (gmp::cli::write_sweep_part(part) != text) std::abort();  // read back otherwise than written
  if (part.shards != 1) return;
  std::vector<gmp::cli::NamedPart> parts{{"fuzz.part", std::move(part)}};
  std::vector<gmp::cli::SweepPoint> pts = gmp::cli::merge_sweep_parts(parts);  // one whole part: no MergeError
  const gmp::cli::SweepIdentity& id = parts.front().part.id;
  for (gmp::cli::SweepPoint& p : pts) {
    if (p.cores == 0) p.cores = p.runs.front().cores;  // as the merge's report does
  }
  (void)gmp::cli::format_sweep_tables(pts, id.dims);
  (void)gmp::cli::format_bench_lines(pts, id.dims);
  (void)gmp::cli::sweep_svg(pts, id.title, id.dims);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  read_and_print(text);
  // The same text with the checksum of the bytes before its last line, if that line is "end ...".
  const size_t last = text.size() < 2 ? std::string::npos : text.rfind('\n', text.size() - 2);
  const size_t end = last == std::string::npos ? 0 : last + 1;
  if (text.compare(end, 4, "end ") == 0 && text.back() == '\n') {
    const std::string sealed =
        text.substr(0, end) + "end " + gmp::cli::hex16(gmp::cli::fnv1a64(text.substr(0, end))) + "\n";
    if (sealed != text) read_and_print(sealed);
  }
  return 0;
}
