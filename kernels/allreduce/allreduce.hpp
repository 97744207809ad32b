// TP all-reduce (docs/numeric-contract.md#tp-all-reduce): every rank holds bf16 [M][H] and ends
// with the sum over ranks, summed in rank order in fp32 and rounded once to bf16.
//
// Variants: one_shot (each rank reads every peer's buffer and reduces all elements), two_shot
// (reduce-scatter: rank r reduces slice r; all-gather: every rank copies the other slices), the
// quantized two-shot variants (each rank quantizes its buffer in groups of 32 with one fp32 scale,
// rank r dequantizes and reduces slice r, requantizes the sum, every rank dequantizes every slice)
// and vendor (NCCL / RCCL; real ranks only).
//
// Ranks are either simulated (every rank's buffers on one device or on the CPU, the rank kernels
// launched one after another on one stream, the stream order standing in for the barriers) or real
// (one GPU per rank, peer-mapped buffers, in-kernel barriers with a timeout: allreduce_ranks.hpp).
// No HIP, no Eigen here: included by .hip, emulation and case files alike.
#pragma once

#include <cstdint>

#include "reference/codecs/host_device.hpp"

namespace fb {

enum class AllreduceVariant : std::uint8_t { one_shot, two_shot, two_shot_fp8, two_shot_int4, vendor };
const char* allreduce_variant_name(AllreduceVariant v);

inline constexpr int kAllreduceMaxRanks = 8;
inline constexpr std::int64_t kAllreduceGroup = 32;  // elements per quantization scale (and slice granule)
inline constexpr int kAllreduceMaxBlocks = 64;       // blocks per rank kernel (real ranks: one barrier slot each)

// Bytes one quantized group takes on the wire (the scale travels separately, as one fp32).
FB_HD constexpr std::int64_t allreduce_group_bytes(AllreduceVariant v) {
  return v == AllreduceVariant::two_shot_int4 ? kAllreduceGroup / 2 : kAllreduceGroup;
}
FB_HD constexpr bool allreduce_quantized(AllreduceVariant v) {
  return v == AllreduceVariant::two_shot_fp8 || v == AllreduceVariant::two_shot_int4;
}

struct AllreduceParams {
  int ranks = 2;
  std::int64_t rows = 1;     // M
  std::int64_t hidden = 1;   // H
  AllreduceVariant variant = AllreduceVariant::one_shot;

  FB_HD std::int64_t elements() const { return rows * hidden; }  // per rank
  FB_HD std::int64_t groups() const { return (elements() + kAllreduceGroup - 1) / kAllreduceGroup; }
  // Slices are whole groups: rank r owns groups [r * slice_groups, min(groups, (r + 1) * slice_groups)).
  FB_HD std::int64_t slice_groups() const { return (groups() + ranks - 1) / ranks; }
  FB_HD std::int64_t slice_begin(int r) const {
    const std::int64_t g = static_cast<std::int64_t>(r) * slice_groups() * kAllreduceGroup;
    return g < elements() ? g : elements();
  }
  FB_HD std::int64_t slice_end(int r) const { return slice_begin(r + 1); }
  FB_HD std::int64_t wire_bytes() const { return groups() * allreduce_group_bytes(variant); }  // per rank
};

// One rank's view of the group: its index, and every rank's buffers (its own among them).
// Simulated ranks point into one tensor per buffer kind ([R][...]); real ranks hold peer pointers.
struct AllreduceRankView {
  int rank = 0;
  const std::uint16_t* x[kAllreduceMaxRanks] = {};  // bf16 [M*H] inputs
  std::uint16_t* out[kAllreduceMaxRanks] = {};      // bf16 [M*H] results (two-shot: also the reduced slice)
  std::uint8_t* wire[kAllreduceMaxRanks] = {};      // quantized inputs, [groups][group_bytes]
  float* wire_scales[kAllreduceMaxRanks] = {};      // their scales, [groups]
  std::uint8_t* gather[kAllreduceMaxRanks] = {};    // quantized reduced slices, [groups][group_bytes]
  float* gather_scales[kAllreduceMaxRanks] = {};
};

// Simulated ranks: every buffer kind as one [R][...] block.
struct AllreduceSimBuffers {
  const std::uint16_t* x = nullptr;   // bf16 [R][M*H]
  std::uint16_t* out = nullptr;       // bf16 [R][M*H]
  std::uint8_t* wire = nullptr;       // [R][wire_bytes]   (quantized variants)
  float* wire_scales = nullptr;       // [R][groups]
  std::uint8_t* gather = nullptr;     // [R][wire_bytes]
  float* gather_scales = nullptr;     // [R][groups]
};
AllreduceRankView allreduce_sim_view(const AllreduceParams& p, const AllreduceSimBuffers& b, int rank);

// CPU emulation of the simulated ranks: the rank programs in the kernels' phase order and
// arithmetic (allreduce_math.hpp). vendor has no emulation.
void allreduce_emu(const AllreduceParams& p, const AllreduceSimBuffers& b);

// GPU, simulated ranks: every rank's kernels on one stream (ranks x phases launches).
void allreduce_sim_launch(const AllreduceParams& p, const AllreduceSimBuffers& b, void* stream);
// Launches one call of a variant makes in simulated ranks.
int allreduce_sim_launches(const AllreduceParams& p);

}  // namespace fb
