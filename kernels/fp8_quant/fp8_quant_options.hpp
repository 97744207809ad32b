// The fp8 output options every fp8 producer shares (F9 itself, F1, F2): their axes, reading them
// from a point, and the q and scales tensors they imply. One definition, so the three families
// spell, default and lay out these options the same way.
#pragma once

#include <string>
#include <vector>

#include "core/axes.hpp"
#include "core/tensor.hpp"
#include "kernels/fp8_quant/fp8_quant.hpp"

namespace fb {

// fp8, then (1x128 only) scale_layout, then scale_format: in this order, contiguous.
std::vector<AxisSpec> fp8_output_axes(bool grouped, const std::string& rows, const std::string& cols);

struct Fp8OutputOptions {
  Fp8Flavour flavour;
  ScaleLayout layout;
  ScaleFormat scale_format;
};
Fp8OutputOptions read_fp8_output_options(const Point& point, bool grouped);

// q (fp8 [rows][cols]) and scales ([rows][G] or [G][rows], f32 or e8m0), dims named as given.
TensorSpec fp8_q_spec(const Fp8QuantParams& p, const std::string& rows, const std::string& cols);
TensorSpec fp8_scales_spec(const Fp8QuantParams& p, const std::string& rows);
std::int64_t fp8_scale_bytes(const Fp8QuantParams& p);

}  // namespace fb
