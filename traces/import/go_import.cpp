#include "traces/import/go_import.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "traces/import/go_header.h"
#include "traces/import/go_trace_v1.h"
#include "traces/import/go_trace_v2.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"

namespace gmp::trace::go {
namespace {

struct ReasonMap {
  std::string_view go;
  WaitReason wait;
};

// Go's block reason strings (runtime traceBlockReason) and the v1 reader's names.
constexpr ReasonMap kWaitReasons[] = {
    {"chan receive", WAIT_REASON_CHAN_RECEIVE},
    {"chan send", WAIT_REASON_CHAN_SEND},
    {"select", WAIT_REASON_SELECT},
    {"sleep", WAIT_REASON_SLEEP},
    {"network", WAIT_REASON_IO_WAIT},
    {"sync.(*Cond).Wait", WAIT_REASON_SYNC_COND_WAIT},
    {"preempted", WAIT_REASON_PREEMPTED},
};

WaitReason wait_reason(std::string_view go) {
  for (const ReasonMap& r : kWaitReasons) {
    if (r.go == go) return r.wait;
  }
  return WAIT_REASON_OTHER;
}

Reason stop_reason(std::string_view go) {
  if (go == "runtime.Gosched" || go == "yield") return REASON_GOSCHED;
  if (go == "preempted") return REASON_PREEMPT_COOPERATIVE;
  return REASON_UNSPECIFIED;
}

// Go's stwReason string as the schema's StwReason (Go's order shifted by one); those the schema
// does not name (the runtime's test-only stops) are OTHER.
StwReason stw_reason(std::string_view go) {
  for (int i = 0; i + 1 < STW_REASON_OTHER; i++) {
    if (kGoStwReasons[i] == go) return static_cast<StwReason>(i + 1);
  }
  return STW_REASON_OTHER;
}

// The mode of a GC mark worker from the label Go gives its start (mgc.go gcMarkWorkerModeStrings).
GcWorkerMode worker_mode(std::string_view label) {
  if (label == "GC (dedicated)") return GC_WORKER_MODE_DEDICATED;
  if (label == "GC (fractional)") return GC_WORKER_MODE_FRACTIONAL;
  if (label == "GC (idle)") return GC_WORKER_MODE_IDLE;
  return GC_WORKER_MODE_UNSPECIFIED;
}

// The function of a stack's first frame ("main.worker" of "main.worker /x/main.go:12").
std::string_view first_function(std::string_view stack) {
  stack = stack.substr(0, stack.find('\n'));
  size_t sp = stack.rfind(' ');
  return sp == std::string_view::npos ? stack : stack.substr(0, sp);
}

// Length of the valid UTF-8 sequence at the start of `s`, 0 if it is not one.
size_t utf8_len(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  const uint8_t c = b(0);
  size_t n;
  uint32_t cp;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2, cp = c & 0x1f;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3, cp = c & 0x0f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4, cp = c & 0x07;
  } else {
    return 0;
  }
  if (s.size() < n) return 0;
  for (size_t i = 1; i < n; i++) {
    if ((b(i) & 0xc0) != 0x80) return 0;
    cp = cp << 6 | (b(i) & 0x3f);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

}  // namespace

// Text for a string field: proto3 strings must be UTF-8, a Go trace's strings are bytes. Invalid
// bytes become '?'.
void GoConverter::set_text(std::string* field, std::string_view s) {
  size_t i = 0;
  while (i < s.size() && static_cast<uint8_t>(s[i]) < 0x80) i++;
  if (i == s.size()) {
    field->assign(s.data(), s.size());
    return;
  }
  field->clear();
  field->reserve(s.size());
  for (i = 0; i < s.size();) {
    size_t n = utf8_len(s.substr(i));
    if (n == 0) {
      *field += '?';
      i++;
    } else {
      field->append(s.data() + i, n);
      i += n;
    }
  }
}

std::string read_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) throw TraceFormatError(path, 0, std::string("cannot open the file: ") + std::strerror(errno));
  std::string data;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) data.append(buf, n);
  const bool bad = std::ferror(f) != 0;
  std::fclose(f);
  if (bad) throw TraceFormatError(path, data.size(), "cannot read the file");
  return data;
}

std::unique_ptr<GoTraceReader> open_go_reader(const std::string& path, std::string_view data, FormatChoice format) {
  GoHeader h = parse_go_header(path, data);
  if (format == FormatChoice::kV1 && h.format != GoFormat::kV1) {
    throw TraceFormatError(path, 0,
                           "--format v1, but the header says go 1." + std::to_string(h.minor) + " (the second format)");
  }
  if (format == FormatChoice::kV2 && h.format != GoFormat::kV2) {
    throw TraceFormatError(path, 0,
                           "--format v2, but the header says go 1." + std::to_string(h.minor) + " (the first format)");
  }
  if (h.format == GoFormat::kV1) return make_v1_reader(path, data);
  return make_v2_reader(path, data);
}

void GoConverter::scan(const GoEvent& ev) {
  if (!scanned_any_) {
    scanned_any_ = true;
    origin_ = ev.ts;
  }
  if (ev.kind == GoKind::kProcsChange && gomaxprocs_ == 0) gomaxprocs_ = static_cast<int64_t>(ev.value);
  if (ev.kind == GoKind::kProcStatus && ev.old_status == static_cast<uint8_t>(PStatus::kUnknown)) {
    max_initial_p_ = std::max(max_initial_p_, ev.arg_p);
  }
  if (ev.kind == GoKind::kProcStart) max_initial_p_ = std::max(max_initial_p_, ev.arg_p);
}

Header GoConverter::header(const std::string& go_version) const {
  int64_t procs = gomaxprocs_ > 0 ? gomaxprocs_ : max_initial_p_ + 1;
  Header h;
  h.set_producer("go trace import");
  h.set_num_ps(static_cast<int32_t>(std::clamp<int64_t>(procs, 0, INT32_MAX)));
  h.set_num_ms(0);  // a Go trace does not say which threads exist: each M appears with M_CREATE
  h.set_clock(CLOCK_REAL);
  auto add = [&](const char* k, const std::string& v) {
    Metadata* md = h.add_metadata();
    md->set_key(k);
    md->set_value(v);
  };
  add("go_version", go_version);
  add("gomaxprocs", std::to_string(procs));
  return h;
}

// The first event that names an M introduces it: a Go trace does not record thread creation.
void GoConverter::note_m(const GoEvent& ev, int64_t m, const Sink& sink) {
  if (m < 0 || m == last_m_ || !ms_seen_.insert(m).second) {
    if (m >= 0) last_m_ = m;
    return;
  }
  last_m_ = m;
  Event& e = make(ev, KIND_M_CREATE);
  e.set_m(m);
  e.clear_p();
  emit(sink);
}

Event& GoConverter::make(const GoEvent& ev, Kind kind) {
  out_.Clear();
  out_.set_ts(std::max<int64_t>(0, ev.ts - origin_));
  out_.set_kind(kind);
  if (ev.m >= 0) out_.set_m(ev.m);
  if (ev.p >= 0) out_.set_p(ev.p);
  return out_;
}

void GoConverter::acquire(const GoEvent& ev, int64_t m, int64_t p, const Sink& sink) {
  Event& e = make(ev, KIND_P_ACQUIRE);
  if (m >= 0) {
    e.set_m(m);
  } else {
    e.clear_m();
  }
  e.set_p(p);
  e.clear_g();
  emit(sink);
}

// m releases p, or with RETAKE, m (sysmon, or the M that took it) takes p from its holder,
// which sits in a system call: peer_m. A P no M is known to hold is not taken.
void GoConverter::release(const GoEvent& ev, int64_t p, Reason reason, const Sink& sink) {
  const int64_t holder = written_.holder(0, p);
  if (reason == REASON_RETAKE && (holder < 0 || holder == ev.m)) {
    if (holder < 0) return;
    reason = REASON_SYSCALL;  // the M of the system call gave it up itself
  }
  Event& e = make(ev, KIND_P_RELEASE);
  e.clear_m();
  if (reason == REASON_RETAKE) {
    if (ev.m >= 0) e.set_m(ev.m);
    e.set_peer_m(holder);
  } else if (holder >= 0) {
    e.set_m(holder);
  } else if (ev.m >= 0) {
    e.set_m(ev.m);
  }
  e.set_p(p);
  e.set_reason(reason);
  emit(sink);
}

// A G first seen through a status event existed before the trace. It is not created: like any
// G that the schema's validator first sees, its first event shows its state. So a running G
// starts (on the event's M and P), a G in a system call enters it (on the M of the system call),
// and a runnable or waiting G has no event until it next changes.
void GoConverter::introduce_g(const GoEvent& ev, const Sink& sink) {
  const int64_t g = ev.arg_g;
  gs_[g].ready_p = -1;
  const auto status = static_cast<GStatus>(ev.status);
  if (status == GStatus::kRunning) {
    Event& e = make(ev, KIND_GO_START);
    e.set_g(g);
    emit(sink);
  } else if (status == GStatus::kSyscall) {
    Event& e = make(ev, KIND_GO_SYSCALL_ENTER);
    e.set_g(g);
    e.clear_p();
    e.set_reason(REASON_SYSCALL);
    if (!ev.stack.empty()) set_text(e.mutable_stack(), ev.stack);
    emit(sink);
  }
}

void GoConverter::convert(const GoEvent& ev, const Sink& sink) {
  if (ev.kind == GoKind::kDropped || ev.kind == GoKind::kProcsChange) return;
  note_m(ev, ev.m, sink);
  note_m(ev, ev.arg_m, sink);
  switch (ev.kind) {
    case GoKind::kProcStatus: {
      auto old_status = static_cast<PStatus>(ev.old_status);
      auto status = static_cast<PStatus>(ev.status);
      if ((old_status == PStatus::kUnknown || old_status == PStatus::kNotExist) &&
          (status == PStatus::kRunning || status == PStatus::kSyscall)) {
        acquire(ev, ev.m, ev.arg_p, sink);
      }
      return;
    }
    case GoKind::kProcStart: acquire(ev, ev.m, ev.arg_p, sink); return;
    case GoKind::kProcStop: release(ev, ev.p, REASON_UNSPECIFIED, sink); return;
    case GoKind::kProcSteal:
      // A P whose M the trace never named (a P found abandoned in a syscall at the start of
      // a generation) is not held by anyone here: nothing to release.
      release(ev, ev.arg_p, REASON_RETAKE, sink);
      return;
    case GoKind::kGoStatus: {
      const auto old_status = static_cast<GStatus>(ev.old_status);
      const auto status = static_cast<GStatus>(ev.status);
      (void)status;
      if (old_status == GStatus::kUnknown) introduce_g(ev, sink);
      return;
    }
    case GoKind::kGoCreateBlocked:
      // A G created waiting (an iter.Pull coroutine): the schema creates Gs runnable and has no
      // way to make one wait without running it, so it first appears when it is unblocked.
      return;
    case GoKind::kGoCreate: {
      Event& e = make(ev, KIND_GO_CREATE);
      e.set_g(ev.arg_g);
      if (ev.g >= 0) e.set_peer_g(ev.g);
      e.set_reason(REASON_NEWPROC);
      if (!ev.new_stack.empty()) {
        std::string_view f = first_function(ev.new_stack);
        set_text(e.mutable_label(), f);
      }
      if (!ev.stack.empty()) set_text(e.mutable_stack(), ev.stack);
      emit(sink);
      gs_[ev.arg_g].ready_p = ev.p;
      return;
    }
    case GoKind::kGoCreateSyscall: {
      // A cgo callback's G: created, running on this M (without a P) and in a system call.
      Event& e = make(ev, KIND_GO_CREATE);
      e.set_g(ev.arg_g);
      e.clear_p();
      emit(sink);
      Event& r = make(ev, KIND_GO_START);
      r.set_g(ev.arg_g);
      r.clear_p();
      emit(sink);
      Event& s = make(ev, KIND_GO_SYSCALL_ENTER);
      s.set_g(ev.arg_g);
      s.clear_p();
      s.set_reason(REASON_SYSCALL);
      emit(sink);
      return;
    }
    case GoKind::kGoStart: {
      GInfo& info = gs_[ev.arg_g];
      if (info.resumes_on >= 0) {
        // The start Go writes right after a syscall exit that got an idle P: the exit's
        // GO_SYSCALL_EXIT (EXITSYSCALL_IDLE_P) already has the G run on.
        const bool same = info.resumes_on == ev.m;
        info.resumes_on = -1;
        if (same) return;
      }
      Reason reason = REASON_UNSPECIFIED;
      if (info.ready_p >= 0 && ev.p >= 0 && info.ready_p != ev.p) {
        Event& s = make(ev, KIND_STEAL);
        s.set_g(ev.arg_g);
        s.set_peer_p(info.ready_p);
        s.set_queue(QUEUE_LOCAL);
        s.set_reason(REASON_STEAL_WORK);
        emit(sink);
        reason = REASON_STEAL_WORK;
      }
      info.ready_p = -1;
      Event& e = make(ev, KIND_GO_START);
      e.set_g(ev.arg_g);
      e.set_reason(reason);
      e.set_gc_worker_mode(worker_mode(ev.reason));  // a mark worker's start: Go labels it with its mode
      emit(sink);
      return;
    }
    case GoKind::kGoStop: {
      Event& e = make(ev, KIND_GO_STOP);
      e.set_g(ev.g);
      e.set_reason(stop_reason(ev.reason));
      set_text(e.mutable_label(), ev.reason);
      if (!ev.stack.empty()) set_text(e.mutable_stack(), ev.stack);
      emit(sink);
      gs_[ev.g].ready_p = -1;  // Gosched and preemption put it on the global queue
      return;
    }
    case GoKind::kGoBlock: {
      Event& e = make(ev, KIND_GO_PARK);
      e.set_g(ev.g);
      e.set_reason(REASON_PARK);
      WaitReason w = wait_reason(ev.reason);
      e.set_wait_reason(w);
      if (w == WAIT_REASON_OTHER) set_text(e.mutable_label(), ev.reason);
      if (!ev.stack.empty()) set_text(e.mutable_stack(), ev.stack);
      emit(sink);
      return;
    }
    case GoKind::kGoUnblock: {
      Event& e = make(ev, KIND_GO_UNPARK);
      e.set_g(ev.arg_g);
      if (ev.g >= 0) e.set_peer_g(ev.g);
      e.set_reason(REASON_READY);
      if (!ev.stack.empty()) set_text(e.mutable_stack(), ev.stack);
      emit(sink);
      gs_[ev.arg_g].ready_p = ev.p;
      return;
    }
    case GoKind::kGoDestroy:
    case GoKind::kGoDestroySyscall: {
      if (ev.kind == GoKind::kGoDestroySyscall) {
        // A cgo callback returns: its G leaves the system call on its M, then ends.
        Event& x = make(ev, KIND_GO_SYSCALL_EXIT);
        x.set_g(ev.g);
        x.clear_p();
        emit(sink);
      }
      Event& e = make(ev, KIND_GO_EXIT);
      e.set_g(ev.g);
      e.set_reason(REASON_GOEXIT);
      if (ev.kind == GoKind::kGoDestroySyscall) e.clear_p();
      emit(sink);
      gs_.erase(ev.g);
      return;
    }
    case GoKind::kGoSyscallBegin: {
      Event& e = make(ev, KIND_GO_SYSCALL_ENTER);
      e.set_g(ev.g);
      e.set_reason(REASON_SYSCALL);
      if (!ev.stack.empty()) set_text(e.mutable_stack(), ev.stack);
      emit(sink);
      return;
    }
    case GoKind::kGoSyscallEnd: {
      Event& e = make(ev, KIND_GO_SYSCALL_EXIT);
      e.set_g(ev.g);
      e.set_reason(REASON_EXITSYSCALL_FAST);
      emit(sink);
      return;
    }
    case GoKind::kGoSyscallEndBlocked: {
      Event& e = make(ev, KIND_GO_SYSCALL_EXIT);
      e.set_g(ev.g);
      e.set_reason(ev.p >= 0 ? REASON_EXITSYSCALL_IDLE_P : REASON_EXITSYSCALL_NO_P);
      emit(sink);
      GInfo& info = gs_[ev.g];
      info.ready_p = ev.p;
      // With a P, Go writes the G's start next; the exit already has it run on.
      if (ev.p >= 0) info.resumes_on = ev.m;
      return;
    }
    case GoKind::kUserTaskBegin:
    case GoKind::kUserTaskEnd:
    case GoKind::kUserRegionBegin:
    case GoKind::kUserRegionEnd:
    case GoKind::kUserLog:
    case GoKind::kGoLabel: {
      Event& e = make(ev, KIND_ANNOTATION);
      if (ev.g >= 0) e.set_g(ev.g);
      e.set_reason(REASON_USER);
      e.set_user_op(USER_OP_CUSTOM);
      if (ev.kind != GoKind::kGoLabel) e.set_object(ev.value);
      if (ev.kind == GoKind::kUserTaskBegin || ev.kind == GoKind::kUserRegionBegin) e.set_phase(PHASE_BEGIN);
      if (ev.kind == GoKind::kUserTaskEnd || ev.kind == GoKind::kUserRegionEnd) e.set_phase(PHASE_END);
      std::string label = ev.kind == GoKind::kUserTaskBegin || ev.kind == GoKind::kUserTaskEnd ? "task " : "";
      if (ev.kind == GoKind::kUserRegionBegin || ev.kind == GoKind::kUserRegionEnd) label = "region ";
      if (ev.kind == GoKind::kUserLog) label = "log ";
      if (ev.kind == GoKind::kGoLabel) label = "label ";
      label += ev.reason;
      set_text(e.mutable_label(), label);
      if (!ev.stack.empty()) set_text(e.mutable_stack(), ev.stack);
      emit(sink);
      return;
    }
    case GoKind::kGCBegin:
    case GoKind::kGCEnd:
    case GoKind::kSTWBegin:
    case GoKind::kSTWEnd:
    case GoKind::kGCMarkAssistBegin:
    case GoKind::kGCMarkAssistEnd:
    case GoKind::kGCSweepBegin:
    case GoKind::kGCSweepEnd:
    case GoKind::kHeapAlloc:
    case GoKind::kHeapGoal: convert_gc(ev, sink); return;
    case GoKind::kGoSyscallBlocked:
    case GoKind::kProcsChange:
    case GoKind::kDropped: return;
  }
}

// The collector's events: ranges (cycles, world stops, assists, sweeps) and heap counters. Each
// keeps the M and P that wrote it; see trace.proto for the G each names.
void GoConverter::convert_gc(const GoEvent& ev, const Sink& sink) {
  const bool restated = ev.status == 1;  // in progress when the trace starts
  switch (ev.kind) {
    case GoKind::kGCBegin:
    case GoKind::kGCEnd: {
      if (ev.kind == GoKind::kGCBegin) gc_cycle_++;
      Event& e = make(ev, ev.kind == GoKind::kGCBegin ? KIND_GC_BEGIN : KIND_GC_END);
      if (restated) e.clear_m(), e.clear_p();
      e.set_value(gc_cycle_);
      emit(sink);
      return;
    }
    case GoKind::kSTWBegin:
    case GoKind::kSTWEnd: {
      Event& e = make(ev, ev.kind == GoKind::kSTWBegin ? KIND_STW_BEGIN : KIND_STW_END);
      if (ev.g >= 0) e.set_g(ev.g);  // the goroutine that stops the world
      const StwReason r = stw_reason(ev.reason);
      e.set_stw_reason(r);
      if (r == STW_REASON_OTHER) set_text(e.mutable_label(), ev.reason);
      emit(sink);
      return;
    }
    case GoKind::kGCMarkAssistBegin:
    case GoKind::kGCMarkAssistEnd: {
      Event& e = make(ev, ev.kind == GoKind::kGCMarkAssistBegin ? KIND_GC_MARK_ASSIST_BEGIN : KIND_GC_MARK_ASSIST_END);
      if (restated) {
        // Go names the G in its assist, not where it is: it may be parked on the assist queue.
        e.set_g(ev.arg_g);
        if (ev.arg_g != ev.g) e.clear_m(), e.clear_p();
      } else if (ev.g >= 0) {
        e.set_g(ev.g);
      }
      emit(sink);
      return;
    }
    case GoKind::kGCSweepBegin:
    case GoKind::kGCSweepEnd: {
      Event& e = make(ev, ev.kind == GoKind::kGCSweepBegin ? KIND_GC_SWEEP_BEGIN : KIND_GC_SWEEP_END);
      if (restated && ev.arg_p != ev.p) {
        e.set_p(ev.arg_p);  // a P found sweeping: its holder, if known
        e.clear_m();
        if (const int64_t holder = written_.holder(0, ev.arg_p); holder >= 0) e.set_m(holder);
      } else if (ev.g >= 0) {
        e.set_g(ev.g);  // the goroutine that sweeps (an allocation's), if any
      }
      if (ev.kind == GoKind::kGCSweepEnd) e.set_value(static_cast<int64_t>(std::min<uint64_t>(ev.value, INT64_MAX)));
      emit(sink);
      return;
    }
    case GoKind::kHeapAlloc:
    case GoKind::kHeapGoal: {
      Event& e = make(ev, ev.kind == GoKind::kHeapAlloc ? KIND_HEAP_ALLOC : KIND_HEAP_GOAL);
      if (ev.g >= 0) e.set_g(ev.g);  // the goroutine whose allocation moved the counter, if any
      e.set_value(static_cast<int64_t>(std::min<uint64_t>(ev.value, INT64_MAX)));
      emit(sink);
      return;
    }
    default: return;
  }
}

ImportResult convert_go_trace(const std::string& name, std::string_view data, FormatChoice format,
                              const std::function<void(const Header&)>& on_header, const GoConverter::Sink& sink) {
  ImportResult r;
  GoConverter conv;
  GoEvent ev;
  // The header needs the start of the trace only: the first generation, or less once GOMAXPROCS
  // is known.
  std::unique_ptr<GoTraceReader> reader = open_go_reader(name, data, format);
  r.go_version = reader->go_version();
  uint64_t first_gen = 0;
  while (conv.gomaxprocs() == 0 && reader->next(ev)) {
    if (first_gen == 0) first_gen = reader->generation();
    if (reader->generation() != first_gen) break;
    conv.scan(ev);
  }
  reader->rewind();
  on_header(conv.header(r.go_version));
  const GoConverter::Sink counting = [&](const Event& e) {
    r.events_written++;
    sink(e);
  };
  while (reader->next(ev)) {
    r.go_events++;
    if (!ev.synthetic) r.type_counts[ev.type]++;
    conv.convert(ev, counting);
  }
  return r;
}

ImportResult import_go_trace(const std::string& in, const std::string& out, FormatChoice format) {
  const std::string data = read_file(in);
  std::unique_ptr<TraceWriter> writer;
  ImportResult r = convert_go_trace(
      in, data, format, [&](const Header& h) { writer = std::make_unique<TraceWriter>(out, h); },
      [&](const Event& e) { writer->write(e); });
  writer->close();
  return r;
}

}  // namespace gmp::trace::go
