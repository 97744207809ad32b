// A bound on one error metric, and one fp64 comparison checked against it.
#pragma once

#include <string>

#include "reference/metrics/error_stats.hpp"

namespace fb {

// A limit on one metric of ErrorStats, with the rule it comes from: one line, derived from the
// formats and roundings involved, never a number chosen to make a test pass.
struct Bound {
  std::string metric;   // "err/ulp/max", "err/rel_l2", "err/abs/max", "err/rel/max"
  double limit = 0.0;
  std::string reason;
};

// One comparison of an output (or a quantity derived from outputs) with the fp64 reference.
struct Fp64Check {
  std::string quantity;  // "q", "scales", "out"...
  ErrorStats stats;
  Bound bound;
};

}  // namespace fb
