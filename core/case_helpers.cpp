#include "core/case_helpers.hpp"

namespace fb {

AxisSpec distribution_axis() {
  return AxisSpec::choice("dist", "input distribution (see core/inputs.hpp)", distribution_names(), "normal");
}

Distribution distribution_of(const Point& p) { return distribution_from_name(p.choice("dist")); }

}  // namespace fb
