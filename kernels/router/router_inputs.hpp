// Inputs and axes every router case shares: the router's axes, its tensors, and seeded data.
//   x     bf16 [M][K] from the point's distribution (N(0, 1) by default)
//   W     [E][K], N(0, 1/K) (fp32, or those values rounded to bf16): unit-scale logits
//   bias  [E], N(0, 0.05^2): MiniMax's score correction is a small per-expert offset
// `edge` rows (router_edge_text): bias all 0 and W rows 2j+1 = 2j for j < 8 (deliberate ties: equal
// logits and scores, to the lower id), x row 0 all zero (an all-equal row: every score 0.5), row 1
// x * 2^10 (huge logits: sigmoid saturates to 0 and 1), row 2 x * 2^-20 (tiny logits: p = 0.5 +
// tiny). `nan`: one NaN in x row M/2 (every logit of that row is NaN: reported, never a pass).
#pragma once

#include <string>
#include <vector>

#include "core/axes.hpp"
#include "core/inputs.hpp"
#include "core/tensor.hpp"
#include "kernels/router/router.hpp"

namespace fb {

inline constexpr const char* router_edge_text =
    "edge: bias 0, W rows 2j+1 = 2j for j < 8 (ties), x row 0 zero (all-equal row), row 1 x 2^10 (huge logits), "
    "row 2 x 2^-20 (tiny logits)";

// M (rows), K, E, split_k, weight, gate, topk; `rows` names the row axis ("M" or "T").
std::vector<AxisSpec> router_axes(const std::string& rows, std::int64_t max_rows);
RouterParams read_router_params(const Point& pt, const std::string& rows);

// Inputs: x (activation), then W and bias (weights, TensorSpec::weight).
std::vector<TensorSpec> router_input_specs(const RouterParams& p);
void router_generate_x(const RouterParams& p, Distribution d, std::uint64_t seed, HostTensor& x);
void router_prepare_weights(const RouterParams& p, Distribution d, std::uint64_t seed, HostTensor& w, HostTensor& bias);

// Outputs: partials, logits, topk_ids, topk_weights.
std::vector<TensorSpec> router_output_specs(const RouterParams& p, const std::string& rows, Distribution d);

// Whether the data is unit scale (the 2e-6 target applies): normal, uniform.
bool router_unit_scale(Distribution d);

}  // namespace fb
