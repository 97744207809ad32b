#include "kernels/fp8_quant/fp8_quant_options.hpp"

#include <fmt/format.h>

namespace fb {

std::vector<AxisSpec> fp8_output_axes(bool grouped, const std::string& rows, const std::string& cols) {
  std::vector<AxisSpec> axes{AxisSpec::choice("fp8", "fp8 flavour: e4m3fn (OCP, max 448) or e4m3fnuz (gfx942, max 240)",
                                              {"e4m3fn", "e4m3fnuz"}, "e4m3fn")};
  if (grouped)
    axes.push_back(AxisSpec::choice(
        "scale_layout", fmt::format("scales [{0}][{1}/128] (row_major) or [{1}/128][{0}] (k_major)", rows, cols),
        {"row_major", "k_major"}, "row_major"));
  axes.push_back(
      AxisSpec::choice("scale_format", "f32 scales, or e8m0 (power-of-two, rounded up)", {"f32", "e8m0"}, "f32"));
  return axes;
}

Fp8OutputOptions read_fp8_output_options(const Point& point, bool grouped) {
  return {point.choice("fp8") == "e4m3fn" ? Fp8Flavour::e4m3fn : Fp8Flavour::e4m3fnuz,
          grouped && point.choice("scale_layout") == "k_major" ? ScaleLayout::k_major : ScaleLayout::row_major,
          point.choice("scale_format") == "e8m0" ? ScaleFormat::e8m0 : ScaleFormat::f32};
}

TensorSpec fp8_q_spec(const Fp8QuantParams& p, const std::string& rows, const std::string& cols) {
  return {"q", fp8_dtype(p.flavour), {{rows, p.rows}, {cols, p.cols}}};
}

TensorSpec fp8_scales_spec(const Fp8QuantParams& p, const std::string& rows) {
  const Dim m{rows, p.rows}, g{"G", p.groups_per_row()};
  TensorSpec scales{"scales", p.scale_format == ScaleFormat::f32 ? DType::f32 : DType::e8m0,
                    p.layout == ScaleLayout::row_major ? std::vector<Dim>{m, g} : std::vector<Dim>{g, m}};
  // Power-of-two scales of groups with similar amax legitimately coincide.
  scales.constant_ok = p.scale_format == ScaleFormat::e8m0;
  return scales;
}

std::int64_t fp8_scale_bytes(const Fp8QuantParams& p) {
  return p.scale_count() * (p.scale_format == ScaleFormat::f32 ? 4 : 1);
}

}  // namespace fb
