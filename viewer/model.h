// The viewer reads traces through the shared lane model (traces/lanes/model.h), the same one the
// exporters read; its names are the viewer's own.
#pragma once

#include "traces/lanes/model.h"

namespace gmp::view {
using namespace ::gmp::lanes;  // NOLINT(google-build-using-namespace): one model, two namespaces' names
}  // namespace gmp::view
