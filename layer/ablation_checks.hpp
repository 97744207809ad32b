// The checks `ablate` runs before it times anything: every configuration's step outputs against
// all-on's, from the same inputs with every written buffer poisoned first. Bitwise fusions must
// leave every output's bytes equal; F6 and F8 move the outputs downstream of them within bounds.
// NaN never passes, and a poison value left in an output (NaN bytes, or -1 in the integer ids)
// fails.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/ablation_result.hpp"
#include "layer/layer_step.hpp"

namespace fb {

using StepSnapshot = std::map<std::string, std::vector<std::uint8_t>>;

StepSnapshot take_snapshot(const LayerStep& step);

// Relative-L2 bounds of the outputs a bound-holding fusion moves; a negative bound means bitwise.
struct OutputBounds {
  double gate_up = -1;     // the shared gate_up output itself (F8)
  double after_gate_up = -1;  // what is computed from it (shared_out, and moe_out through the fold)
  double fold = -1;        // moe_out (F6)
};

// F8: the small-M kernel (canonical order) against the general GEMM (the blocked order of the mma / wgmma kernels):
// kernels/fp8_gemm/fp8_gemm_bounds.hpp's pair bound at depth K.
double f8_gate_up_bound(std::int64_t hidden);
std::string f8_bound_reason(std::int64_t hidden);
inline constexpr double kFoldBound = 1e-2;  // F6's stated claim: relative L2 of fold vs chain
// What F8 moves downstream (SwiGLU, fp8 requant, the down GEMM, the fold) has no derived bound;
// it is held to the layer's 1e-2 as a sanity limit and says so.
inline constexpr double kDownstreamSanity = 1e-2;

AblationCheck compare_snapshots(const LayerStep& step, const StepSnapshot& base, const StepSnapshot& other,
                                const OutputBounds& bounds);

}  // namespace fb
