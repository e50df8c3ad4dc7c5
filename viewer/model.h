// The viewer reads traces through the shared lane model (traces/lanes/model.h), the same one the
// exporters read; its names are the viewer's own, one declaration each (a header opens no whole
// namespace into another).
#pragma once

#include "traces/lanes/model.h"

namespace gmp::view {
using ::gmp::lanes::Arrow;
using ::gmp::lanes::ArrowKind;
using ::gmp::lanes::Counter;
using ::gmp::lanes::Counter64;
using ::gmp::lanes::describe_event;
using ::gmp::lanes::Ev;
using ::gmp::lanes::EvExtra;
using ::gmp::lanes::GcInterval;
using ::gmp::lanes::GInfo;
using ::gmp::lanes::kind_name;
using ::gmp::lanes::kNoEv;
using ::gmp::lanes::kNoG;
using ::gmp::lanes::kNoId;
using ::gmp::lanes::Lane;
using ::gmp::lanes::lane_ref;
using ::gmp::lanes::LaneType;
using ::gmp::lanes::LatencySample;
using ::gmp::lanes::load_trace;
using ::gmp::lanes::LoadOptions;
using ::gmp::lanes::Marker;
using ::gmp::lanes::marker_name;
using ::gmp::lanes::MarkerKind;
using ::gmp::lanes::Model;
using ::gmp::lanes::ProcessGroup;
using ::gmp::lanes::ref_index;
using ::gmp::lanes::ref_type;
using ::gmp::lanes::Segment;
using ::gmp::lanes::State;
using ::gmp::lanes::state_name;
}  // namespace gmp::view
