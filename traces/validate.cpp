#include "traces/validate.h"

#include "traces/trace_reader.h"

namespace gmp::trace {

void Validator::on_event(const Event& e) {
  const Transition& t = sm_.apply(e);
  for (int i = 0; i < t.n_issues; ++i) {
    issue_count_++;
    if (issues_.size() < opt_.max_issues) {
      // Ids are each process's own: a trace of several names the process of each issue.
      std::string where = e.process() != 0 ? "process " + std::to_string(e.process()) + ": " : "";
      issues_.push_back({index_, e.ts(), Kind_Name(e.kind()) + ": " + where + t.issues[i].text()});
    }
  }
  index_++;
}

Validator validate_file(const std::string& path, size_t max_issues) {
  TraceReader r(path);
  Validator::Options opt;
  opt.from_start = r.header().clock() != CLOCK_REAL;
  opt.max_issues = max_issues;
  Validator v(opt);
  Event e;
  while (r.next(e)) v.on_event(e);
  return v;
}

}  // namespace gmp::trace
