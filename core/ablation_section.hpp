// The `ablation` section of a scenario: the MoE layer `fusebench ablate` assembles and the workload
// points it times (decode steps and prefills), plus the per-layer constants that turn the modelled
// MoE time into a modelled TPOT.
//
//   "ablation": {
//     "layer": { "hidden": 6144, "experts": 128, "topk": 4, "moe_inter": 768, "shared_inter": 768,
//                "qkv_out": 2304, "o_proj_in": 2048, "fp8": "e4m3fn" },   // optional: router_split_k,
//                                                                         // sort_block, gemm_slices
//     "decode_rows": [3, 24, 48, 96, 192], "tokens_per_step": 3, "prefill_tokens": [32768],
//     "moe_layers": 57, "dense_layers": 3,        // moe_layers defaults to model.moe_layers
//     "rounds": { "decode": 30, "prefill": 10 },  // optional
//     "constants_us": { "attention_per_layer": 40, "dense_layer": 60, "lm_head": 90 }  // optional
//   }
// Unknown keys and impossible shapes are InputErrors naming the key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fb {

struct AblationLayer {
  std::int64_t hidden = 0;
  std::int64_t experts = 0;
  std::int64_t topk = 0;
  std::int64_t moe_inter = 0;     // I: routed experts' gate_up is 2I x hidden, down hidden x I
  std::int64_t shared_inter = 0;  // the shared expert's I
  std::int64_t qkv_out = 0;       // prefill's qkv GEMM: qkv_out x hidden
  std::int64_t o_proj_in = 0;     // prefill's o_proj GEMM: hidden x o_proj_in
  std::string fp8 = "e4m3fn";     // e4m3fn | e4m3fnuz
  std::int64_t router_split_k = 4;
  std::int64_t sort_block = 32;
  std::int64_t gemm_slices = 2;   // split-K slices of the block-scale GEMMs (F7)
};

struct AblationConstants {
  std::optional<double> attention_per_layer_us;
  std::optional<double> dense_layer_us;
  std::optional<double> lm_head_us;
  bool complete() const { return attention_per_layer_us && dense_layer_us && lm_head_us; }
};

struct AblationSection {
  AblationLayer layer;
  std::vector<std::int64_t> decode_rows;
  std::int64_t tokens_per_step = 1;
  std::vector<std::int64_t> prefill_tokens;
  std::int64_t moe_layers = 0;
  std::int64_t dense_layers = 0;
  int decode_rounds = 30;
  int prefill_rounds = 10;
  AblationConstants constants;
};

// `section` is the scenario's "ablation" value, `model` its "model" notes (for moe_layers).
AblationSection parse_ablation_section(const nlohmann::ordered_json& section, const nlohmann::ordered_json& model,
                                       const std::string& path);

}  // namespace fb
