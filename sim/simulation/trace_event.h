// A scheduler event (rt::Host::event) as a trace event (traces/trace.proto): its kind, reason and
// ids, read from the event and from the M that reports it (getg()'s).
#pragma once

#include <cstdint>

#include "sim/runtime/events.h"
#include "traces/trace.pb.h"

namespace gmp::rt {
struct g;
struct p;
}  // namespace gmp::rt

namespace gmp::engine {

// e about gp and pp with its argument (events.h), at virtual time now. The counting-only events
// (Ev::WakepSpinning and after) give an event of no kind.
trace::Event to_trace(rt::Ev e, rt::g* gp, rt::p* pp, int64_t arg, int64_t now);

}  // namespace gmp::engine
