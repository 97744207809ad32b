#include "kernels/router/router_inputs.hpp"

#include <algorithm>
#include <cmath>

#include "reference/codecs/bf16.hpp"

namespace fb {

std::vector<AxisSpec> router_axes(const std::string& rows, std::int64_t max_rows) {
  return {AxisSpec::integer(rows, "tokens", {}, 1, max_rows),
          AxisSpec::integer("K", "hidden size (columns of x and W)", 6144, 8),
          AxisSpec::integer("E", "experts: a multiple of 32, at most 256", 128, 32, 256),
          AxisSpec::integer("split_k", "K slices; logit = ((P0 + P1) + P2) + ...", 1, 1, 64),
          AxisSpec::choice("weight", "router weight dtype", {"f32", "bf16"}, "f32"),
          AxisSpec::choice("gate", "sigmoid_bias: select by sigmoid + bias; softmax: select by softmax",
                           {"sigmoid_bias", "softmax"}, "sigmoid_bias"),
          AxisSpec::integer("topk", "experts per token", 4, 1, kRouterMaxTopk)};
}

RouterParams read_router_params(const Point& pt, const std::string& rows) {
  RouterParams p;
  p.rows = pt.integer(rows);
  p.hidden = pt.integer("K");
  p.experts = pt.integer("E");
  p.split_k = pt.integer("split_k");
  p.weight = pt.choice("weight") == "bf16" ? RouterWeight::bf16 : RouterWeight::f32;
  p.gate = pt.choice("gate") == "softmax" ? RouterGate::softmax : RouterGate::sigmoid_bias;
  p.topk = pt.integer("topk");
  router_validate(p);
  return p;
}

std::vector<TensorSpec> router_input_specs(const RouterParams& p) {
  TensorSpec w{"W", p.weight == RouterWeight::f32 ? DType::f32 : DType::bf16, {{"E", p.experts}, {"K", p.hidden}}};
  w.weight = true;
  TensorSpec bias{"bias", DType::f32, {{"E", p.experts}}};
  bias.weight = true;
  bias.constant_ok = true;
  return {{"x", DType::bf16, {{"M", p.rows}, {"K", p.hidden}}}, w, bias};
}

void router_generate_x(const RouterParams& p, Distribution d, std::uint64_t seed, HostTensor& x) {
  fill_tensor(x, d, seed, 0);
  auto* v = x.data<std::uint16_t>();
  const std::int64_t K = p.hidden;
  if (d == Distribution::edge) {
    for (std::int64_t k = 0; k < K; ++k) v[k] = 0;
    if (p.rows > 1)
      for (std::int64_t k = 0; k < K; ++k) v[K + k] = bf16_from_float(bf16_to_float(v[K + k]) * 1024.0f);
    if (p.rows > 2)
      for (std::int64_t k = 0; k < K; ++k) v[2 * K + k] = bf16_from_float(bf16_to_float(v[2 * K + k]) * 0x1p-20f);
  }
  if (d == Distribution::nan) v[(p.rows / 2) * K + K / 3] = 0x7FC0;
}

void router_prepare_weights(const RouterParams& p, Distribution d, std::uint64_t seed, HostTensor& w,
                            HostTensor& bias) {
  fill_tensor(w, Distribution::normal, seed, 1, 1.0 / std::sqrt(static_cast<double>(p.hidden)));
  fill_tensor(bias, Distribution::normal, seed, 2, 0.05);
  if (d != Distribution::edge) return;
  const std::size_t row = static_cast<std::size_t>(p.hidden) * dtype_size(w.spec.dtype);
  for (std::int64_t j = 0; j < 8 && 2 * j + 1 < p.experts; ++j)
    std::copy_n(w.bytes.begin() + static_cast<std::ptrdiff_t>(2 * j * row), row,
                w.bytes.begin() + static_cast<std::ptrdiff_t>((2 * j + 1) * row));
  for (std::int64_t e = 0; e < p.experts; ++e) bias.data<float>()[e] = 0.0f;
}

std::vector<TensorSpec> router_output_specs(const RouterParams& p, const std::string& rows, Distribution d) {
  const Dim m{rows, p.rows}, e{"E", p.experts}, k{"k", p.topk};
  TensorSpec partials{"partials", DType::f32, {{"S", p.split_k}, m, e}};
  TensorSpec logits{"logits", DType::f32, {m, e}};
  TensorSpec ids{"topk_ids", DType::i32, {m, k}};
  TensorSpec weights{"topk_weights", DType::f32, {m, k}};
  // Small outputs can be one value (a one-row top-1); edge row 0 is all-equal (logits 0, weights
  // rsf / k), which is the whole output at M = 1.
  const bool edge_row = d == Distribution::edge && p.rows == 1;
  partials.constant_ok = logits.constant_ok = edge_row;
  ids.constant_ok = p.topk == 1 && p.rows == 1;
  weights.constant_ok = edge_row || p.topk == 1;
  return {partials, logits, ids, weights};
}

bool router_unit_scale(Distribution d) { return d == Distribution::normal || d == Distribution::uniform; }

}  // namespace fb
