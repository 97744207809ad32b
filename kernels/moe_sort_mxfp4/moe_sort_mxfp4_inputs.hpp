// Inputs of F5: routing (topk_ids, topk_weights), the expert mask, and the `edge` rows of x.
// All seeded through core/inputs.hpp's counter hash: the same seed gives the same bytes anywhere.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4.hpp"

namespace fb {

enum class MoeRouting : std::uint8_t {
  uniform,            // k distinct experts per token, uniformly at random
  one_expert,         // every token routes one slot (at a random column) to the same expert
  empty_experts,      // only max(k, E/4) evenly spaced experts receive tokens; the others get no block
  multiple_of_block,  // every expert's count is a multiple of B (no sentinel); needs T % B == 0
};

enum class MoeMask : std::uint8_t {
  none,     // no mask: every expert is local
  strided,  // even expert ids are local
  slice,    // a contiguous quarter [E/4, E/4 + max(1, E/4)) is local (one rank of EP 4)
};

std::vector<std::string> moe_routing_names();
std::vector<std::string> moe_mask_names();
MoeRouting moe_routing_from_name(const std::string& name);
MoeMask moe_mask_from_name(const std::string& name);
std::string moe_routing_text(MoeRouting r);

// Fills topk_ids [T][k] and topk_weights [T][k] (weights in [1/16, 1)).
void make_moe_routing(const MoeSortMxfp4Params& p, MoeRouting routing, std::uint64_t seed, std::int32_t* topk_ids,
                      float* topk_weights);
void make_moe_mask(std::int64_t experts, MoeMask mask, std::int32_t* expert_mask);

inline constexpr const char* mx_edge_rows_text =
    "normal, with rows cycling (row % 8) through: all +0; one +-largest-bf16 per block; e2m1 ties at scale 1 "
    "(amax 6); amax at the scale rules' thresholds (1.5, 1.71875, 1.75 x 2^j); alternating +0/-0; bf16 "
    "subnormals; small negatives that round to -0; a normal row";

// Rewrites rows of x (bf16 [rows][cols], already normal) in place.
void apply_mx_edge_rows(std::uint16_t* x, std::int64_t rows, std::int64_t cols);

}  // namespace fb
