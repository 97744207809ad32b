#include "kernels/swiglu_fp8/swiglu_fp8_edge_rows.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/swiglu_fp8/swiglu_fp8_math.hpp"
#include "reference/codecs/bf16.hpp"
#include "reference/codecs/fp8.hpp"

namespace fb {
namespace {

float out_of(SwigluActivation a, float gate, float up) {
  const float v = a == SwigluActivation::swiglu_oai ? swiglu_oai_value(gate, up) : silu_mul_value(gate, up);
  return round_through_bf16(v);
}

// Every bf16 value in [-limit, limit], ascending.
std::vector<float> bf16_values(float limit) {
  std::vector<float> v;
  for (std::uint32_t code = 0; code < 0x8000u; ++code) {
    const float f = bf16_to_float(static_cast<std::uint16_t>(code));
    if (f <= limit) {
      v.push_back(f);
      if (code) v.push_back(-f);
    }
  }
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

std::vector<SwigluInputPair> swiglu_pairs_for(const std::vector<float>& targets, SwigluActivation activation) {
  const bool oai = activation == SwigluActivation::swiglu_oai;
  const std::vector<float> ups = bf16_values(oai ? 7.0f : 1024.0f);
  // Gates from 7 down to 2^-16: with swiglu_oai, out ~ g/2 * (u + 1) for small g, so small targets
  // need small gates for u + 1 to be fine-grained enough.
  std::vector<float> gates{7.0f, 6.5f, 6.0f, 5.0f, 4.0f, 3.0f, 2.5f, 2.0f, 1.5f, 1.0f, 0.75f};
  for (int e = -1; e >= -16; --e) gates.push_back(std::ldexp(1.0f, e));
  std::vector<SwigluInputPair> pairs;
  for (float target : targets) {
    for (float gate : gates) {
      // For gate > 0, out = c * (u + 1) or c * up with c > 0: non-decreasing in up.
      const auto it = std::partition_point(ups.begin(), ups.end(),
                                           [&](float up) { return out_of(activation, gate, up) < target; });
      if (it != ups.end() && out_of(activation, gate, *it) == target) {
        pairs.push_back({bf16_from_float(gate), bf16_from_float(*it), target});
        break;  // a target no gate reaches is left out (tested: none is, for the targets below)
      }
    }
  }
  return pairs;
}

std::vector<float> swiglu_tie_targets(Fp8Flavour flavour) {
  const bool fn = flavour == Fp8Flavour::e4m3fn;
  const float sub_step = std::ldexp(1.0f, fn ? -9 : -10);
  std::vector<float> ties{1.0625f, 1.1875f, 17, 19, 34, 38, 68, 76, 136, 152, fn ? 432.0f : 232.0f,
                          0.5f * sub_step, 1.5f * sub_step};
  std::vector<float> targets{fp8_max(flavour) / 64.0f};
  for (std::size_t i = 0; i < ties.size(); ++i) targets.push_back((i % 2 ? -1.0f : 1.0f) * ties[i] / 64.0f);
  return targets;
}

void apply_swiglu_edge_rows(std::uint16_t* gate_up, std::int64_t rows, std::int64_t d, SwigluActivation activation,
                            Fp8Flavour flavour) {
  const float clamp_gates[] = {7.0f, 7.0625f, 8.0f, 100.0f, 1e4f, -7.0f, -60.0f, -1e4f};
  const float clamp_ups[] = {7.0f, -7.0f, 7.5f, -7.5f, 100.0f, -100.0f, 0.0f, -1.0f};
  const float flush_gates[] = {-50.0f, -52.0f, -52.25f, -53.0f, -88.5f, -89.0f, -120.0f, -1e4f};
  const std::vector<SwigluInputPair> ties = swiglu_pairs_for(swiglu_tie_targets(flavour), activation);
  const std::int64_t group = 128;

  for (std::int64_t r = 0; r < rows; ++r) {
    std::uint16_t* gate = gate_up + r * 2 * d;
    std::uint16_t* up = gate + d;
    const int pattern = static_cast<int>(r % 8);
    for (std::int64_t c = 0; c < d; ++c) {
      const std::int64_t in_group = c % group;
      switch (pattern) {
        case 0: gate[c] = up[c] = 0; break;
        case 1:
          gate[c] = bf16_from_float(clamp_gates[c % 8]);
          up[c] = bf16_from_float(clamp_ups[(c / 8) % 8]);
          break;
        case 2:
          if (in_group == 5) {
            gate[c] = bf16_from_float(std::ldexp(1.0f, 20));
            up[c] = bf16_from_float(std::ldexp((c / group) % 2 ? -1.0f : 1.0f, 20));
          }
          break;
        case 3:
          if (in_group < static_cast<std::int64_t>(ties.size())) {
            gate[c] = ties[in_group].gate;
            up[c] = ties[in_group].up;
          } else {
            gate[c] = up[c] = 0;
          }
          break;
        case 4:
          gate[c] = static_cast<std::uint16_t>((gate[c] & 0x8000) | (1 + (c % 0x7F)));
          up[c] = static_cast<std::uint16_t>((up[c] & 0x8000) | (1 + (c % 0x3F)));
          break;
        case 5: gate[c] = bf16_from_float(flush_gates[c % 8]); break;
        case 6: gate[c] = bf16_from_float(static_cast<float>(20 + c % 64)); break;
        default: break;
      }
    }
  }
}

}  // namespace fb
