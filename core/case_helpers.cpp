#include "core/case_helpers.hpp"

namespace fb {

AxisSpec fp8_flavour_axis() {
  return AxisSpec::choice("fp8", "fp8 flavour: e4m3fn (OCP, max 448) or e4m3fnuz (gfx942, max 240)",
                          {"e4m3fn", "e4m3fnuz"}, "e4m3fn");
}

AxisSpec distribution_axis() {
  return AxisSpec::choice("dist", "input distribution (see core/inputs.hpp)", distribution_names(), "normal");
}

Fp8Flavour fp8_flavour_of(const Point& p) {
  return p.choice("fp8") == "e4m3fn" ? Fp8Flavour::e4m3fn : Fp8Flavour::e4m3fnuz;
}

Distribution distribution_of(const Point& p) { return distribution_from_name(p.choice("dist")); }

}  // namespace fb
