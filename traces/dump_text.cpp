#include "traces/dump_text.h"

#include <string>

#include "traces/trace_reader.h"

namespace gmp::trace {

uint64_t dump_text(const std::string& path, std::FILE* out) {
  TraceReader r(path);
  const Header& h = r.header();
  std::fprintf(out, "# %s, schema %u, %d Ps\n", h.producer().c_str(), h.schema_version(), h.num_ps());
  for (const auto& m : h.metadata()) std::fprintf(out, "# %s=%s\n", m.key().c_str(), m.value().c_str());
  for (const auto& p : h.processes()) {
    std::fprintf(out, "# process %u %s, %d Ps", p.id(), p.name().c_str(), p.num_ps());
    if (p.cpu_quota() > 0) std::fprintf(out, ", quota %g CPUs per %lld ns", p.cpu_quota(), static_cast<long long>(p.cpu_period()));
    std::fprintf(out, "\n");
  }
  Event e;
  while (r.next(e)) {
    std::string line = std::to_string(e.ts()) + " " + Kind_Name(e.kind());
    if (e.process() != 0) line += " process=" + std::to_string(e.process());
    if (e.has_g()) line += " g=" + std::to_string(e.g());
    if (e.has_m()) line += " m=" + std::to_string(e.m());
    if (e.has_p()) line += " p=" + std::to_string(e.p());
    if (e.reason() != REASON_UNSPECIFIED) line += " " + Reason_Name(e.reason());
    if (e.queue() != QUEUE_UNSPECIFIED) line += " " + Queue_Name(e.queue());
    if (e.has_peer_g()) line += " peer_g=" + std::to_string(e.peer_g());
    if (e.has_peer_m()) line += " peer_m=" + std::to_string(e.peer_m());
    if (e.has_peer_p()) line += " peer_p=" + std::to_string(e.peer_p());
    if (e.has_count()) line += " count=" + std::to_string(e.count());
    if (e.stw_reason() != STW_REASON_UNSPECIFIED) line += " " + StwReason_Name(e.stw_reason());
    if (e.gc_worker_mode() != GC_WORKER_MODE_UNSPECIFIED) line += " " + GcWorkerMode_Name(e.gc_worker_mode());
    if (e.has_value()) line += " value=" + std::to_string(e.value());
    if (!e.label().empty()) line += " \"" + e.label() + "\"";
    if (e.has_step()) line += " step=" + std::to_string(e.step());
    std::fprintf(out, "%s\n", line.c_str());
  }
  return r.events_read();
}

}  // namespace gmp::trace
