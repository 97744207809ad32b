// The layer step on the CPU at a tiny shape: launch counts per configuration, and the checks catch
// a flipped byte, a NaN and an unwritten (poisoned) output.
#include <gtest/gtest.h>

#include "core/errors.hpp"
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

TEST(LayerStep, LaunchCountsFollowTheSwitches) {
  LayerStep decode(tiny(), LayerPhase::decode, 3, Backend::cpu, nullptr, 1);
  EXPECT_EQ(decode.launches(FusionSwitches::all(true)), 11);
  EXPECT_EQ(decode.launches(FusionSwitches::all(false)), 22);
  EXPECT_EQ(decode.launches(without(Fusion::F4)), 15);  // one launch -> GEMV, gate, count, scan, scatter
  EXPECT_EQ(decode.launches(without(Fusion::F6)), 12);  // the shared add after the reduction
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

TEST(LayerStep, ImpossibleShapesAreInputErrors) {
  AblationLayer l = tiny();
  l.experts = 40;  // the router takes multiples of 32
  EXPECT_THROW(LayerStep(l, LayerPhase::decode, 3, Backend::cpu, nullptr, 1), InputError);
}

}  // namespace
}  // namespace fb
