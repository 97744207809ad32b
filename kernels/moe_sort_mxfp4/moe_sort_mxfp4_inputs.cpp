#include "kernels/moe_sort_mxfp4/moe_sort_mxfp4_inputs.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/errors.hpp"
#include "core/inputs.hpp"
#include "reference/codecs/bf16.hpp"

namespace fb {
namespace {

constexpr const char* kRoutingNames[] = {"uniform", "one_expert", "empty_experts", "multiple_of_block"};
constexpr const char* kMaskNames[] = {"none", "strided", "slice"};

// A counter-based stream: the same (seed, stream, key) gives the same draws on every machine.
class Draws {
 public:
  Draws(std::uint64_t seed, std::uint64_t stream, std::uint64_t key)
      : state_(mix64(seed ^ mix64(stream * 0x9E3779B97F4A7C15ull + key))) {}
  std::uint64_t next() { return mix64(state_ += 0xD1B54A32D192ED03ull); }
  std::int64_t below(std::int64_t n) { return static_cast<std::int64_t>((next() >> 11) % static_cast<std::uint64_t>(n)); }

 private:
  std::uint64_t state_;
};

// k distinct indices of [0, n), in draw order (rejection for small k, partial shuffle otherwise).
void choose_distinct(Draws& d, std::int64_t n, std::int64_t k, std::int32_t* out) {
  if (2 * k <= n) {
    for (std::int64_t s = 0; s < k; ++s) {
      std::int32_t v;
      do v = static_cast<std::int32_t>(d.below(n));
      while (std::find(out, out + s, v) != out + s);
      out[s] = v;
    }
    return;
  }
  std::vector<std::int32_t> pool(static_cast<std::size_t>(n));
  std::iota(pool.begin(), pool.end(), 0);
  for (std::int64_t s = 0; s < k; ++s) {
    std::swap(pool[static_cast<std::size_t>(s)], pool[static_cast<std::size_t>(s + d.below(n - s))]);
    out[s] = pool[static_cast<std::size_t>(s)];
  }
}

std::vector<std::int64_t> permutation(std::int64_t n, std::uint64_t seed, std::uint64_t stream) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  Draws d(seed, stream, 0);
  for (std::int64_t i = n - 1; i > 0; --i) std::swap(v[static_cast<std::size_t>(i)], v[static_cast<std::size_t>(d.below(i + 1))]);
  return v;
}

}  // namespace

std::vector<std::string> moe_routing_names() { return {std::begin(kRoutingNames), std::end(kRoutingNames)}; }
std::vector<std::string> moe_mask_names() { return {std::begin(kMaskNames), std::end(kMaskNames)}; }

MoeRouting moe_routing_from_name(const std::string& name) {
  for (std::size_t i = 0; i < std::size(kRoutingNames); ++i)
    if (name == kRoutingNames[i]) return static_cast<MoeRouting>(i);
  throw InputError("unknown routing '" + name + "'");
}

MoeMask moe_mask_from_name(const std::string& name) {
  for (std::size_t i = 0; i < std::size(kMaskNames); ++i)
    if (name == kMaskNames[i]) return static_cast<MoeMask>(i);
  throw InputError("unknown expert mask '" + name + "'");
}

std::string moe_routing_text(MoeRouting r) {
  switch (r) {
    case MoeRouting::uniform: return "routing uniform: k distinct experts per token";
    case MoeRouting::one_expert: return "routing one_expert: every token sends one slot to the same expert";
    case MoeRouting::empty_experts: return "routing empty_experts: only max(k, E/4) spaced experts get tokens";
    case MoeRouting::multiple_of_block: return "routing multiple_of_block: every count a multiple of B";
  }
  return "";
}

void make_moe_routing(const MoeSortMxfp4Params& p, MoeRouting routing, std::uint64_t seed, std::int32_t* ids,
                      float* weights) {
  const std::int64_t T = p.tokens, k = p.topk, E = p.experts;
  const std::int32_t hot = static_cast<std::int32_t>(mix64(seed ^ 0x5EEDull) % static_cast<std::uint64_t>(E));
  const std::int64_t active = std::max<std::int64_t>(k, (E + 3) / 4);
  std::vector<std::int64_t> token_perm, expert_perm;
  if (routing == MoeRouting::multiple_of_block) {
    if (T % p.block != 0)
      throw InputError("routing multiple_of_block needs T a multiple of B (T=" + std::to_string(T) +
                       ", B=" + std::to_string(p.block) + ")");
    token_perm = permutation(T, seed, 2);
    expert_perm = permutation(E, seed, 3);
  }
#pragma omp parallel for schedule(static) if (T * k >= 4096)
  for (std::int64_t t = 0; t < T; ++t) {
    Draws d(seed, 1, static_cast<std::uint64_t>(t));
    std::int32_t* row = ids + t * k;
    switch (routing) {
      case MoeRouting::uniform: choose_distinct(d, E, k, row); break;
      case MoeRouting::one_expert: {
        const std::int64_t hot_slot = d.below(k);
        std::vector<std::int32_t> others(static_cast<std::size_t>(k));
        choose_distinct(d, E - 1, k - 1, others.data());
        std::size_t o = 0;  // the others skip `hot`: index v of [0, E-1) is expert v or v+1
        for (std::int64_t s = 0; s < k; ++s) {
          if (s == hot_slot) {
            row[s] = hot;
          } else {
            const std::int32_t v = others[o++];
            row[s] = v < hot ? v : v + 1;
          }
        }
        break;
      }
      case MoeRouting::empty_experts:
        choose_distinct(d, active, k, row);
        for (std::int64_t s = 0; s < k; ++s) row[s] = static_cast<std::int32_t>(row[s] * E / active);
        break;
      case MoeRouting::multiple_of_block: {
        // The B tokens of group g all take experts g*k .. g*k + k - 1 (mod E, permuted), so each
        // expert receives whole groups of B.
        const std::int64_t group = token_perm[static_cast<std::size_t>(t)] / p.block, rot = d.below(k);
        for (std::int64_t s = 0; s < k; ++s)
          row[s] = static_cast<std::int32_t>(expert_perm[static_cast<std::size_t>((group * k + (s + rot) % k) % E)]);
        break;
      }
    }
    for (std::int64_t s = 0; s < k; ++s)
      weights[t * k + s] = static_cast<float>(0.0625 + 0.9375 * uniform01(seed, 4, static_cast<std::uint64_t>(t * k + s)));
  }
}

void make_moe_mask(std::int64_t experts, MoeMask mask, std::int32_t* m) {
  const std::int64_t first = experts / 4, len = std::max<std::int64_t>(1, experts / 4);
  for (std::int64_t e = 0; e < experts; ++e) {
    switch (mask) {
      case MoeMask::none: m[e] = 1; break;
      case MoeMask::strided: m[e] = e % 2 == 0; break;
      case MoeMask::slice: m[e] = e >= first && e < first + len; break;
    }
  }
}

void apply_mx_edge_rows(std::uint16_t* x, std::int64_t rows, std::int64_t cols) {
  // At amax 6 every rule gives scale byte 127 (multiplier 1), so these reach the encoder as they are.
  const float ties[] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f, -0.25f, -1.25f, -2.5f, -5.0f, 0.5f, 3.0f, -6.0f};
  const float thresholds[] = {1.5f, 1.71875f, 1.75f};  // roundup / even / floor disagree around these
#pragma omp parallel for schedule(static) if (rows * cols >= 1 << 16)
  for (std::int64_t r = 0; r < rows; ++r) {
    std::uint16_t* row = x + r * cols;
    for (std::int64_t c = 0; c < cols; ++c) {
      const std::int64_t i = c % 32, g = c / 32;
      switch (r % 8) {
        case 0: row[c] = 0x0000; break;
        case 1:
          if (i == r % 32) row[c] = static_cast<std::uint16_t>(0x7F7F | (g % 2 ? 0x8000 : 0));  // largest bf16
          break;
        case 2: row[c] = bf16_from_float(i == 0 ? 6.0f : ties[(i + g) % std::size(ties)]); break;
        case 3: {
          const float unit = std::ldexp(1.0f, static_cast<int>(g % 7) - 3);
          const float amax = thresholds[g % 3] * unit * (g % 2 ? -1.0f : 1.0f);
          row[c] = bf16_from_float(i == 0 ? amax : bf16_to_float(row[c]) * 0.25f * unit);
          break;
        }
        case 4: row[c] = c % 2 ? 0x8000 : 0x0000; break;
        case 5: row[c] = static_cast<std::uint16_t>((row[c] & 0x8000) | (1 + c % 0x7F)); break;  // subnormal
        case 6: row[c] = bf16_from_float(i == 0 ? 6.0f : (c % 2 ? -0.25f : -0.2f)); break;
        default: break;
      }
    }
  }
}

}  // namespace fb
