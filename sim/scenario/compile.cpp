// The scenario compiler (see compile.h). Declarations get ids in declaration order; then each
// function is emitted into a flat code array (the instruction set is in program.h), with jumps
// patched once their targets are known; then the assertions, which may name go statements, are
// resolved. Problems are collected rather than thrown one at a time, so one load reports all of
// them, sorted by position.
#include "sim/scenario/compile.h"

#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "sim/scenario/arrivals.h"
#include "sim/scenario/duration.h"
#include "sim/scenario/error.h"
#include "sim/scenario/limits.h"

namespace gmp::scenario {

namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::RepeatedPtrField;

// One kind of declaration's names; an id is the declaration's index.
struct Declared {
  int32_t id;
  Pos pos;
};
using Table = std::map<std::string, Declared, std::less<>>;

std::string quote(const std::string& s) { return "\"" + s + "\""; }
std::string str(Pos p) { return std::to_string(p.line) + ":" + std::to_string(p.column); }

// The function being emitted.
struct Emitter {
  int32_t id = -1;
  Function fn;
  struct Open {
    int32_t loop;                 // -1 for a select, which a plain break leaves, as in Go
    std::vector<int32_t> breaks;  // jumps to patch to the construct's end
  };
  std::vector<Open> open;        // enclosing loops and selects, innermost last
  std::vector<int32_t> returns;  // jumps to patch to the function's end
  int32_t depth = 0;             // counted loops open: the next free counter slot
  int32_t closures = 0;          // parallel bodies made so far, for their names
  int32_t root = -1;             // the declared function whose text this is (loop names' scope)
  // The names expressions can read, innermost last, with their variable slots: the parameters,
  // then the variables of the counted loops open around the code being emitted.
  std::vector<std::pair<std::string, int32_t>> scope;
  // Per variable slot: None (an int64) or the kind of object whose handle it holds (a local or a
  // typed parameter). A slot's entry is the one of its latest allocation, the one in scope.
  std::vector<ObjKind> kinds;
};

// A channel or connection an operation names, and the index expression of its element when it is
// an array.
struct ChanRef {
  int32_t id = -1;
  int32_t index = -1;
  int32_t handle = -1;  // a local or typed parameter: its variable slot (id is then -1)
};

const char* kind_name(ObjKind k) {
  switch (k) {
    case ObjKind::Chan: return "channel";
    case ObjKind::WaitGroup: return "waitgroup";
    case ObjKind::Mutex: return "mutex";
    case ObjKind::None: break;
  }
  return "integer";
}

// A parameter's text: "name" (an int64) or "name chan", "name waitgroup", "name mutex". The kind is
// nullopt when the text has another shape.
std::pair<std::string, std::optional<ObjKind>> split_param(const std::string& text) {
  std::istringstream in(text);
  std::string name, type, rest;
  in >> name >> type >> rest;
  if (name.empty()) return {text, ObjKind::None};  // new_var reports the empty name
  if (type.empty()) return {name, ObjKind::None};
  if (!rest.empty()) return {name, std::nullopt};
  if (type == "chan") return {name, ObjKind::Chan};
  if (type == "waitgroup") return {name, ObjKind::WaitGroup};
  if (type == "mutex") return {name, ObjKind::Mutex};
  return {name, std::nullopt};
}

// An identifier as expressions read them: a letter or '_', then letters, digits or '_'.
bool identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])) != 0) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; });
}

// An expression's text in a message: at most 40 characters of it.
std::string clip(const std::string& s) { return s.size() <= 40 ? s : s.substr(0, 37) + "..."; }

class Compiler {
 public:
  Compiler(std::string source, const LoadOptions& options, ProgramContext& context)
      : options_(options), context_(context), conns_total_(context.conns), requests_total_(context.requests) {
    out_.source = std::move(source);
  }

  Scenario run(const ScenarioFile& file, const Node& root) {
    // The conns of the listeners another process dials: their requests are that process's writes.
    for (const ListenerDecl& l : file.listener()) {
      if (context_.dialled_listeners.contains(l.name())) fed_conns_.insert(l.conn());
    }
    declare(file.chan(), root, "chan", "channel", chans_, [&](const ChanDecl& d, const Node& n) {
      if (d.cap() < 0) error(n.at("cap"), "negative channel capacity " + std::to_string(d.cap()));
      if (d.has_count() && (d.count() < 1 || d.count() > kMaxChanArray)) {
        error(n.at("count"), "channel array length " + std::to_string(d.count()) + " is out of range: from 1 to " +
                                 std::to_string(kMaxChanArray));
      }
      out_.chans.push_back({d.name(), d.cap(), d.has_count() ? std::clamp<int64_t>(d.count(), 1, kMaxChanArray) : 0});
    });
    declare(file.mutex(), root, "mutex", "mutex", mutexes_,
            [&](const MutexDecl& d, const Node& n) { out_.mutexes.push_back({d.name(), sync_array(d, n, "mutex")}); });
    declare(file.var(), root, "var", "variable", vars_, [&](const VarDecl& d, const Node&) { out_.vars.push_back({d.name()}); });
    declare(file.waitgroup(), root, "waitgroup", "waitgroup", waitgroups_, [&](const WaitGroupDecl& d, const Node& n) {
      out_.waitgroups.push_back({d.name(), sync_array(d, n, "waitgroup")});
    });
    declare(file.device(), root, "device", "device", devices_, [&](const DeviceDecl& d, const Node& n) {
      Instr service;
      amount(d, n, service);
      if (service.ns == 0 && d.service_case() != DeviceDecl::SERVICE_NOT_SET)
        error(n.at(d.has_ns() ? "ns" : "duration"), "a device's service time must be positive");
      out_.devices.push_back({d.name(), service.ns});
    });
    declare(file.conn(), root, "conn", "connection", conns_, [&](const ConnDecl& d, const Node& n) { conn(d, n); });
    declare(file.listener(), root, "listener", "listener", listeners_,
            [&](const ListenerDecl& d, const Node& n) { listener(d, n); });
    declare(file.func(), root, "func", "function", funcs_, [&](const FuncDecl& d, const Node&) {
      out_.funcs.emplace_back().name = d.name();
      declared_params_.push_back(std::min(d.param_size(), kMaxParams));
      std::vector<ObjKind>& kinds = declared_kinds_.emplace_back();
      for (int k = 0; k < d.param_size() && k < kMaxParams; k++) {
        kinds.push_back(split_param(d.param(k)).second.value_or(ObjKind::None));
      }
    });
    bench_func_ = file.has_benchmark() && !file.benchmark().func().empty();
    loop_names_.resize(static_cast<size_t>(file.func_size()));
    for (int i = 0; i < file.func_size(); i++) {
      Emitter e;
      e.id = i;
      e.root = i;
      e.fn.name = file.func(i).name();
      params(file.func(i), root.child("func", i), e);
      function(e, [&] { ops(file.func(i).op(), root.child("func", i)); });
    }
    if (auto it = funcs_.find("main"); it != funcs_.end()) {
      out_.entry = it->second.id;
    } else if (!bench_func_) {
      error(root.self(), std::string("no function \"main\": the main goroutine") +
                             (context_.processes ? " of this process" : "") + " has nothing to run");
    }
    if (file.has_benchmark()) benchmark(file.benchmark(), root.child("benchmark"));
    for (int i = 0; i < file.assertion_size(); i++) assertion(file.assertion(i), root.child("assertion", i));
    context_.conns = conns_total_;
    context_.requests = requests_total_;
    if (!errors_.empty()) {
      std::stable_sort(errors_.begin(), errors_.end(),
                       [&](const Diagnostic& a, const Diagnostic& b) {  // the scenario's own first
                         return std::tuple(a.source != out_.source, a.line, a.column) <
                                std::tuple(b.source != out_.source, b.line, b.column);
                       });
      throw ScenarioError(std::move(errors_));
    }
    return std::move(out_);
  }

 private:
  void error(Pos p, std::string message) {
    errors_.push_back({out_.source, p.line, p.column, std::move(message)});
  }

  template <class Decl, class Add>
  void declare(const RepeatedPtrField<Decl>& decls, const Node& root, const std::string& field,
               const std::string& what, Table& table, Add add) {
    for (int i = 0; i < decls.size(); i++) {
      Node n = root.child(field, i);
      const std::string& name = decls[i].name();
      if (name.empty()) {
        error(n.self(), what + " needs a name");
      } else if (auto [it, fresh] = table.try_emplace(name, Declared{i, n.at("name")}); !fresh) {
        error(n.at("name"), "duplicate " + what + " " + quote(name) + " (first declared at " +
                                str(it->second.pos) + ")");
      }
      add(decls[i], n);
    }
  }

  // The id of a declared name that operation n refers to in its field `field`.
  int32_t resolve(const Table& table, const std::string& name, const Node& n,
                  const std::string& field, const std::string& what) {
    if (name.empty()) {
      error(n.self(), n.name() + " needs a " + what + " (" + field + ")");
      return -1;
    }
    auto it = table.find(name);
    if (it == table.end()) {
      error(n.at(field), "undeclared " + what + " " + quote(name));
      return -1;
    }
    return it->second.id;
  }
  int32_t chan(const std::string& name, const Node& n, const std::string& field = "chan") {
    return resolve(chans_, name, n, field, "channel");
  }

  // A channel and its element: an array needs an index, a plain channel takes none.
  ChanRef chan_ref(const std::string& name, const std::string& index, const Node& n,
                   const std::string& field = "chan") {
    ChanRef r;
    if (scoped_ref(name, index, ObjKind::Chan, n, field, r)) return r;
    r.id = chan(name, n, field);
    if (r.id < 0) return r;
    const Channel& c = out_.chans[static_cast<size_t>(r.id)];
    if (c.length > 0 && index.empty()) {
      error(n.at(field), "channel array " + quote(name) + " needs the element's index (index: \"i\")");
    } else if (c.length == 0 && !index.empty()) {
      error(n.at("index"), "channel " + quote(name) + " is not an array: it takes no index");
    } else if (!index.empty()) {
      r.index = expr(index, n, "index");
    }
    return r;
  }

  // The length of a mutex or WaitGroup array (count), 0 for a single one.
  template <class Decl>
  int64_t sync_array(const Decl& d, const Node& n, const std::string& what) {
    if (!d.has_count()) return 0;
    if (d.count() < 1 || d.count() > kMaxSyncArray) {
      error(n.at("count"), what + " array length " + std::to_string(d.count()) + " is out of range: from 1 to " +
                               std::to_string(kMaxSyncArray));
    }
    return std::clamp<int64_t>(d.count(), 1, kMaxSyncArray);
  }

  // The slot and kind of the local or typed parameter `name` in scope; nullopt when name is none
  // (an int64 variable names no object).
  std::optional<std::pair<int32_t, ObjKind>> scoped_object(const std::string& name) const {
    for (auto it = e_->scope.rbegin(); it != e_->scope.rend(); ++it) {
      if (it->first != name) continue;
      const ObjKind k = kind_of(*e_, it->second);
      if (k == ObjKind::None) return std::nullopt;
      return std::pair(it->second, k);
    }
    return std::nullopt;
  }
  static ObjKind kind_of(const Emitter& e, int32_t slot) {
    return slot >= 0 && static_cast<size_t>(slot) < e.kinds.size() ? e.kinds[static_cast<size_t>(slot)] : ObjKind::None;
  }

  // Whether `name` is a local or typed parameter in scope. If it is, r.handle is its slot, or an
  // error says why not (another kind of object, or an index given).
  bool scoped_ref(const std::string& name, const std::string& index, ObjKind want, const Node& n,
                  const std::string& field, ChanRef& r) {
    const auto s = scoped_object(name);
    if (!s) return false;
    if (s->second != want) {
      error(n.at(field), quote(name) + " is a " + kind_name(s->second) + ", not a " + kind_name(want));
    } else if (!index.empty()) {
      error(n.at("index"), kind_name(want) + std::string(" ") + quote(name) +
                               " is a local or a parameter, a single one: it takes no index");
    } else {
      r.handle = s->first;
    }
    return true;
  }

  // A mutex or WaitGroup and its element: a local or typed parameter in scope, else a declared one
  // (an array needs an index, a single one takes none).
  ChanRef sync_ref(const Table& table, const std::string& name, const std::string& index, ObjKind kind,
                   const Node& n, const std::string& field) {
    ChanRef r;
    if (!name.empty() && scoped_ref(name, index, kind, n, field, r)) return r;
    const std::string what = kind_name(kind);
    r.id = resolve(table, name, n, field, what);
    if (r.id < 0) return r;
    const auto id = static_cast<size_t>(r.id);
    const int64_t length = kind == ObjKind::Mutex ? out_.mutexes[id].length : out_.waitgroups[id].length;
    if (length > 0 && index.empty()) {
      error(n.at(field), what + " array " + quote(name) + " needs the element's index (index: \"i\")");
    } else if (length == 0 && !index.empty()) {
      error(n.at("index"), what + " " + quote(name) + " is not an array: it takes no index");
    } else if (!index.empty()) {
      r.index = expr(index, n, "index");
    }
    return r;
  }

  // A connection and its element: an array needs an index, a single connection takes none.
  ChanRef conn_ref(const std::string& name, const std::string& index, const Node& n) {
    ChanRef r{resolve(conns_, name, n, "conn", "connection"), -1};
    if (r.id < 0) return r;
    const Conn& c = out_.conns[static_cast<size_t>(r.id)];
    if (c.length > 0 && index.empty()) {
      error(n.at("conn"), "connection array " + quote(name) + " needs the connection's index (index: \"i\")");
    } else if (c.length == 0 && !index.empty()) {
      error(n.at("index"), "connection " + quote(name) + " is not an array: it takes no index");
    } else if (!index.empty()) {
      r.index = expr(index, n, "index");
    }
    return r;
  }

  // A connection, or an array of them (conns). The requests and the connections of all the
  // declarations together are bounded too (limits.h): the first declaration past a bound is told.
  void conn(const ConnDecl& d, const Node& n) {
    Conn c;
    c.name = d.name();
    c.poisson = d.poisson();
    const bool file = !d.arrivals().empty();
    const bool dialled = !d.dial().empty();
    if (dialled) dial_conns_.insert(d.name());
    const bool fed = fed_conns_.contains(d.name());
    if (dialled && !context_.processes) {
      error(n.at("dial"), "dial connects to another process's listener: only a file that declares processes "
                          "(process { ... }) has other processes");
    }
    if (dialled || fed) {
      // Its requests are the writes of the other end: nothing generates arrivals for it.
      for (const char* f : {"count", "ns", "duration", "poisson", "start_ns", "start", "stagger_ns", "stagger",
                            "burst", "arrivals"}) {
        const FieldDescriptor* fd = ConnDecl::descriptor()->FindFieldByName(f);
        if (!d.GetReflection()->HasField(d, fd)) continue;
        error(n.at(f), std::string(f) + " is for generated arrivals: " +
                           (dialled ? "a dialled connection's requests are its own process's writes"
                                    : "this connection's listener is dialled, so its requests are the writes of "
                                      "the process that dials it"));
      }
      if (d.has_conns() && (d.conns() < 1 || d.conns() > kMaxConns)) {
        error(n.at("conns"), "a connection array's length " + std::to_string(d.conns()) +
                                 " is out of range: from 1 to " + std::to_string(kMaxConns));
      }
      c.length = d.has_conns() ? std::clamp<int64_t>(d.conns(), 1, kMaxConns) : 0;
      c.count = 0;
      peer_fed(d, n, c);
      return;
    }
    if (file) {
      // The file gives the times: nothing else may.
      for (const char* f : {"ns", "duration", "poisson", "start_ns", "start", "stagger_ns", "stagger"}) {
        const FieldDescriptor* fd = ConnDecl::descriptor()->FindFieldByName(f);
        if (d.GetReflection()->HasField(d, fd)) {
          error(n.at(f), std::string(f) + " is for generated arrivals: with arrivals, the file gives the times");
        }
      }
    } else {
      Instr gap;
      amount(d, n, gap);
      if (d.interval_case() != ConnDecl::INTERVAL_NOT_SET && gap.ns == 0) {  // amount reports a missing one
        error(n.at(d.has_ns() ? "ns" : "duration"), "a connection's interval between requests must be positive");
      }
      c.interval = gap.ns;
    }
    if ((!file || d.count() != 0) && (d.count() < 1 || d.count() > kMaxConnRequests)) {
      error(n.at("count"), "a connection's request count " + std::to_string(d.count()) +
                               " is out of range: from 1 to " + std::to_string(kMaxConnRequests));
    }
    c.count = std::clamp<int64_t>(d.count(), 1, kMaxConnRequests);
    if (d.has_conns()) {
      if (d.conns() < 1 || d.conns() > kMaxConns) {
        error(n.at("conns"), "a connection array's length " + std::to_string(d.conns()) +
                                 " is out of range: from 1 to " + std::to_string(kMaxConns));
      }
      c.length = std::clamp<int64_t>(d.conns(), 1, kMaxConns);
    }
    if (d.has_burst()) {
      if (d.burst() < 1 || d.burst() > kMaxConnRequests) {
        error(n.at("burst"), "burst " + std::to_string(d.burst()) + " is out of range: from 1 to " +
                                 std::to_string(kMaxConnRequests) + " requests arriving together");
      }
      c.burst = std::clamp<int64_t>(d.burst(), 1, kMaxConnRequests);
    }
    c.start = optional_time(d, n, "start_ns", "start", -1);
    c.stagger = optional_time(d, n, "stagger_ns", "stagger", 0);
    if (d.shift_case() != ConnDecl::SHIFT_NOT_SET) {
      const std::string field = d.has_stagger_ns() ? "stagger_ns" : "stagger";
      if (c.length == 0) {
        error(n.at(field), "stagger spaces the connections of an array (conns): a single connection has none");
      } else if (c.stagger > 0 && c.length - 1 > kMaxDurationNs / c.stagger) {
        error(n.at(field), "the array's last connection would begin " + std::to_string(c.length - 1) + " staggers of " +
                               std::to_string(c.stagger) + "ns after its first: at most " +
                               std::to_string(kMaxDurationNs) + "ns");
      }
    }
    int64_t requests = std::max<int64_t>(c.length, 1) * c.count;
    if (file) requests = arrival_file(d, n, c);
    if (requests_total_ <= kMaxConnRequests && requests_total_ + requests > kMaxConnRequests) {
      error(n.at(file ? "arrivals" : "count"), "more than " + std::to_string(kMaxConnRequests) +
                                                   " requests on all connections together (count times conns, over "
                                                   "every conn)");
    }
    requests_total_ += requests;
    peer_fed(d, n, c);
  }

  // What every connection has, generated, dialled or fed by a dial: its send side, and its place
  // among all the connections of the file.
  void peer_fed(const ConnDecl& d, const Node& n, Conn& c) {
    const size_t before = errors_.size();
    c.write_service = optional_time(d, n, "write_service_ns", "write_service", 0);
    if (d.send_case() != ConnDecl::SEND_NOT_SET && c.write_service == 0 && errors_.size() == before) {
      error(n.at(d.has_write_service_ns() ? "write_service_ns" : "write_service"),
            "a write_service must be positive (leave it out for answers that leave as they are written)");
    }
    if (d.has_send_buffer()) {
      if (d.send_buffer() < 1 || d.send_buffer() > kMaxSendBuffer) {
        error(n.at("send_buffer"), "send_buffer " + std::to_string(d.send_buffer()) + " is out of range: from 1 to " +
                                       std::to_string(kMaxSendBuffer) + " answers");
      } else if (d.send_case() == ConnDecl::SEND_NOT_SET) {
        error(n.at("send_buffer"), "send_buffer needs a write_service: without one, answers leave as they are written");
      }
      c.send_buffer = std::clamp<int64_t>(d.send_buffer(), 1, kMaxSendBuffer);
    }
    const int64_t conns = std::max<int64_t>(c.length, 1);
    if (conns_total_ <= kMaxConns && conns_total_ + conns > kMaxConns) {
      error(n.at(d.has_conns() ? "conns" : "name"), "more than " + std::to_string(kMaxConns) +
                                                        " connections in all declarations together");
    }
    conns_total_ += conns;
    out_.conns.push_back(std::move(c));
  }

  // Reads c's arrival file into c.times and c.first; returns the requests it gives c. Problems with
  // the file as a whole are the field's; a bad line is the file's, at its own line and column.
  int64_t arrival_file(const ConnDecl& d, const Node& n, Conn& c) {
    const Pos at = n.at("arrivals");
    if (!options_.arrival_files) {
      error(at, "arrival files are not read here (the loader was told to read no files)");
      return 0;
    }
    std::filesystem::path path(d.arrivals());
    if (path.is_relative()) path = std::filesystem::path(out_.source).parent_path() / path;
    const int64_t conns = std::max<int64_t>(c.length, 1);
    const int64_t budget = std::max<int64_t>(kMaxConnRequests - requests_total_, 0) / c.burst;
    ArrivalTimes t = read_arrivals(path.string(), conns, c.length > 0, budget);
    if (!t.unreadable.empty()) {
      error(at, "arrivals " + quote(path.string()) + " " + t.unreadable);
      return 0;
    }
    if (!t.errors.empty()) {
      for (Diagnostic& e : t.errors) errors_.push_back(std::move(e));
      return 0;
    }
    if (t.times.empty()) {
      error(at, "arrivals " + quote(path.string()) + " gives no arrival times");
      return 0;
    }
    c.times = std::move(t.times);
    c.first = std::move(t.first);
    for (int64_t e = 0; e < conns && d.count() != 0; e++) {
      if (c.requests(e) != d.count()) {
        error(n.at("count"), "count " + std::to_string(d.count()) + " does not match the arrival file, which gives " +
                                 (c.length > 0 ? "connection " + std::to_string(e) : std::string("the connection")) +
                                 " " + std::to_string(c.requests(e)) + " requests");
        break;
      }
    }
    return static_cast<int64_t>(c.times.size()) * c.burst;
  }

  // A listener and the connection array it accepts; a connection has at most one listener.
  void listener(const ListenerDecl& d, const Node& n) {
    Listener l{.name = d.name(), .poisson = d.poisson()};
    l.conn = resolve(conns_, d.conn(), n, "conn", "connection");
    if (context_.dialled_listeners.contains(d.name())) {
      // Its connections connect when the other process dials them, as the run starts.
      for (const char* f : {"ns", "duration", "poisson", "start_ns", "start"}) {
        const FieldDescriptor* fd = ListenerDecl::descriptor()->FindFieldByName(f);
        if (d.GetReflection()->HasField(d, fd)) {
          error(n.at(f), std::string(f) + " times a listener's connections: this one is dialled by another "
                                          "process, whose connections connect as the run starts");
        }
      }
    } else {
      Instr gap;
      amount(d, n, gap);
      if (d.interval_case() != ListenerDecl::INTERVAL_NOT_SET && gap.ns == 0) {
        error(n.at(d.has_ns() ? "ns" : "duration"), "a listener's interval between connections must be positive");
      }
      l.interval = gap.ns;
      l.start = optional_time(d, n, "start_ns", "start", -1);
    }
    const auto id = static_cast<int32_t>(out_.listeners.size());
    if (l.conn >= 0) {
      Conn& c = out_.conns[static_cast<size_t>(l.conn)];
      if (dial_conns_.contains(c.name)) {
        error(n.at("conn"), "connection " + quote(c.name) +
                                " dials another process's listener: its other end is accepted there, not here");
      } else if (c.listener >= 0) {
        error(n.at("conn"), "connection " + quote(c.name) + " already has a listener, " +
                                quote(out_.listeners[static_cast<size_t>(c.listener)].name));
      } else if (c.stagger > 0) {
        error(n.at("conn"), "connection array " + quote(c.name) +
                                " has a stagger: a listener's connections begin when they connect");
      } else {
        c.listener = id;
      }
    }
    out_.listeners.push_back(std::move(l));
  }

  // Where a failing read or write goes: past the innermost loop around it (-1: on, when none).
  void break_on_error(int32_t at) {
    auto& open = e_->open;
    auto loop = std::find_if(open.rbegin(), open.rend(), [](const Emitter::Open& o) { return o.loop >= 0; });
    if (loop != open.rend()) loop->breaks.push_back(at);
  }

  // A time given either as integer ns (field ns_field) or as a duration string (text_field), both
  // optional: its ns, or `absent` when neither is given. Negative, malformed or too long ones are
  // reported at their field.
  int64_t optional_time(const Message& m, const Node& n, const char* ns_field, const char* text_field,
                        int64_t absent) {
    const auto* type = m.GetDescriptor();
    const auto* reflection = m.GetReflection();
    int64_t ns = absent;
    if (const FieldDescriptor* f = type->FindFieldByName(ns_field); reflection->HasField(m, f)) {
      ns = reflection->GetInt64(m, f);
      if (ns < 0) error(n.at(ns_field), std::string("negative ") + text_field + " " + std::to_string(ns) + "ns");
      duration_in_range(ns, n, ns_field);
    } else if (const FieldDescriptor* t = type->FindFieldByName(text_field); reflection->HasField(m, t)) {
      ParsedDuration d = parse_duration(reflection->GetString(m, t));
      if (!d.error.empty()) error(n.at(text_field), d.error);
      ns = d.ns;
      duration_in_range(ns, n, text_field);
    } else {
      return absent;
    }
    return std::clamp<int64_t>(ns, 0, kMaxDurationNs);
  }

  // Compiles the expression in field `field` (its k-th value, for a repeated one) of n, reading
  // the names in scope now; its id, or -1 after reporting what is wrong at the field.
  // units: literals may carry duration units (duration_expr).
  int32_t expr(const std::string& text, const Node& n, const std::string& field, int k = -1, bool units = false) {
    Expr x;
    x.text = text;
    x.field = field;
    const Pos p = n.at(field, k);
    x.line = p.line;
    x.column = p.column;
    const Emitter* e = e_;
    auto scope = [&](const std::string& name) -> std::optional<int32_t> {
      if (name == "N") return bench_func_ ? std::optional<int32_t>(kSlotN) : std::nullopt;
      for (auto it = e->scope.rbegin(); it != e->scope.rend(); ++it) {
        // A local or typed parameter holds a handle, which is no integer to compute with.
        if (it->first == name) return kind_of(*e, it->second) == ObjKind::None ? std::optional(it->second) : std::nullopt;
      }
      return std::nullopt;
    };
    auto unknown = [&](const std::string& name) {
      if (name == "N") {
        return std::string("N (b.N) is defined only with a benchmark func (benchmark { func: ... n: ... })");
      }
      for (auto it = e->scope.rbegin(); it != e->scope.rend(); ++it) {
        if (it->first == name) return quote(name) + " is a " + kind_name(kind_of(*e, it->second)) + ", not an integer";
      }
      return "unknown name " + quote(name) + ": not a parameter of " + e->fn.name +
             " nor the var of a loop around it or of an accept or receive before it";
    };
    std::string err = parse_expr(text, scope, unknown, x, units);
    if (!err.empty()) {
      error(p, field + " " + quote(clip(text)) + ": " + err);
      return -1;
    }
    out_.exprs.push_back(std::move(x));
    return static_cast<int32_t>(out_.exprs.size() - 1);
  }

  // A new variable's name: an identifier that hides nothing else in scope (and is not N).
  bool new_var(const std::string& name, const Node& n, const std::string& field, int k = -1) {
    const Pos p = n.at(field, k);
    if (!identifier(name)) {
      error(p, field + " " + quote(name) + " is not a name: a letter or '_', then letters, digits or '_'");
    } else if (name == "N") {
      error(p, "N is b.N, the benchmark's count: choose another name");
    } else if (std::any_of(e_->scope.begin(), e_->scope.end(), [&](const auto& v) { return v.first == name; })) {
      error(p, "duplicate variable " + quote(name) +
                   ": a parameter or a variable in scope (a loop's, an accept's, a receive's) has that name");
    } else {
      return true;
    }
    return false;
  }

  // The name of a local or typed parameter: a new variable's name that is not a declared channel,
  // mutex or waitgroup's either (it would hide it).
  bool new_object(const std::string& name, const Node& n, const std::string& field, int k = -1) {
    for (const auto& [table, what] : {std::pair{&chans_, "channel"}, {&mutexes_, "mutex"}, {&waitgroups_, "waitgroup"}}) {
      if (auto it = table->find(name); it != table->end()) {
        error(n.at(field, k), quote(name) + " would hide the " + what + " declared at " + str(it->second.pos) +
                                  ": choose another name");
        return false;
      }
    }
    if (std::any_of(e_->scope.begin(), e_->scope.end(), [&](const auto& v) { return v.first == name; })) {
      error(n.at(field, k), "duplicate name " + quote(name) + ": a parameter, a loop's var or a local in scope has it");
      return false;
    }
    return new_var(name, n, field, k);
  }

  // The function's parameters: slots 0 .. params-1, each an int64 or, typed, an object's handle.
  void params(const FuncDecl& f, const Node& n, Emitter& e) {
    Emitter* outer = std::exchange(e_, &e);
    if (f.param_size() > kMaxParams) {
      error(n.at("param", kMaxParams), "too many parameters: at most " + std::to_string(kMaxParams));
    }
    const int num = std::min(f.param_size(), kMaxParams);
    e.fn.param_kinds.assign(static_cast<size_t>(num), ObjKind::None);
    e.kinds.assign(static_cast<size_t>(num), ObjKind::None);
    for (int k = 0; k < num; k++) {
      // A refused name still takes its slot, so that the arguments still line up.
      const auto [name, kind] = split_param(f.param(k));
      if (!kind) {
        error(n.at("param", k), "parameter " + quote(f.param(k)) + ": write \"name\" (an int64), \"name chan\", "
                                "\"name waitgroup\" or \"name mutex\"");
        continue;
      }
      if (*kind == ObjKind::None ? new_var(name, n, "param", k) : new_object(name, n, "param", k)) {
        e.scope.emplace_back(name, k);
      }
      e.fn.param_kinds[static_cast<size_t>(k)] = e.kinds[static_cast<size_t>(k)] = *kind;
    }
    e.fn.num_params = num;
    e.fn.num_vars = e.fn.num_params;
    e_ = outer;
  }

  // A go statement's argument for a parameter that takes an object: an expression that gives the
  // callee the handle, a local's or typed parameter's slot, or a declared single object's -1-id.
  int32_t object_arg(const std::string& name, ObjKind want, int32_t f, int k, const Node& n) {
    const Pos p = n.at("arg", k);
    const std::string param = "parameter " + std::to_string(k + 1) + " of " + out_.funcs[static_cast<size_t>(f)].name +
                              " takes a " + kind_name(want);
    Expr x;
    x.text = name;
    x.field = "arg";
    x.line = p.line;
    x.column = p.column;
    x.depth = 1;
    const Table* tables[] = {&chans_, &waitgroups_, &mutexes_};  // ObjKind's order, from Chan
    if (const auto s = scoped_object(name)) {
      if (s->second != want) {
        error(p, quote(name) + " is a " + kind_name(s->second) + ": " + param);
        return -1;
      }
      x.code.push_back({ExprOp::Var, s->first, 0});
    } else {
      const Table& table = *tables[static_cast<int>(want) - 1];
      auto it = table.find(name);
      if (it == table.end()) {
        for (ObjKind other : {ObjKind::Chan, ObjKind::WaitGroup, ObjKind::Mutex}) {
          if (tables[static_cast<int>(other) - 1]->contains(name)) {
            error(p, quote(name) + " is a " + kind_name(other) + ": " + param);
            return -1;
          }
        }
        const bool is_int = std::any_of(e_->scope.begin(), e_->scope.end(), [&](const auto& v) { return v.first == name; });
        error(p, (is_int ? quote(name) + " is an integer" : "unknown " + std::string(kind_name(want)) + " " + quote(name)) +
                     ": " + param + " (a declared one, a local in scope, or a parameter of that kind)");
        return -1;
      }
      const auto id = static_cast<size_t>(it->second.id);
      const int64_t length = want == ObjKind::Chan        ? out_.chans[id].length
                             : want == ObjKind::WaitGroup ? out_.waitgroups[id].length
                                                          : out_.mutexes[id].length;
      if (length > 0) {
        error(p, quote(name) + " is an array of " + std::to_string(length) + ": " + param + ", a single one");
        return -1;
      }
      x.code.push_back({ExprOp::Const, -1, -1 - static_cast<int64_t>(id)});
    }
    out_.exprs.push_back(std::move(x));
    return static_cast<int32_t>(out_.exprs.size() - 1);
  }

  // A call's arguments (go, after_func): evaluated by the caller, one per parameter of funcs[f].
  void call(Instr& in, const RepeatedPtrField<std::string>& args, int32_t f, const Node& n) {
    in.first_arg = static_cast<int32_t>(e_->fn.args.size());
    in.num_args = args.size();
    for (int k = 0; k < args.size(); k++) {
      const std::vector<ObjKind>* kinds = f >= 0 ? &declared_kinds_[static_cast<size_t>(f)] : nullptr;
      const ObjKind want = kinds != nullptr && k < static_cast<int>(kinds->size()) ? (*kinds)[static_cast<size_t>(k)]
                                                                                  : ObjKind::None;
      e_->fn.args.push_back(want == ObjKind::None ? expr(args[k], n, "arg", k) : object_arg(args[k], want, f, k, n));
    }
    if (f < 0) return;
    const int32_t want = declared_params_[static_cast<size_t>(f)];
    if (args.size() != want) {
      error(args.size() > 0 ? n.at("arg", 0) : n.at("func"),
            out_.funcs[static_cast<size_t>(f)].name + " takes " + std::to_string(want) + " argument" +
                (want == 1 ? "" : "s") + ", given " + std::to_string(args.size()));
    }
  }

  int64_t count(bool present, int64_t value, const Node& n, const std::string& field,
                int64_t max = kMaxCount, const char* why = "") {
    if (!present) {
      error(n.self(), n.name() + " needs " + field);
    } else if (value < 0) {
      error(n.at(field), "negative " + field + " " + std::to_string(value));
    } else if (value > max) {
      error(n.at(field), field + " " + std::to_string(value) + " is too large: at most " + std::to_string(max) + why);
    }
    return value;
  }

  // A duration within [0, kMaxDurationNs], reported at `field` otherwise.
  void duration_in_range(int64_t ns, const Node& n, const std::string& field) {
    if (ns > kMaxDurationNs) {
      error(n.at(field), "duration " + std::to_string(ns) + "ns is too long: at most " +
                             std::to_string(kMaxDurationNs) + "ns (1,000,000 s, about 11.6 days)");
    }
  }

  // The time of compute, sleep, syscall and busy_poll: one of ns, duration or, where the message
  // has it, iterations (a oneof, so protobuf already rejects two of them).
  void amount(const Message& m, const Node& n, Instr& in) {
    const auto* type = m.GetDescriptor();
    const auto* reflection = m.GetReflection();
    auto given = [&](const char* name) -> const FieldDescriptor* {
      const FieldDescriptor* f = type->FindFieldByName(name);
      return f != nullptr && reflection->HasField(m, f) ? f : nullptr;
    };
    if (const FieldDescriptor* ns = given("ns")) {
      in.ns = reflection->GetInt64(m, ns);
      if (in.ns < 0) error(n.at("ns"), "negative duration " + std::to_string(in.ns) + "ns");
      duration_in_range(in.ns, n, "ns");
    } else if (const FieldDescriptor* text = given("duration")) {
      ParsedDuration d = parse_duration(reflection->GetString(m, text));
      if (!d.error.empty()) error(n.at("duration"), d.error);
      in.ns = d.ns;
      duration_in_range(in.ns, n, "duration");
    } else if (const FieldDescriptor* iterations = given("iterations")) {
      in.iterations = count(true, reflection->GetInt64(m, iterations), n, "iterations", kMaxIterations);
    } else if (const FieldDescriptor* ns_expr = given("ns_expr")) {
      in.expr = expr(reflection->GetString(m, ns_expr), n, "ns_expr");
    } else if (const FieldDescriptor* iterations_expr = given("iterations_expr")) {
      in.expr = expr(reflection->GetString(m, iterations_expr), n, "iterations_expr");
      in.expr_iterations = true;
    } else if (const FieldDescriptor* duration_expr = given("duration_expr")) {
      in.expr = expr(reflection->GetString(m, duration_expr), n, "duration_expr", -1, true);
    } else {
      bool by_iterations = type->FindFieldByName("iterations") != nullptr;
      error(n.self(), n.name() + " needs a duration: ns or duration" +
                          (by_iterations ? " or iterations" : ""));
    }
  }

  int32_t pc() const { return static_cast<int32_t>(e_->fn.code.size()); }
  Instr& code(int32_t at) { return e_->fn.code[at]; }
  int32_t emit(Instr in, Pos p) {
    in.line = p.line;
    e_->fn.code.push_back(in);
    return pc() - 1;
  }

  // Emits the body into e, then stores e as function e.id.
  template <class Body>
  void function(Emitter& e, Body body) {
    Emitter* outer = std::exchange(e_, &e);
    body();
    for (int32_t at : e.returns) code(at).target = pc();
    out_.funcs[e.id] = std::move(e.fn);
    e_ = outer;
  }

  // An accept's var is visible in the rest of the list it is in: the list's end takes it out.
  void ops(const RepeatedPtrField<Op>& list, const Node& parent) {
    const size_t visible = e_->scope.size();
    for (int i = 0; i < list.size(); i++) op(list[i], parent.child("op", i));
    e_->scope.resize(visible);
  }

  // A send's value: its expression's id, or -1 for the default, 0.
  int32_t send_value(const SendOp& s, const Node& n) { return s.value().empty() ? -1 : expr(s.value(), n, "value"); }

  // A receive's var and ok: each one's new slot (-1 when not given), in scope from now until the
  // enclosing list ends. The two must differ.
  void recv_binds(const RecvOp& r, const Node& n, int32_t& bind, int32_t& bind_ok) {
    bind = bind_ok = -1;
    if (!r.var().empty() && new_var(r.var(), n, "var")) bind = new_slot(r.var());
    if (r.ok().empty()) return;
    if (r.ok() == r.var()) {
      error(n.at("ok"), "ok " + quote(r.ok()) + " has the name of the receive's var: v, ok := <-ch needs two names");
    } else if (new_var(r.ok(), n, "ok")) {
      bind_ok = new_slot(r.ok());
    }
  }

  // A new variable in the next free slot after the parameters and the variables in scope; kind:
  // what its value is (an int64, or a local's handle).
  int32_t new_slot(const std::string& name, ObjKind kind = ObjKind::None) {
    const int32_t params = e_->fn.num_params;
    const auto above = [&](const auto& v) { return v.second >= params; };
    const int32_t slot = params + static_cast<int32_t>(std::count_if(e_->scope.begin(), e_->scope.end(), above));
    e_->scope.emplace_back(name, slot);
    e_->fn.num_vars = std::max(e_->fn.num_vars, slot + 1);
    if (e_->kinds.size() <= static_cast<size_t>(slot)) e_->kinds.resize(static_cast<size_t>(slot) + 1, ObjKind::None);
    e_->kinds[static_cast<size_t>(slot)] = kind;
    return slot;
  }

  // `local`: a new channel, WaitGroup or mutex each time it runs, its handle in a new variable
  // whose name is in scope for the rest of the list (as an accept's var).
  void local(const LocalOp& l, const Node& n) {
    const int given = int{!l.chan().empty()} + int{!l.waitgroup().empty()} + int{!l.mutex().empty()};
    if (given != 1) {
      error(n.self(), given == 0 ? "local needs the name of what it makes: chan, waitgroup or mutex"
                                 : "local makes one object: chan, waitgroup or mutex, not two");
      return;
    }
    const ObjKind kind = !l.chan().empty() ? ObjKind::Chan : !l.waitgroup().empty() ? ObjKind::WaitGroup : ObjKind::Mutex;
    const std::string field = kind == ObjKind::Chan ? "chan" : kind == ObjKind::WaitGroup ? "waitgroup" : "mutex";
    const std::string& name = kind == ObjKind::Chan ? l.chan() : kind == ObjKind::WaitGroup ? l.waitgroup() : l.mutex();
    Instr in{.op = Opcode::Local};
    in.local_kind = kind;
    if (kind == ObjKind::Chan) {
      // Read before the name is in scope: a local's capacity cannot name the local itself.
      in.expr = literal_or_expr(l.has_cap(), l.cap(), l.cap_expr(), n, "cap", false, 0, kMaxLocalChanCap,
                                " elements", in.count);
    } else if (l.has_cap() || !l.cap_expr().empty()) {
      error(n.at(l.has_cap() ? "cap" : "cap_expr"), "cap is a channel's buffer: a " + field + " has none");
    }
    // The name's position, for the panic of a run that makes too many locals.
    Expr site;
    site.text = name;
    site.field = "local " + field;
    const Pos p = n.at(field);
    site.line = p.line;
    site.column = p.column;
    site.code.push_back({ExprOp::Const, -1, 0});
    site.depth = 1;
    out_.exprs.push_back(std::move(site));
    in.index = static_cast<int32_t>(out_.exprs.size() - 1);
    if (new_object(name, n, field)) in.var = new_slot(name, kind);
    emit(in, n.self());
  }

  // Opens a loop or select for break; closes it once body() has emitted it, patching its breaks.
  template <class Body>
  void breakable(int32_t loop, Body body) {
    e_->open.push_back({loop, {}});
    body();
    for (int32_t at : e_->open.back().breaks) code(at).target = pc();
    e_->open.pop_back();
  }

  // Runs body() for a loop, select or parallel one level deeper; past kMaxNesting levels reports
  // the construct instead, so the compiler's recursion stays bounded.
  template <class Body>
  bool nested(const Node& n, Body body) {
    if (nesting_ >= kMaxNesting) {
      error(n.self(), too_deep_message());
      return false;
    }
    nesting_++;
    body();
    nesting_--;
    return true;
  }

  void op(const Op& o, const Node& at) {
    if (o.kind_case() == Op::KIND_NOT_SET) {
      error(at.self(), "empty op: it needs one operation, such as compute or send");
      return;
    }
    // The operation's own message; kind_case() is its field number.
    Node n = at.child(Op::descriptor()->FindFieldByNumber(o.kind_case())->name());
    switch (o.kind_case()) {
      case Op::kCompute: {
        Instr in{.op = Opcode::Compute, .cgo = o.compute().cgo()};
        amount(o.compute(), n, in);
        in.memory_share = o.compute().memory_share();
        if (!(in.memory_share >= 0 && in.memory_share <= 1)) {  // NaN fails both
          std::ostringstream v;
          v << in.memory_share;
          error(n.at("memory_share"), "memory_share " + v.str() + " is out of range: between 0 and 1");
        }
        emit(in, n.self());
        return;
      }
      case Op::kGo: {
        const int32_t f = resolve(funcs_, o.go().func(), n, "func", "function");
        Instr in{.op = Opcode::Go, .obj = f, .spawn = spawn(o.go().name(), f, n)};
        call(in, o.go().arg(), f, n);
        emit(in, n.self());
        return;
      }
      case Op::kExit: emit({.op = Opcode::Exit}, n.self()); return;
      case Op::kReturn: e_->returns.push_back(emit({.op = Opcode::Jump}, n.self())); return;
      case Op::kLoop: nested(n, [&] { loop(o.loop(), n); }); return;
      case Op::kBreak: brk(o.break_(), n); return;
      case Op::kGosched: emit({.op = Opcode::Gosched}, n.self()); return;
      case Op::kReadMemStats: emit({.op = Opcode::ReadMemStats}, n.self()); return;
      case Op::kSend: {
        const ChanRef c = chan_ref(o.send().chan(), o.send().index(), n);
        emit({.op = Opcode::Send, .obj = c.id, .index = c.index, .value = send_value(o.send(), n), .handle = c.handle},
             n.self());
        return;
      }
      case Op::kRecv: {
        const ChanRef c = chan_ref(o.recv().chan(), o.recv().index(), n);
        Instr in{.op = Opcode::Recv, .obj = c.id, .index = c.index, .handle = c.handle};
        recv_binds(o.recv(), n, in.bind, in.bind_ok);  // in scope for the rest of the list
        emit(in, n.self());
        return;
      }
      case Op::kClose: {
        if (!o.close().conn().empty()) {
          if (!o.close().chan().empty()) error(n.at("conn"), "close takes chan or conn, not both");
          const ChanRef c = conn_ref(o.close().conn(), o.close().index(), n);
          emit({.op = Opcode::CloseConn, .obj = c.id, .index = c.index}, n.self());
          return;
        }
        const ChanRef c = chan_ref(o.close().chan(), o.close().index(), n);
        emit({.op = Opcode::Close, .obj = c.id, .index = c.index, .handle = c.handle}, n.self());
        return;
      }
      case Op::kSelect: nested(n, [&] { select(o.select(), n); }); return;
      case Op::kLock: {
        const ChanRef m = sync_ref(mutexes_, o.lock().mutex(), o.lock().index(), ObjKind::Mutex, n, "mutex");
        emit({.op = Opcode::Lock, .obj = m.id, .index = m.index, .handle = m.handle}, n.self());
        return;
      }
      case Op::kUnlock: {
        const ChanRef m = sync_ref(mutexes_, o.unlock().mutex(), o.unlock().index(), ObjKind::Mutex, n, "mutex");
        emit({.op = Opcode::Unlock, .obj = m.id, .index = m.index, .handle = m.handle}, n.self());
        return;
      }
      case Op::kAdd: {
        const ChanRef w = sync_ref(waitgroups_, o.add().wg(), o.add().index(), ObjKind::WaitGroup, n, "wg");
        Instr in{.op = Opcode::WgAdd, .obj = w.id, .index = w.index, .handle = w.handle};
        if (!o.add().n_expr().empty()) {
          if (o.add().has_n()) error(n.at("n_expr"), "add takes n or n_expr, not both");
          in.expr = expr(o.add().n_expr(), n, "n_expr");
        } else {
          in.count = count(o.add().has_n(), o.add().n(), n, "n", INT32_MAX, " (Go's WaitGroup counter is an int32)");
        }
        emit(in, n.self());
        return;
      }
      case Op::kAtomicAdd: {
        Instr in{.op = Opcode::AtomicAdd, .obj = resolve(vars_, o.atomic_add().var(), n, "var", "variable")};
        in.count = o.atomic_add().has_n() ? o.atomic_add().n() : 1;  // any int64: Go's adds wrap
        emit(in, n.self());
        return;
      }
      case Op::kRead: {
        const ChanRef c = conn_ref(o.read().conn(), o.read().index(), n);
        break_on_error(emit({.op = Opcode::Read, .obj = c.id, .index = c.index}, n.self()));
        return;
      }
      case Op::kWrite: {
        const ChanRef c = conn_ref(o.write().conn(), o.write().index(), n);
        break_on_error(emit({.op = Opcode::Write, .obj = c.id, .index = c.index}, n.self()));
        return;
      }
      case Op::kAccept: {
        Instr in{.op = Opcode::Accept,
                 .obj = resolve(listeners_, o.accept().listener(), n, "listener", "listener")};
        if (!o.accept().var().empty() && new_var(o.accept().var(), n, "var")) in.var = new_slot(o.accept().var());
        emit(in, n.self());
        return;
      }
      case Op::kDone: {
        const ChanRef w = sync_ref(waitgroups_, o.done().wg(), o.done().index(), ObjKind::WaitGroup, n, "wg");
        emit({.op = Opcode::WgDone, .obj = w.id, .index = w.index, .handle = w.handle}, n.self());
        return;
      }
      case Op::kWait: {
        const ChanRef w = sync_ref(waitgroups_, o.wait().wg(), o.wait().index(), ObjKind::WaitGroup, n, "wg");
        emit({.op = Opcode::WgWait, .obj = w.id, .index = w.index, .handle = w.handle}, n.self());
        return;
      }
      case Op::kSleep: {
        Instr in{.op = Opcode::Sleep};
        amount(o.sleep(), n, in);
        emit(in, n.self());
        return;
      }
      case Op::kAfterFunc: {
        const int32_t f = resolve(funcs_, o.after_func().func(), n, "func", "function");
        Instr in{.op = Opcode::AfterFunc, .obj = f, .spawn = spawn(o.after_func().name(), f, n)};
        amount(o.after_func(), n, in);
        call(in, o.after_func().arg(), f, n);
        emit(in, n.self());
        return;
      }
      case Op::kSyscall: {
        Instr in{.op = Opcode::Syscall, .on_cpu = o.syscall().on_cpu(), .nanosleep = o.syscall().nanosleep()};
        if (in.on_cpu && in.nanosleep) error(n.at("nanosleep"), "a system call is on_cpu or nanosleep, not both");
        amount(o.syscall(), n, in);
        emit(in, n.self());
        return;
      }
      case Op::kBusyPoll: busy_poll(o.busy_poll(), n); return;
      case Op::kLockOsThread: emit({.op = Opcode::LockOSThread}, n.self()); return;
      case Op::kUnlockOsThread: emit({.op = Opcode::UnlockOSThread}, n.self()); return;
      case Op::kParallel: nested(n, [&] { parallel(o.parallel(), n); }); return;
      case Op::kSubmit:
        emit({.op = Opcode::Submit, .device = device(o.submit().device(), n)}, n.self());
        return;
      case Op::kAlloc: alloc(o.alloc(), n); return;
      case Op::kRelease: {
        Instr in{.op = Opcode::Release};
        const ReleaseOp& r = o.release();
        in.bytes_expr = literal_or_expr(r.has_bytes(), r.bytes(), r.bytes_expr(), n, "bytes", true, 0, kMaxAllocBytes,
                                        " (1 TiB)", in.bytes);
        emit(in, n.self());
        return;
      }
      case Op::kGc: emit({.op = Opcode::GC}, n.self()); return;
      case Op::kGomaxprocs: {
        Instr in{.op = Opcode::Gomaxprocs};
        const GomaxprocsOp& g = o.gomaxprocs();
        in.bytes_expr = literal_or_expr(g.has_n(), g.n(), g.n_expr(), n, "n", true, 0, kMaxProcs, " (GOMAXPROCS)", in.bytes);
        emit(in, n.self());
        return;
      }
      case Op::kResetTimer:
        if (!bench_func_) {
          error(n.self(), "reset_timer is b.ResetTimer: it needs a benchmark func (benchmark { func: ... })");
        }
        emit({.op = Opcode::ResetTimer}, n.self());
        return;
      case Op::kLocal: local(o.local(), n); return;
      case Op::KIND_NOT_SET: return;
    }
  }

  // A value given as a literal (field `field`, present or not) or as an expression (field
  // `field`_expr): the literal, checked to lie in [lo, hi] (`unit` says hi in words), goes to
  // `value`; the expression's id is returned (-1 for a literal). Neither given: an error when the
  // value is required, else `value` keeps its default.
  int32_t literal_or_expr(bool present, int64_t literal, const std::string& text, const Node& n,
                          const std::string& field, bool required, int64_t lo, int64_t hi, const char* unit,
                          int64_t& value) {
    const std::string expr_field = field + "_expr";
    if (!text.empty()) {
      if (present) error(n.at(expr_field), n.name() + " takes " + field + " or " + expr_field + ", not both");
      return expr(text, n, expr_field);
    }
    if (!present) {
      if (required) error(n.self(), n.name() + " needs " + field + " (or " + expr_field + ")");
      return -1;
    }
    if (literal < lo || literal > hi) {
      error(n.at(field), field + " " + std::to_string(literal) + " is out of range: from " + std::to_string(lo) +
                             " to " + std::to_string(hi) + unit);
    }
    value = std::clamp(literal, lo, hi);
    return -1;
  }

  // count objects of bytes each: bytes is required, count defaults to 1, and when both are
  // literals their product is bounded here (with expressions, when the alloc runs).
  void alloc(const AllocOp& a, const Node& n) {
    Instr in{.op = Opcode::Alloc, .retain = a.retain(), .count = 1};
    in.bytes_expr = literal_or_expr(a.has_bytes(), a.bytes(), a.bytes_expr(), n, "bytes", true, 1, kMaxObjectBytes,
                                    " (1 GiB) bytes per object", in.bytes);
    in.expr = literal_or_expr(a.has_count(), a.count(), a.count_expr(), n, "count", false, 0, kMaxAllocCount,
                              " (2^40) objects", in.count);
    const bool literals_in_range = in.bytes_expr < 0 && in.expr < 0 && a.has_bytes() && a.has_count() &&
                                   a.bytes() == in.bytes && a.count() == in.count;  // not clamped
    if (literals_in_range && in.count > kMaxAllocBytes / in.bytes) {
      error(n.at("count"), "count " + std::to_string(in.count) + " objects of " + std::to_string(in.bytes) +
                               " bytes is more than " + std::to_string(kMaxAllocBytes) + " bytes (1 TiB) in one alloc");
    }
    emit(in, n.self());
  }

  int32_t device(const std::string& name, const Node& n, const std::string& field = "device") {
    return resolve(devices_, name, n, field, "device");
  }

  // A go statement's name: a new spawn id, or -1 when it has none.
  int32_t spawn(const std::string& name, int32_t func, const Node& n) {
    if (name.empty()) return -1;
    auto id = static_cast<int32_t>(out_.spawns.size());
    if (auto [it, fresh] = spawns_.try_emplace(name, Declared{id, n.at("name")}); !fresh) {
      error(n.at("name"), "duplicate goroutine name " + quote(name) + " (first given at " +
                              str(it->second.pos) + ")");
      return -1;
    }
    out_.spawns.push_back({name, func});
    return id;
  }

  // A loop; its name is unique within the declared function (with its parallel bodies).
  int32_t new_loop(const std::string& name, const Node& n, LoopKind kind) {
    auto id = static_cast<int32_t>(out_.loops.size());
    if (!name.empty()) {
      Table& names = loop_names_[static_cast<size_t>(e_->root)];
      if (auto [it, fresh] = names.try_emplace(name, Declared{id, n.at("name")}); !fresh) {
        error(n.at("name"), "duplicate loop name " + quote(name) + " (first declared at " +
                                str(it->second.pos) + ")");
      }
    }
    out_.loops.push_back({name, kind, e_->id, pc(), -1});
    return id;
  }

  void loop(const LoopOp& l, const Node& n) {
    LoopKind kind = l.repeat_case() == LoopOp::kRange     ? LoopKind::Range
                    : l.repeat_case() == LoopOp::kForever ? LoopKind::Forever
                                                          : LoopKind::Count;
    int32_t id = new_loop(l.name(), n, kind);
    int32_t top = pc();
    const bool counted = l.repeat_case() == LoopOp::kCount || l.repeat_case() == LoopOp::kCountExpr;
    if (!l.var().empty() && !counted && l.repeat_case() != LoopOp::kRange) {
      error(n.at("var"), "var is the index of a counted loop (count or count_expr) or the value of a range loop");
    }
    if (!l.index().empty() && l.repeat_case() != LoopOp::kRange) {
      error(n.at("index"), "index is the element of the channel array a range loop receives from");
    }
    breakable(id, [&] {
      switch (l.repeat_case()) {
        case LoopOp::kCount:
        case LoopOp::kCountExpr: {
          int32_t slot = e_->depth++;
          e_->fn.num_counters = std::max(e_->fn.num_counters, e_->depth);
          Instr start{.op = Opcode::LoopStart, .obj = slot, .loop = id};
          if (l.repeat_case() == LoopOp::kCountExpr) {
            start.expr = expr(l.count_expr(), n, "count_expr");  // read outside the loop's own var
          } else {
            start.count = count(true, l.count(), n, "count");
          }
          // The loop's var: the next free slot after the parameters and the enclosing loops' vars.
          const size_t visible = e_->scope.size();
          if (!l.var().empty() && new_var(l.var(), n, "var")) start.var = new_slot(l.var());
          emit(start, n.self());
          ops(l.op(), n);
          emit({.op = Opcode::LoopNext, .obj = slot, .loop = id, .target = top + 1, .var = start.var}, n.self());
          e_->scope.resize(visible);
          e_->depth--;
          code(top).target = pc();
          return;
        }
        case LoopOp::kRange: {
          const ChanRef c = chan_ref(l.range(), l.index(), n, "range");
          Instr in{.op = Opcode::RangeRecv, .obj = c.id, .index = c.index, .handle = c.handle};
          // for v := range ch: v is the value received, in the body only.
          const size_t visible = e_->scope.size();
          if (!l.var().empty() && new_var(l.var(), n, "var")) in.bind = new_slot(l.var());
          emit(in, n.self());
          ops(l.op(), n);
          e_->scope.resize(visible);
          emit({.op = Opcode::Jump, .target = top}, n.self());
          code(top).target = pc();
          return;
        }
        case LoopOp::kForever:
          if (!l.forever())
            error(n.at("forever"), "forever must be true (a counted loop takes count)");
          if (l.op_size() == 0) error(n.self(), "an empty forever loop spins without time passing");
          ops(l.op(), n);
          emit({.op = Opcode::Jump, .target = top}, n.self());
          return;
        case LoopOp::REPEAT_NOT_SET:
          error(n.self(), "loop needs count, range or forever");
          ops(l.op(), n);
          return;
      }
    });
    out_.loops[id].end = pc();
  }

  void brk(const BreakOp& b, const Node& n) {
    auto& open = e_->open;
    auto target = std::find_if(open.rbegin(), open.rend(), [&](const Emitter::Open& o) {
      return b.loop().empty() || (o.loop >= 0 && out_.loops[o.loop].name == b.loop());
    });
    if (target == open.rend()) {
      if (b.loop().empty()) {
        error(n.self(), "break outside a loop or select");
      } else {
        error(n.at("loop"), "break: no enclosing loop named " + quote(b.loop()));
      }
      return;
    }
    target->breaks.push_back(emit({.op = Opcode::Jump}, n.self()));
  }

  void select(const SelectOp& s, const Node& n) {
    auto first = static_cast<int32_t>(e_->fn.cases.size());
    e_->fn.cases.resize(first + s.case__size());  // nested selects append after these
    int32_t at = emit({.op = Opcode::Select,
                       .has_default = s.has_default_(),
                       .first_case = first,
                       .num_cases = s.case__size()},
                      n.self());
    breakable(-1, [&] {
      for (int i = 0; i < s.case__size(); i++) {
        const SelectOp::Case& c = s.case_(i);
        Node cn = n.child("case", i);
        SelectCase sc;
        // A receive case's var and ok are in scope in its body only.
        const size_t visible = e_->scope.size();
        switch (c.comm_case()) {
          case SelectOp::Case::kSend: {
            const ChanRef r = chan_ref(c.send().chan(), c.send().index(), cn.child("send"));
            sc = {true, r.id, -1, r.index};
            sc.value = send_value(c.send(), cn.child("send"));
            sc.handle = r.handle;
            break;
          }
          case SelectOp::Case::kRecv: {
            const ChanRef r = chan_ref(c.recv().chan(), c.recv().index(), cn.child("recv"));
            sc = {false, r.id, -1, r.index};
            recv_binds(c.recv(), cn.child("recv"), sc.bind, sc.bind_ok);
            sc.handle = r.handle;
            break;
          }
          case SelectOp::Case::COMM_NOT_SET:
            error(cn.self(), "select case needs send or recv");
            break;
        }
        sc.target = pc();
        e_->fn.cases[first + i] = sc;
        ops(c.op(), cn);
        e_->scope.resize(visible);
        e_->open.back().breaks.push_back(emit({.op = Opcode::Jump}, cn.self()));
      }
      if (s.has_default_()) {
        code(at).target = pc();
        ops(s.default_().op(), n.child("default"));
      }
    });
  }

  void busy_poll(const BusyPollOp& b, const Node& n) {
    Instr in{.op = Opcode::BusyPoll, .cgo = b.cgo(), .safe_point = b.safe_point(), .count = -1};
    amount(b, n, in);
    if (!b.until_recv().empty()) {
      const ChanRef c = chan_ref(b.until_recv(), b.index(), n, "until_recv");
      in.obj = c.id;
      in.index = c.index;
      in.handle = c.handle;
    } else if (!b.index().empty()) {
      error(n.at("index"), "index is the element of until_recv's channel array");
    }
    if (!b.until_complete().empty()) in.device = device(b.until_complete(), n, "until_complete");
    if (b.has_count()) in.count = count(true, b.count(), n, "count");
    if (!b.until_recv().empty() && !b.until_complete().empty())
      error(n.at("until_complete"), "busy_poll waits for until_recv or until_complete, not both");
    if (b.until_recv().empty() && b.until_complete().empty() && !b.has_count())
      error(n.self(), "busy_poll needs until_recv, until_complete or count to end");
    emit(in, n.self());
  }

  // The body becomes a function of its own, named like Go names closures (main.func1):
  //   0: ParallelNext (past the end when the iterations are used up); body; Jump 0.
  void parallel(const ParallelOp& p, const Node& n) {
    int32_t id = new_loop(p.name(), n, LoopKind::Parallel);
    Emitter body;
    body.id = static_cast<int32_t>(out_.funcs.size());
    body.root = e_->root;
    body.fn.name = e_->fn.name + ".func" + std::to_string(++e_->closures);
    // The body reads the variables in scope as a closure would: the caller copies its first
    // num_params slots, which hold exactly those, into each goroutine's.
    body.scope = e_->scope;
    for (const auto& v : body.scope) body.fn.num_params = std::max(body.fn.num_params, v.second + 1);
    body.fn.num_vars = body.fn.num_params;
    // Locals and typed parameters among them pass their handles, as a closure shares the objects.
    body.kinds = e_->kinds;
    body.kinds.resize(static_cast<size_t>(body.fn.num_params), ObjKind::None);
    body.fn.param_kinds = body.kinds;
    out_.funcs.emplace_back();
    Instr in{.op = Opcode::Parallel, .obj = body.id, .loop = id};
    if (!p.count_expr().empty()) {
      if (p.has_count()) error(n.at("count_expr"), "parallel takes count or count_expr, not both");
      in.expr = expr(p.count_expr(), n, "count_expr");
    } else {
      in.count = count(p.has_count(), p.count(), n, "count");
    }
    emit(in, n.self());
    out_.loops[id].end = pc();
    function(body, [&] {
      emit({.op = Opcode::ParallelNext, .loop = id}, n.self());
      ops(p.op(), n);
      emit({.op = Opcode::Jump, .target = 0}, n.self());
      code(0).target = pc();
    });
  }

  void benchmark(const BenchmarkDecl& b, const Node& n) {
    Benchmark out{b.name(), -1};
    if (b.name().empty()) {
      error(n.self(), "benchmark needs a name");
    } else if (!b.name().starts_with("Benchmark")) {
      error(n.at("name"), "a benchmark's name starts with \"Benchmark\", as in Go");
    }
    if (!b.func().empty()) {
      bench_func(b, n, out);
    } else if (b.has_n()) {
      error(n.at("n"), "n is b.N of a benchmark func: a benchmark loop's count is its b.N");
    } else if (b.loop().empty()) {
      error(n.self(), "benchmark needs the loop whose iterations are its operations (loop), or a func");
    } else {
      out.loop = bench_loop(b.loop(), n);
    }
    out_.benchmark = out;
  }

  // The loop a benchmark names: "l", when exactly one function has a loop l, or "f.l".
  int32_t bench_loop(const std::string& name, const Node& n) {
    std::vector<const Declared*> found;
    std::string where;
    for (size_t f = 0; f < loop_names_.size(); f++) {
      for (const auto& [loop, d] : loop_names_[f]) {
        if (loop != name && out_.funcs[f].name + "." + loop != name) continue;
        found.push_back(&d);
        where += (where.empty() ? "" : ", ") + out_.funcs[f].name + "." + loop + " (" + str(d.pos) + ")";
      }
    }
    if (found.empty()) {
      error(n.at("loop"), "no loop named " + quote(name));
      return -1;
    }
    if (found.size() > 1) {
      error(n.at("loop"), "ambiguous loop name " + quote(name) + ": " + where + "; write \"func.loop\"");
      return -1;
    }
    if (LoopKind k = out_.loops[found[0]->id].kind; k != LoopKind::Count && k != LoopKind::Parallel) {
      error(n.at("loop"), "benchmark loop " + quote(name) + " has no count: use a counted loop or a parallel");
      return -1;
    }
    return found[0]->id;
  }

  // A benchmark function: the synthesized main runs it in a goroutine of its own (Bench), as
  // testing's runN does, with b.N = n.
  void bench_func(const BenchmarkDecl& b, const Node& n, Benchmark& out) {
    if (!b.loop().empty()) error(n.at("loop"), "a benchmark takes loop or func, not both");
    out.func = resolve(funcs_, b.func(), n, "func", "function");
    if (out.func >= 0 && declared_params_[static_cast<size_t>(out.func)] > 0) {
      error(n.at("func"), "a benchmark func takes no parameters (b is implicit: N, reset_timer)");
    }
    if (!b.has_n()) {
      error(n.self(), "a benchmark func needs n, its b.N");
    } else if (b.n() < 1 || b.n() > kMaxBenchN) {
      error(n.at("n"), "n " + std::to_string(b.n()) + " is out of range: from 1 to " + std::to_string(kMaxBenchN));
    }
    out.n = b.n();
    if (auto it = funcs_.find("main"); it != funcs_.end()) {
      error(n.at("func"), "a benchmark func is run by the test binary's own main: declare no function \"main\" "
                          "(first declared at " + str(it->second.pos) + ")");
      return;
    }
    Emitter m;
    m.id = static_cast<int32_t>(out_.funcs.size());
    m.fn.name = "main";
    out_.funcs.emplace_back();
    function(m, [&] { emit({.op = Opcode::Bench, .obj = out.func}, n.self()); });
    out_.entry = m.id;
    funcs_.try_emplace("main", Declared{m.id, n.self()});
  }

  // An assertion. Its text is the message as protobuf prints it on one line: what was written,
  // without comments and spacing.
  void assertion(const AssertDecl& a, const Node& n) {
    Assertion out;
    out.line = n.self().line;
    out.column = n.self().column;
    google::protobuf::TextFormat::Printer printer;
    printer.SetSingleLineMode(true);
    printer.PrintToString(a, &out.text);
    while (!out.text.empty() && out.text.back() == ' ') out.text.pop_back();
    switch (a.kind_case()) {
      case AssertDecl::kStartLatency: {
        Node k = n.child("start_latency");
        out.kind = AssertKind::StartLatency;
        goroutines(a.start_latency(), k, out);
        limit(a.start_latency(), k, out);
        break;
      }
      case AssertDecl::kChanEmptyAtExit:
        out.kind = AssertKind::ChanEmptyAtExit;
        out.chan = chan(a.chan_empty_at_exit().chan(), n.child("chan_empty_at_exit"));
        if (out.chan >= 0 && out_.chans[static_cast<size_t>(out.chan)].length > 0) {
          error(n.child("chan_empty_at_exit").at("chan"), "chan_empty_at_exit takes a plain channel, not an array");
        }
        break;
      case AssertDecl::kFinishedAtExit:
        out.kind = AssertKind::FinishedAtExit;
        goroutines(a.finished_at_exit(), n.child("finished_at_exit"), out);
        break;
      case AssertDecl::kMaxRunnableLatency:
        out.kind = AssertKind::MaxRunnableLatency;
        limit(a.max_runnable_latency(), n.child("max_runnable_latency"), out);
        break;
      case AssertDecl::KIND_NOT_SET:
        error(n.self(), "empty assertion: it needs one kind, such as start_latency, "
                        "max_runnable_latency, chan_empty_at_exit or finished_at_exit");
        return;
    }
    out_.assertions.push_back(std::move(out));
  }

  // The goroutines an assertion is about: a go statement's name, or a function.
  template <class M>
  void goroutines(const M& m, const Node& n, Assertion& out) {
    switch (m.goroutines_case()) {
      case M::kGoroutine:
        if (m.goroutine().empty()) {
          error(n.at("goroutine"), n.name() + ": goroutine needs the name of a go statement");
        } else if (auto it = spawns_.find(m.goroutine()); it == spawns_.end()) {
          error(n.at("goroutine"), "no go statement named " + quote(m.goroutine()) +
                                       " (name one with go { func: \"f\" name: " +
                                       quote(m.goroutine()) + " })");
        } else {
          out.spawn = it->second.id;
          out.func = out_.spawns[static_cast<size_t>(out.spawn)].func;
        }
        return;
      case M::kFunc:
        out.func = resolve(funcs_, m.func(), n, "func", "function");
        return;
      case M::GOROUTINES_NOT_SET:
        error(n.self(), n.name() + " needs the goroutines it is about: goroutine (the name of a go "
                                   "statement) or func");
        return;
    }
  }

  // An assertion's duration: ns or duration, within the bounds of every duration.
  void limit(const Message& m, const Node& n, Assertion& out) {
    Instr in;
    amount(m, n, in);
    out.limit = in.ns;
  }

  LoadOptions options_;
  ProgramContext& context_;
  Scenario out_;
  std::vector<Diagnostic> errors_;
  Table chans_, mutexes_, vars_, waitgroups_, devices_, conns_, listeners_, funcs_, spawns_;
  std::vector<Table> loop_names_;        // per declared function: its loops' names
  std::vector<int32_t> declared_params_;  // per declared function: its parameters
  std::vector<std::vector<ObjKind>> declared_kinds_;  // per declared function: its parameters' kinds
  bool bench_func_ = false;               // a benchmark func: N is b.N
  std::set<std::string, std::less<>> fed_conns_;  // the conns of listeners another process dials
  std::set<std::string, std::less<>> dial_conns_;  // the conns that dial
  int64_t conns_total_ = 0;               // connections declared so far, arrays' elements each
  int64_t requests_total_ = 0;            // their requests
  Emitter* e_ = nullptr;
  int nesting_ = 0;  // loops, selects and parallels open around the operation being compiled
};

}  // namespace

Scenario compile_program(const ScenarioFile& file, const Node& root, const std::string& source,
                         const LoadOptions& options, ProgramContext& context) {
  return Compiler(source, options, context).run(file, root);
}

Scenario compile(const ScenarioFile& file, const Node::Tree& tree, const std::string& source,
                 const LoadOptions& options) {
  const Node root(ScenarioFile::descriptor(), &tree, Pos{}, "file");
  if (file.process_size() > 0) return compile_processes(file, root, source, options);
  ProgramContext context;
  return compile_program(file, root, source, options, context);
}

}  // namespace gmp::scenario
