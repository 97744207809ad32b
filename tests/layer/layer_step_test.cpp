// The layer step on the CPU at a tiny shape: launch counts per configuration, F8 inside the decode
// router's launch, and the checks catch a flipped byte, a NaN and an unwritten (poisoned) output.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/errors.hpp"
#include "kernels/fp8_gemm/fp8_gemm.hpp"
#include "layer/ablation_checks.hpp"
#include "layer/layer_step.hpp"

namespace fb {
namespace {

AblationLayer tiny() {
  AblationLayer l;
  l.hidden = 256;
  l.experts = 32;
  l.topk = 2;
  l.moe_inter = 64;
  l.shared_inter = 128;
  l.qkv_out = 128;
  l.o_proj_in = 128;
  l.router_split_k = 2;
  l.sort_block = 16;
  l.gemm_slices = 2;
  return l;
}

FusionSwitches without(Fusion f) {
  FusionSwitches s = FusionSwitches::all(true);
  s.on[static_cast<int>(f)] = false;
  return s;
}

FusionSwitches without(Fusion f, Fusion g) {
  FusionSwitches s = without(f);
  s.on[static_cast<int>(g)] = false;
  return s;
}

TEST(LayerStep, LaunchCountsFollowTheSwitches) {
  LayerStep decode(tiny(), LayerPhase::decode, 3, Backend::cpu, nullptr, 1);
  EXPECT_EQ(decode.launches(FusionSwitches::all(true)), 10);  // F8's gate_up inside F4's launch
  EXPECT_EQ(decode.launches(FusionSwitches::all(false)), 22);
  // F4 off: GEMV, gate, count, scan, scatter, then F8's own launch (6) against F4's one.
  EXPECT_EQ(decode.launches(without(Fusion::F4)), 15);
  EXPECT_EQ(decode.launches(without(Fusion::F8)), 11);  // F4 alone, then the general GEMM
  EXPECT_EQ(decode.launches(without(Fusion::F4, Fusion::F8)), 15);  // the 5-launch chain + the general GEMM
  EXPECT_EQ(decode.launches(without(Fusion::F6)), 11);  // the shared add after the reduction
  LayerStep wide(tiny(), LayerPhase::decode, 24, Backend::cpu, nullptr, 1);
  EXPECT_EQ(wide.launches(FusionSwitches::all(true)), 10);
  EXPECT_EQ(wide.launches(without(Fusion::F3)), 12);  // router GEMV, reduce, gate + F2 against 2 launches
  LayerStep prefill(tiny(), LayerPhase::prefill, 40, Backend::cpu, nullptr, 1);
  EXPECT_EQ(prefill.launches(without(Fusion::F7)) - prefill.launches(FusionSwitches::all(true)), 2);  // two memsets
}

TEST(LayerStep, TogglesPassAndBrokenOutputsFail) {
  LayerStep step(tiny(), LayerPhase::decode, 3, Backend::cpu, nullptr, 3);
  auto run = [&](const FusionSwitches& s) {
    step.poison();
    step.run(s);
    return take_snapshot(step);
  };
  const StepSnapshot on = run(FusionSwitches::all(true));
  const AblationCheck f2 = compare_snapshots(step, on, run(without(Fusion::F2)), {});
  EXPECT_EQ(f2.outcome, "pass") << f2.detail;
  EXPECT_EQ(f2.claim, "bitwise");
  OutputBounds fold;
  fold.fold = kFoldBound;
  const AblationCheck f6 = compare_snapshots(step, on, run(without(Fusion::F6)), fold);
  EXPECT_EQ(f6.outcome, "pass") << f6.detail;
  EXPECT_EQ(f6.claim, "bound");
  EXPECT_LE(f6.metric, kFoldBound);

  StepSnapshot flipped = on;
  flipped["moe_out"][10] ^= 0x01;
  const AblationCheck broken = compare_snapshots(step, on, flipped, {});
  EXPECT_EQ(broken.outcome, "fail");
  EXPECT_NE(broken.detail.find("moe_out: bytes differ, first at element 5"), std::string::npos) << broken.detail;

  StepSnapshot nan = on;
  nan["residual"][0] = 0xFF;
  nan["residual"][1] = 0xFF;  // bf16 0xFFFF: NaN, identical NaN bytes on both sides must still fail
  EXPECT_EQ(compare_snapshots(step, nan, nan, {}).outcome, "fail");

  step.poison();  // nothing run: every output still holds the poison
  const AblationCheck unwritten = compare_snapshots(step, on, take_snapshot(step), {});
  EXPECT_EQ(unwritten.outcome, "fail");
  EXPECT_NE(unwritten.detail.find("topk_ids: poison left"), std::string::npos) << unwritten.detail;
}

// At decode F8 runs inside the decode router's launch: shared_gate_up must be the canonical F8
// result of the post-norm's q (written before the router in every configuration), whoever runs it.
TEST(LayerStep, F8InsideTheDecodeRouterIsTheCanonicalGemmOfTheNormsQ) {
  const AblationLayer l = tiny();
  LayerStep step(l, LayerPhase::decode, 3, Backend::cpu, nullptr, 5);
  auto run = [&](const FusionSwitches& s) {
    step.poison();
    step.run(s);
    return take_snapshot(step);
  };
  const StepSnapshot on = run(FusionSwitches::all(true));

  const std::vector<std::uint8_t> q = step.download("q"), qs = step.download("q_s"), w = step.download("gate_up_w"),
                                  ws = step.download("gate_up_ws");
  Fp8GemmParams p{3, 2 * l.shared_inter, l.hidden, Fp8Flavour::e4m3fn};
  std::vector<std::uint16_t> c(static_cast<std::size_t>(p.rows * p.cols), 0xFFFF);
  Fp8GemmBuffers b{q.data(), reinterpret_cast<const float*>(qs.data()), w.data(),
                   reinterpret_cast<const float*>(ws.data()), c.data()};
  fp8_gemm_canonical_emu(p, b);
  const std::vector<std::uint8_t>& got = on.at("shared_gate_up");
  ASSERT_EQ(got.size(), c.size() * 2);
  EXPECT_EQ(std::memcmp(got.data(), c.data(), got.size()), 0);

  // The same bits with the router's chain carrying F8, and with F1 off (q from the separate quant).
  for (Fusion f : {Fusion::F4, Fusion::F1}) {
    const AblationCheck check = compare_snapshots(step, on, run(without(f)), {});
    EXPECT_EQ(check.outcome, "pass") << fusion_id(f) << ": " << check.detail;
    EXPECT_EQ(check.claim, "bitwise");
  }
  // F8 off: the general GEMM's blocked order, within the family's pair bound.
  OutputBounds f8;
  f8.gate_up = f8_gate_up_bound(l.hidden);
  f8.after_gate_up = kDownstreamSanity;
  const AblationCheck off = compare_snapshots(step, on, run(without(Fusion::F8)), f8);
  EXPECT_EQ(off.outcome, "pass") << off.detail;
  EXPECT_EQ(off.claim, "bound");
}

// The one launch's F8 blocks are e4m3fn only: an e4m3fnuz layer keeps F8 as its own launch.
TEST(LayerStep, E4m3fnuzKeepsF8ItsOwnLaunch) {
  AblationLayer l = tiny();
  l.fp8 = "e4m3fnuz";
  LayerStep step(l, LayerPhase::decode, 3, Backend::cpu, nullptr, 1);
  EXPECT_EQ(step.launches(FusionSwitches::all(true)), 11);
  EXPECT_EQ(step.launches(without(Fusion::F4)), 15);
  step.poison();
  step.run(FusionSwitches::all(true));
  const StepSnapshot on = take_snapshot(step);
  step.poison();
  step.run(without(Fusion::F4));
  const AblationCheck check = compare_snapshots(step, on, take_snapshot(step), {});
  EXPECT_EQ(check.outcome, "pass") << check.detail;
}

TEST(LayerStep, ImpossibleShapesAreInputErrors) {
  AblationLayer l = tiny();
  l.experts = 40;  // the router takes multiples of 32
  EXPECT_THROW(LayerStep(l, LayerPhase::decode, 3, Backend::cpu, nullptr, 1), InputError);
}

}  // namespace
}  // namespace fb
