// A file of several processes (scenario.proto's ProcessDecl): each process's program is compiled
// as a scenario of its own by the one compiler (compile.cpp), its settings are checked and turned
// into engine units (program.h's ProcessSpec and Cgroup), and the connections that dial another
// process's listener ("process.listener") are joined to that listener's connections. Problems
// are collected over the whole file and thrown together, sorted by position.
#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <tuple>

#include "sim/scenario/compile.h"
#include "sim/scenario/duration.h"
#include "sim/scenario/error.h"
#include "sim/scenario/limits.h"
#include "sim/scenario/settings.h"

namespace gmp::scenario {

namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

std::string quote(const std::string& s) { return "\"" + s + "\""; }
std::string str(Pos p) { return std::to_string(p.line) + ":" + std::to_string(p.column); }

// A connection that dials: process `from`'s conns[conn], naming listener `listener` of process `to`.
struct Dial {
  int32_t from = -1, conn = -1, to = -1;
  std::string listener;
  Pos at;
};

class Processes {
 public:
  Processes(std::string source, const LoadOptions& options) : source_(std::move(source)), options_(options) {}

  Scenario run(const ScenarioFile& file, const Node& root) {
    others(file, root);
    const int count = static_cast<int>(std::min<int64_t>(file.process_size(), kMaxProcesses));
    if (file.process_size() > kMaxProcesses) {
      error(root.at("process", count), "more than " + std::to_string(kMaxProcesses) + " processes");
    }
    names(file, root, count);
    dials(file, root, count);
    std::vector<std::optional<Scenario>> programs(static_cast<size_t>(count));
    Scenario out;
    out.source = source_;
    for (int i = 0; i < count; i++) {
      const ProcessDecl& d = file.process(i);
      const Node n = root.child("process", i);
      out.processes.push_back(settings(d, n));
      programs[static_cast<size_t>(i)] = program(d, n, i);
    }
    join(programs);
    for (int i = 0; i < count; i++) {
      if (programs[static_cast<size_t>(i)]) {
        out.processes[static_cast<size_t>(i)].program =
            std::make_shared<const Scenario>(std::move(*programs[static_cast<size_t>(i)]));
      }
    }
    if (!errors_.empty()) {
      std::stable_sort(errors_.begin(), errors_.end(), [&](const Diagnostic& a, const Diagnostic& b) {
        return std::tuple(a.source != source_, a.line, a.column) < std::tuple(b.source != source_, b.line, b.column);
      });
      throw ScenarioError(std::move(errors_));
    }
    return out;
  }

 private:
  void error(Pos p, std::string message) { errors_.push_back({source_, p.line, p.column, std::move(message)}); }

  // A file with processes declares nothing else at its top level: the first other declaration
  // (by position) is told where it belongs.
  void others(const ScenarioFile& file, const Node& root) {
    const auto* type = ScenarioFile::descriptor();
    const auto* reflection = file.GetReflection();
    std::optional<std::pair<Pos, std::string>> first;
    for (int k = 0; k < type->field_count(); k++) {
      const FieldDescriptor* f = type->field(k);
      if (f->name() == "process") continue;
      const bool present = f->is_repeated() ? reflection->FieldSize(file, f) > 0 : reflection->HasField(file, f);
      if (!present) continue;
      const Pos p = root.at(f->name(), f->is_repeated() ? 0 : -1);
      if (!first || std::tuple(p.line, p.column) < std::tuple(first->first.line, first->first.column)) {
        first = {p, f->name()};
      }
    }
    if (first) {
      error(first->first, "a file that declares processes declares nothing else at its top level: " +
                              first->second + " belongs in a process's program (process { program { ... } })");
    }
  }

  // Process names: present, unique, and free of '.', which separates a dial's process from its
  // listener.
  void names(const ScenarioFile& file, const Node& root, int count) {
    for (int i = 0; i < count; i++) {
      const Node n = root.child("process", i);
      const std::string& name = file.process(i).name();
      if (name.empty()) {
        error(n.self(), "process needs a name");
      } else if (name.find('.') != std::string::npos) {
        error(n.at("name"), "process name " + quote(name) + " has a '.': dial names \"process.listener\"");
      } else if (auto [it, fresh] = ids_.try_emplace(name, std::pair{i, n.at("name")}); !fresh) {
        error(n.at("name"), "duplicate process " + quote(name) + " (first declared at " + str(it->second.second) + ")");
      }
    }
  }

  // Every conn's dial, checked to name another declared process; the listener is looked up once
  // that process's program is compiled (join), which meanwhile knows which of its listeners are
  // dialled.
  void dials(const ScenarioFile& file, const Node& root, int count) {
    for (int i = 0; i < count; i++) {
      const ScenarioFile& prog = file.process(i).program();
      const Node pn = root.child("process", i).child("program");
      for (int j = 0; j < prog.conn_size(); j++) {
        const std::string& dial = prog.conn(j).dial();
        if (dial.empty()) continue;
        const Pos at = pn.child("conn", j).at("dial");
        const size_t dot = dial.find('.');
        if (dot == std::string::npos || dot == 0 || dot + 1 == dial.size()) {
          error(at, "dial " + quote(dial) + ": expected \"process.listener\"");
          continue;
        }
        const std::string process = dial.substr(0, dot), listener = dial.substr(dot + 1);
        auto it = ids_.find(process);
        if (it == ids_.end()) {
          error(at, "dial " + quote(dial) + ": no process named " + quote(process));
          continue;
        }
        if (it->second.first == i) {
          error(at, "dial " + quote(dial) + ": a connection dials another process's listener, not its own process's");
          continue;
        }
        const int32_t to = it->second.first;
        const auto& theirs = file.process(to).program().listener();
        if (std::none_of(theirs.begin(), theirs.end(), [&](const ListenerDecl& l) { return l.name() == listener; })) {
          error(at, "dial " + quote(dial) + ": process " + quote(process) + " has no listener " + quote(listener));
          continue;
        }
        auto [seen, fresh] = dialled_.try_emplace(std::pair{to, listener}, Dial{i, -1, to, listener, at});
        if (!fresh) {
          error(at, "listener " + quote(dial) + " is dialled already (at " + str(seen->second.at) +
                        "): one array of connections dials a listener");
          continue;
        }
        seen->second.conn = j;  // the index among the declarations, which is the conn's id
      }
    }
  }

  // The program, compiled with what the file around it says; nothing when it has errors (they
  // are kept).
  std::optional<Scenario> program(const ProcessDecl& d, const Node& n, int32_t i) {
    if (!d.has_program()) {
      error(n.self(), "process " + quote(d.name()) +
                          " needs a program (program { func { name: \"main\" ... } }), the Go program it runs");
      return std::nullopt;
    }
    context_.processes = true;
    context_.dialled_listeners.clear();
    for (const auto& [key, dial] : dialled_) {
      if (key.first == i) context_.dialled_listeners.insert(key.second);
    }
    try {
      return compile_program(d.program(), n.child("program"), source_, options_, context_);
    } catch (const ScenarioError& e) {
      for (const Diagnostic& x : e.diagnostics()) errors_.push_back(x);
      return std::nullopt;
    }
  }

  // Each dial joined to its listener's connections, element for element.
  void join(std::vector<std::optional<Scenario>>& programs) {
    for (const auto& [key, dial] : dialled_) {
      auto& from = programs[static_cast<size_t>(dial.from)];
      auto& to = programs[static_cast<size_t>(dial.to)];
      if (!from || !to) continue;  // its errors are reported
      const std::string& wanted = dial.listener;  // a lambda may not capture a structured binding (C++20 in clang 14)
      const auto l = std::find_if(to->listeners.begin(), to->listeners.end(),
                                  [&wanted](const Listener& x) { return x.name == wanted; });
      const std::string name = file_process(dial.to) + "." + dial.listener;
      if (l == to->listeners.end()) {
        error(dial.at, "dial " + quote(name) + ": process " + quote(file_process(dial.to)) + " has no listener " +
                           quote(dial.listener));
        continue;
      }
      if (l->conn < 0) continue;
      Conn& client = from->conns[static_cast<size_t>(dial.conn)];
      Conn& server = to->conns[static_cast<size_t>(l->conn)];
      const int64_t mine = std::max<int64_t>(client.length, 1), theirs = std::max<int64_t>(server.length, 1);
      if (mine != theirs) {
        error(dial.at, "dial " + quote(name) + ": connection " + quote(client.name) + " has " + std::to_string(mine) +
                           " connection" + (mine == 1 ? "" : "s") + " but the listener accepts " +
                           std::to_string(theirs) + " (its conn " + quote(server.name) +
                           "): element k dials element k, so the sizes match");
        continue;
      }
      client.dial_process = dial.to;
      client.dial_listener = static_cast<int32_t>(l - to->listeners.begin());
      client.peer_process = dial.to;
      client.peer_conn = l->conn;
      server.peer_process = dial.from;
      server.peer_conn = dial.conn;
    }
  }

  std::string file_process(int32_t id) const {
    for (const auto& [name, at] : ids_) {
      if (at.first == id) return name;
    }
    return "";
  }

  // A time given as ns_field (integer ns) or text_field (a duration string); nothing when neither.
  std::optional<int64_t> time(const Message& m, const Node& n, const char* ns_field, const char* text_field) {
    const auto* type = m.GetDescriptor();
    const auto* reflection = m.GetReflection();
    if (const FieldDescriptor* f = type->FindFieldByName(ns_field); reflection->HasField(m, f)) {
      const int64_t ns = reflection->GetInt64(m, f);
      if (ns < 0 || ns > kMaxDurationNs) {
        error(n.at(ns_field), std::string(ns_field) + " " + std::to_string(ns) + " is out of range: from 0 to " +
                                  std::to_string(kMaxDurationNs));
        return std::clamp<int64_t>(ns, 0, kMaxDurationNs);
      }
      return ns;
    }
    if (const FieldDescriptor* t = type->FindFieldByName(text_field); reflection->HasField(m, t)) {
      ParsedDuration d = parse_duration(reflection->GetString(m, t));
      if (!d.error.empty()) {
        error(n.at(text_field), d.error);
      } else if (d.ns > kMaxDurationNs) {
        error(n.at(text_field), std::string(text_field) + " is too long: at most " + std::to_string(kMaxDurationNs) + "ns");
      }
      return std::clamp<int64_t>(d.ns, 0, kMaxDurationNs);
    }
    return std::nullopt;
  }

  ProcessSpec settings(const ProcessDecl& d, const Node& n) {
    ProcessSpec p;
    p.name = d.name();
    switch (d.gomaxprocs_case()) {
      case ProcessDecl::kProcs:
        if (d.procs() < 1 || d.procs() > kMaxProcs) {
          error(n.at("procs"), "procs " + std::to_string(d.procs()) + " is out of range: from 1 to " +
                                   std::to_string(kMaxProcs) + " (GOMAXPROCS)");
        }
        p.procs = static_cast<int32_t>(std::clamp<int64_t>(d.procs(), 1, kMaxProcs));
        break;
      case ProcessDecl::kProcsAuto:
        if (!d.procs_auto()) error(n.at("procs_auto"), "procs_auto must be true (or give procs)");
        p.procs_auto = d.procs_auto();
        break;
      case ProcessDecl::GOMAXPROCS_NOT_SET: break;
    }
    if (d.has_cgroup()) p.cgroup = cgroup(d.cgroup(), n.child("cgroup"));
    if (d.has_gogc()) {
      if (d.gogc() < -1 || d.gogc() > kMaxGOGC) {
        error(n.at("gogc"), "gogc " + std::to_string(d.gogc()) + " is out of range: -1 (off) or 0 to " +
                                std::to_string(kMaxGOGC) + " (GOGC)");
      }
      p.gogc = std::clamp<int64_t>(d.gogc(), -1, kMaxGOGC);
    }
    if (!d.memlimit().empty()) {
      if (d.memlimit() == "off") {
        p.memlimit = std::numeric_limits<int64_t>::max();
      } else if (auto bytes = parse_byte_count(d.memlimit())) {
        p.memlimit = *bytes;
      } else {
        error(n.at("memlimit"), "memlimit " + quote(d.memlimit()) +
                                    ": expected off or a size in bytes with an optional B, KiB, MiB, GiB or TiB "
                                    "suffix, such as \"512MiB\" (GOMEMLIMIT)");
      }
    }
    p.daemon = d.daemon();
    const ParsedGodebug g = parse_godebug(d.godebug());
    if (!g.error.empty()) error(n.at("godebug"), "godebug " + quote(d.godebug()) + ": " + g.error);
    p.containermaxprocs = g.containermaxprocs;
    p.updatemaxprocs = g.updatemaxprocs;
    return p;
  }

  Cgroup cgroup(const CgroupDecl& d, const Node& n) {
    Cgroup c;
    if (auto period = time(d, n, "period_ns", "period")) {
      const char* field = d.has_period_ns() ? "period_ns" : "period";
      if (*period < kMinCpuPeriodNs || *period > kMaxCpuPeriodNs) {
        error(n.at(field), "period " + ns_text(*period) + " is out of range: from " + ns_text(kMinCpuPeriodNs) +
                               " to " + ns_text(kMaxCpuPeriodNs) + " (cgroup v2's cpu.max)");
      }
      c.period = std::clamp(*period, kMinCpuPeriodNs, kMaxCpuPeriodNs);
    }
    const QuotaNs q = quota_ns(d.quota(), c.period);
    if (!q.error.empty()) error(n.at("quota"), q.error);
    c.quota = q.ns;
    int64_t least = c.quota;  // the smallest quota the cgroup ever has (-1: none)
    int64_t last = -1;
    for (int k = 0; k < d.change_size(); k++) {
      const QuotaChange& ch = d.change(k);
      const Node cn = n.child("change", k);
      const std::optional<int64_t> at = time(ch, cn, "at_ns", "at");
      if (!at) {
        error(cn.self(), "change needs at, when the quota changes (at: \"1s\")");
      } else if (*at <= last) {
        error(cn.at(ch.has_at_ns() ? "at_ns" : "at"),
              "changes are in time order: " + ns_text(*at) + " is not after the previous change's " + ns_text(last));
      }
      last = at.value_or(last);
      const QuotaNs cq = quota_ns(ch.quota(), c.period);
      if (!cq.error.empty()) error(cn.at("quota"), cq.error);
      if (cq.ns >= 0) least = least < 0 ? cq.ns : std::min(least, cq.ns);
      c.changes.push_back({at.value_or(0), cq.ns});
    }
    if (auto burst = time(d, n, "burst_ns", "burst")) {
      const char* field = d.has_burst_ns() ? "burst_ns" : "burst";
      if (least < 0) {
        error(n.at(field), "burst lets a quota's unused runtime carry over: it needs a quota");
      } else if (*burst > least) {
        error(n.at(field), "burst " + ns_text(*burst) + " is more than the quota's " + ns_text(least) +
                               " per period (cpu.max.burst is at most the quota)");
      }
      c.burst = *burst;
    }
    if (!d.cpuset().empty()) {
      ParsedCpuset s = parse_cpuset(d.cpuset());
      if (!s.error.empty()) error(n.at("cpuset"), "cpuset " + quote(d.cpuset()) + ": " + s.error);
      c.cpuset = std::move(s.cpus);
    }
    return c;
  }

  std::string source_;
  LoadOptions options_;
  ProgramContext context_;
  std::vector<Diagnostic> errors_;
  std::map<std::string, std::pair<int32_t, Pos>, std::less<>> ids_;  // process name -> (index, position)
  std::map<std::pair<int32_t, std::string>, Dial> dialled_;          // (process, listener) -> its dial
};

}  // namespace

Scenario compile_processes(const ScenarioFile& file, const Node& root, const std::string& source,
                           const LoadOptions& options) {
  return Processes(source, options).run(file, root);
}

}  // namespace gmp::scenario
