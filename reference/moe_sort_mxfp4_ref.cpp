#include "reference/moe_sort_mxfp4_ref.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include <Eigen/Core>

#include "reference/codecs/bf16.hpp"
#include "reference/codecs/e2m1.hpp"

namespace fb {
namespace {

// floor(log2 a) for a finite a > 0, exactly (frexp gives a = m * 2^e with m in [0.5, 1)).
int floor_log2(double a) {
  int e = 0;
  std::frexp(a, &e);
  return e - 1;
}

// Half the e2m1 spacing at magnitude v: 0.5 apart below 2, 1 below 4, 2 up to 6 (and beyond).
double half_step(double v) {
  const double a = std::fabs(v);
  return a < 2.0 ? 0.25 : (a < 4.0 ? 0.5 : 1.0);
}

std::string rule_reason(MxScaleRule rule) {
  switch (rule) {
    case MxScaleRule::roundup:
      return "roundup: s = 2^ceil(log2(amax/6)) exactly (fl32(1/6) is 3e-8 high, the product rounds by <= 6e-8, "
             "and no fp32 amax lies within 8e-8 of 6*2^j except 6*2^j, where both are exact)";
    case MxScaleRule::even:
      return "even: integer recipe = exponent of amax rounded to a power of two at mantissa 1.75, minus 2, "
             "clamped to [0, 254]";
    case MxScaleRule::floor:
      return "floor: fl32(amax/4) is exact for a bf16 amax, so s = 2^(floor(log2 amax) - 2), byte 0 below 2^-124";
  }
  return "";
}

Bound element_bound(MxScaleRule rule) {
  switch (rule) {
    case MxScaleRule::roundup:
      return {"err/abs/max", 1.0,
              "in half e2m1 steps at |x/s|: s >= amax/6, so |x/s| <= 6 and the code is a nearest e2m1 value"};
    case MxScaleRule::even:
      return {"err/abs/max", 1.0,
              "in half e2m1 steps at |x/s|: |x/s| < 7; nearest value up to 6, saturation above costs |x/s| - 6 < 1"};
    case MxScaleRule::floor:
      return {"err/abs/max", 2.0,
              "in half e2m1 steps at |x/s|: |x/s| < 8; nearest value up to 6, saturation above costs < 2"};
  }
  return {};
}

const Bound kExact{"err/abs/max", 0.0, "a sort moves ids and weights and computes nothing: exact"};

}  // namespace

MoeSortRef moe_sort_ref(const MoeSortRefProblem& p, const std::int32_t* ids, const float* weights) {
  MoeSortRef r;
  std::int32_t local = 0;
  for (std::int64_t e = 0; e < p.experts; ++e) {
    if (p.expert_mask && p.expert_mask[e] == 0) continue;
    const std::int32_t local_id = local++;
    std::int64_t n = 0;
    for (std::int64_t t = 0; t < p.tokens; ++t) {
      for (std::int64_t s = 0; s < p.topk; ++s) {
        if (ids[t * p.topk + s] != e) continue;
        r.sorted_token_ids.push_back(static_cast<std::int32_t>((s << 24) | t));
        r.sorted_weights.push_back(weights[t * p.topk + s]);
        ++n;
      }
    }
    const std::int64_t blocks = (n + p.block - 1) / p.block;
    for (std::int64_t i = n; i < blocks * p.block; ++i) {
      r.sorted_token_ids.push_back(static_cast<std::int32_t>((p.topk << 24) | p.tokens));
      r.sorted_weights.push_back(0.0f);
    }
    r.sorted_expert_ids.insert(r.sorted_expert_ids.end(), static_cast<std::size_t>(blocks), local_id);
  }
  r.num_valid[0] = static_cast<std::int32_t>(r.sorted_token_ids.size());
  r.num_valid[1] = static_cast<std::int32_t>(p.tokens);
  return r;
}

std::int64_t mx_scale_addr_ref(std::int64_t p, std::int64_t y, std::int64_t cols_pad) {
  const std::int64_t tile = p / 32, row = p % 32, col8 = y / 8, col = y % 8;
  return tile * 32 * cols_pad + col8 * 256 + (col % 4) * 64 + (row % 16) * 4 + (col / 4) * 2 + row / 16;
}

double mx_scale_ref(double amax, MxScaleRule rule) {
  if (std::isnan(amax)) return rule == MxScaleRule::even ? std::ldexp(1.0, 127) : NAN;
  if (std::isinf(amax)) return rule == MxScaleRule::even ? std::ldexp(1.0, 127) : NAN;
  int byte = 0;
  switch (rule) {
    case MxScaleRule::roundup: {
      const double q = std::max(amax, 1e-10) / 6.0;
      const int f = floor_log2(q);
      byte = f + (std::ldexp(1.0, f) == q ? 0 : 1) + 127;
      break;
    }
    case MxScaleRule::even: {
      if (amax == 0.0) break;
      const int f = floor_log2(amax);
      const int e = f + (amax / std::ldexp(1.0, f) >= 1.75 ? 1 : 0) + 127;  // biased exponent after rounding
      byte = e >= 255 ? 254 : std::max(e - 2, 0);
      break;
    }
    case MxScaleRule::floor:
      byte = amax == 0.0 ? 0 : std::max(floor_log2(amax) - 2 + 127, 0);
      break;
  }
  return std::ldexp(1.0, byte - 127);
}

std::vector<Fp64Check> moe_sort_mxfp4_check_fp64(const MoeSortRefProblem& p, const std::int32_t* ids,
                                                 const float* weights, const std::uint16_t* x,
                                                 const MoeSortMxfp4Outputs& out) {
  const MoeSortRef ref = moe_sort_ref(p, ids, weights);
  const std::int64_t valid = ref.num_valid[0];
  const std::int64_t n_scale = p.cols / 32, n_pad = (n_scale + 7) / 8 * 8;
  const std::int64_t rows = p.stage2 ? p.tokens * p.topk : p.tokens;

  // Sort outputs, exactly.
  ErrorAccumulator nv, sid, sw, seid, buf;
  for (int i = 0; i < 2; ++i) nv.add(i, out.num_valid_ids[i], ref.num_valid[i]);
  for (std::int64_t i = 0; i < valid; ++i) {
    // NOTE: as double (an entry reaches 2^31; a float would round it).
    sid.add(i, i < out.entries ? static_cast<double>(out.sorted_token_ids[i]) : NAN,
            ref.sorted_token_ids[static_cast<std::size_t>(i)]);
    sw.add(i, i < out.entries ? static_cast<double>(out.sorted_weights[i]) : NAN,
           ref.sorted_weights[static_cast<std::size_t>(i)]);
  }
  for (std::int64_t j = 0; j < valid / p.block; ++j)
    seid.add(j, j < out.blocks ? static_cast<double>(out.sorted_expert_ids[j]) : NAN, ref.sorted_expert_ids[static_cast<std::size_t>(j)]);
  const std::int64_t buf_elements = p.tokens * p.buf_cols;
#pragma omp parallel if (buf_elements >= 1 << 20)
  {
    ErrorAccumulator local;
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < buf_elements; ++i) local.add(i, bf16_to_float(out.moe_buf[i]), 0.0);
#pragma omp critical
    buf.merge(local);
  }

  // The first sorted position that reads each row (-1: none), and what every written tile byte holds.
  std::vector<std::int64_t> first_pos(static_cast<std::size_t>(rows), -1);
  std::vector<std::int64_t> source(static_cast<std::size_t>((valid + 31) / 32 * 32), -1);
  for (std::int64_t pos = 0; pos < valid; ++pos) {
    const std::uint32_t entry = static_cast<std::uint32_t>(ref.sorted_token_ids[static_cast<std::size_t>(pos)]);
    const std::int64_t t = entry & 0xFFFFFF, s = entry >> 24;
    if (t >= p.tokens) continue;
    const std::int64_t row = p.stage2 ? t * p.topk + s : t;
    source[static_cast<std::size_t>(pos)] = row;
    if (first_pos[static_cast<std::size_t>(row)] < 0) first_pos[static_cast<std::size_t>(row)] = pos;
  }
  ErrorAccumulator padding;
  for (std::int64_t pos = 0; pos < static_cast<std::int64_t>(source.size()); ++pos)
    for (std::int64_t y = 0; y < n_pad; ++y) {
      if (source[static_cast<std::size_t>(pos)] >= 0 && y < n_scale) continue;
      const std::int64_t a = mx_scale_addr_ref(pos, y, n_pad);
      padding.add(a, a < out.scale_bytes ? static_cast<double>(out.scales[a]) : NAN, 0.0);
    }

  // Scales at every valid position against the ideal of their source block; elements of each read
  // row against the fp64 input under the kernel's own scale (taken at the row's first position).
  ErrorAccumulator scale_acc, q_acc;
#pragma omp parallel if (valid * p.cols >= 1 << 16)
  {
    ErrorAccumulator local_scale, local_q;
    Eigen::ArrayXd row(p.cols);
#pragma omp for schedule(dynamic, 64)
    for (std::int64_t pos = 0; pos < valid; ++pos) {
      const std::int64_t r = source[static_cast<std::size_t>(pos)];
      if (r < 0) continue;
      for (std::int64_t c = 0; c < p.cols; ++c) row[c] = bf16_to_float(x[r * p.cols + c]);
      const bool first = first_pos[static_cast<std::size_t>(r)] == pos;
      for (std::int64_t y = 0; y < n_scale; ++y) {
        const auto block = row.segment(y * 32, 32);
        const double ideal = mx_scale_ref(block.abs().maxCoeff<Eigen::PropagateNaN>(), p.rule);
        const std::int64_t a = mx_scale_addr_ref(pos, y, n_pad);
        const double got = e8m0_to_float(out.scales[a]);
        const bool finite = std::isfinite(got) && std::isfinite(ideal);
        local_scale.add(a, got, ideal, finite ? std::llabs(std::llround(std::log2(got) - std::log2(ideal))) : -1);
        if (!first) continue;
        for (std::int64_t i = 0; i < 32; ++i) {
          const std::int64_t col = y * 32 + i;
          const std::uint8_t byte = out.xq[(r * p.cols + col) / 2];
          const double code = e2m1_to_float(col % 2 ? byte >> 4 : byte & 0xF);
          const double v = block[i] / got;  // exact: got is a power of two
          const double h = half_step(v);
          local_q.add(r * p.cols + col, code / h, v / h);
        }
      }
    }
#pragma omp critical
    {
      scale_acc.merge(local_scale);
      q_acc.merge(local_q);
    }
  }

  // Rows no sorted position reads (a masked expert's tokens) are quantized all the same: check their
  // elements under the ideal scale, which the kernel's rule meets exactly (the scale bound is 0). A
  // NaN there makes that scale NaN and is counted: a NaN input never passes, read or not.
#pragma omp parallel if (rows * p.cols >= 1 << 16)
  {
    ErrorAccumulator local_q;
    Eigen::ArrayXd row(p.cols);
#pragma omp for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
      if (first_pos[static_cast<std::size_t>(r)] >= 0) continue;
      for (std::int64_t c = 0; c < p.cols; ++c) row[c] = bf16_to_float(x[r * p.cols + c]);
      for (std::int64_t y = 0; y < n_scale; ++y) {
        const auto block = row.segment(y * 32, 32);
        const double scale = mx_scale_ref(block.abs().maxCoeff<Eigen::PropagateNaN>(), p.rule);
        for (std::int64_t i = 0; i < 32; ++i) {
          const std::int64_t col = y * 32 + i;
          const std::uint8_t byte = out.xq[(r * p.cols + col) / 2];
          const double code = e2m1_to_float(col % 2 ? byte >> 4 : byte & 0xF);
          const double v = block[i] / scale;
          const double h = half_step(v);
          local_q.add(r * p.cols + col, code / h, v / h);
        }
      }
    }
#pragma omp critical
    q_acc.merge(local_q);
  }

  return {{"sort/num_valid_ids", nv.finish(), kExact},
          {"sort/sorted_token_ids", sid.finish(), kExact},
          {"sort/sorted_weights", sw.finish(), kExact},
          {"sort/sorted_expert_ids", seid.finish(), kExact},
          {"moe_buf", buf.finish(), {"err/abs/max", 0.0, "the sort zeroes the first T rows of moe_buf"}},
          {"scales", scale_acc.finish(), {"err/ulp/max", 0.0, rule_reason(p.rule) + " (distance in powers of two)"}},
          {"scales/padding", padding.finish(),
           {"err/abs/max", 0.0, "sentinel rows, pad columns and rows past num_valid_ids[0] in a written tile hold 0"}},
          {"xq", q_acc.finish(), element_bound(p.rule)}};
}

}  // namespace fb
