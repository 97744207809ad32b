#include "layer/ablation_checks.hpp"

#include <cmath>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernels/fp8_gemm/fp8_gemm_bounds.hpp"
#include "reference/codecs/bf16.hpp"

namespace fb {
namespace {

double value_at(const std::vector<std::uint8_t>& bytes, OutputType type, std::size_t i) {
  if (type == OutputType::bf16) {
    std::uint16_t v;
    std::memcpy(&v, bytes.data() + i * 2, 2);
    return bf16_to_float(v);
  }
  if (type == OutputType::f32) {
    float v;
    std::memcpy(&v, bytes.data() + i * 4, 4);
    return v;
  }
  std::int32_t v;
  std::memcpy(&v, bytes.data() + i * 4, 4);
  return v;
}

std::size_t elem_bytes(OutputType t) { return t == OutputType::bf16 ? 2 : 4; }

// The first element that is NaN (floats) or the poison -1 (ids); -1 when there is none.
std::int64_t first_bad(const std::vector<std::uint8_t>& bytes, OutputType type) {
  const std::size_t n = bytes.size() / elem_bytes(type);
  for (std::size_t i = 0; i < n; ++i) {
    const double v = value_at(bytes, type, i);
    if (std::isnan(v) || (type == OutputType::i32 && v < 0)) return static_cast<std::int64_t>(i);
  }
  return -1;
}

}  // namespace

StepSnapshot take_snapshot(const LayerStep& step) {
  StepSnapshot s;
  for (const StepOutput& o : step.outputs()) s[o.name] = step.download(o.name);
  return s;
}

double f8_gate_up_bound(std::int64_t hidden) { return pair_rel_l2(canonical_beta(hidden), blocked_beta(hidden), hidden); }

std::string f8_bound_reason(std::int64_t hidden) {
  return fmt::format("relative L2 <= {:.3g}: two bf16 results of beta_small = {:.3g} ({}) and beta_general = {:.3g} ({}), "
                     "sqrt(K) for ||T||/||C||",
                     f8_gate_up_bound(hidden), canonical_beta(hidden), canonical_beta_reason(hidden), blocked_beta(hidden),
                     blocked_beta_reason(hidden));
}

AblationCheck compare_snapshots(const LayerStep& step, const StepSnapshot& base, const StepSnapshot& other,
                                const OutputBounds& bounds) {
  AblationCheck c;
  c.claim = "bitwise";
  c.outcome = "pass";
  std::vector<std::string> failures, bounded;
  int bitwise_outputs = 0;
  for (const StepOutput& o : step.outputs()) {
    const std::vector<std::uint8_t>& a = base.at(o.name);
    const std::vector<std::uint8_t>& b = other.at(o.name);
    const std::size_t n = a.size() / elem_bytes(o.type);
    const std::int64_t bad_a = first_bad(a, o.type), bad_b = first_bad(b, o.type);
    if (bad_a >= 0 || bad_b >= 0) {
      failures.push_back(fmt::format("{}: {} at element {} ({})", o.name,
                                     o.type == OutputType::i32 ? "poison left" : "NaN or poison left",
                                     bad_b >= 0 ? bad_b : bad_a, bad_b >= 0 ? "this configuration" : "all_on"));
      continue;
    }
    double bound = -1;
    if (o.name == "shared_gate_up") bound = bounds.gate_up;
    else if (o.after_fold) bound = std::max(bounds.fold, bounds.after_gate_up);
    else if (o.after_gate_up) bound = bounds.after_gate_up;
    if (bound < 0) {
      ++bitwise_outputs;
      if (a != b) {
        std::size_t i = 0;
        while (i < n && std::memcmp(a.data() + i * elem_bytes(o.type), b.data() + i * elem_bytes(o.type),
                                    elem_bytes(o.type)) == 0)
          ++i;
        failures.push_back(fmt::format("{}: bytes differ, first at element {} ({} vs {} in all_on)", o.name, i,
                                       value_at(b, o.type, i), value_at(a, o.type, i)));
      }
      continue;
    }
    c.claim = "bound";
    double num = 0, den = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double x = value_at(b, o.type, i), y = value_at(a, o.type, i);
      num += (x - y) * (x - y);
      den += y * y;
    }
    const double rel = den > 0 ? std::sqrt(num / den) : (num > 0 ? INFINITY : 0.0);
    if (!(rel <= bound)) failures.push_back(fmt::format("{}: relative L2 {:.3g} > {:.3g}", o.name, rel, bound));
    bounded.push_back(fmt::format("{} relative L2 {:.3g} <= {:.3g}", o.name, rel, bound));
    if (rel > c.metric || c.bound == 0) {
      c.metric = rel;
      c.bound = bound;
    }
  }
  if (!failures.empty()) {
    c.outcome = "fail";
    c.detail = fmt::format("{}", fmt::join(failures, "; "));
  } else {
    c.detail = fmt::format("{} outputs bit-identical to all_on{}{}", bitwise_outputs, bounded.empty() ? "" : "; ",
                           fmt::join(bounded, "; "));
  }
  return c;
}

}  // namespace fb
