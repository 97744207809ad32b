// Router GEMV and gate (F3, F4): the emulation follows the written orders (partials, reduce), its
// logits sit within the derived fp64 bound and the issue's 2e-6 at unit scale (the figures are
// printed), the gate's tie rule, all-equal rows, saturated and tiny logits, NaN (reported, never a
// pass), selection against fp64 scores, softmax; F3 and F4 emulations (fused = chain; the sort
// against the independent reference); bad shapes; and, with a GPU, every kernel against the
// emulation bitwise, both gate entry points equal, F4 at grid sizes that do not divide its work.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "core/errors.hpp"
#include "core/inputs.hpp"
#include "core/registry.hpp"
#include "kernels/fp8_gemm/fp8_gemm_inputs.hpp"
#include "kernels/router/decode_router.hpp"
#include "kernels/router/router.hpp"
#include "kernels/router/router_fused_form.hpp"
#include "kernels/router/router_gemv_map.hpp"
#include "kernels/router/router_inputs.hpp"
#include "kernels/router/router_math.hpp"
#include "kernels/router/router_swiglu.hpp"
#include "reference/codecs/bf16.hpp"
#include "reference/router_ref.hpp"
#include "support/skip_without_gpu.hpp"

namespace fb {
namespace {

// Host tensors of one router problem: inputs from the case's own generators, outputs poisoned.
struct RouterData {
  RouterParams p;
  HostTensor x, w, bias;
  std::vector<float> partials, logits, weights;
  std::vector<std::int32_t> ids;

  RouterData(const RouterParams& params, Distribution d, std::uint64_t seed)
      : p(params),
        x(router_input_specs(params)[0]),
        w(router_input_specs(params)[1]),
        bias(router_input_specs(params)[2]),
        partials(static_cast<std::size_t>(params.split_k * params.rows * params.experts), NAN),
        logits(static_cast<std::size_t>(params.rows * params.experts), NAN),
        weights(static_cast<std::size_t>(params.rows * params.topk), NAN),
        ids(static_cast<std::size_t>(params.rows * params.topk), -7) {
    router_generate_x(p, d, seed, x);
    router_prepare_weights(p, d, seed, w, bias);
  }

  RouterBuffers buffers() {
    return {x.data<std::uint16_t>(), w.bytes.data(), bias.data<float>(), partials.data(),
            logits.data(),           ids.data(),     weights.data()};
  }
  RouterRefTensors ref() const {
    return {x.data<std::uint16_t>(), w.bytes.data(), bias.data<float>(), logits.data(), ids.data(), weights.data()};
  }
};

RouterParams params(std::int64_t rows, std::int64_t k, std::int64_t split, RouterWeight weight = RouterWeight::f32,
                    RouterGate gate = RouterGate::sigmoid_bias) {
  RouterParams p;
  p.rows = rows;
  p.hidden = k;
  p.split_k = split;
  p.weight = weight;
  p.gate = gate;
  return p;
}

const Fp64Check& find_check(const std::vector<Fp64Check>& checks, const std::string& name) {
  for (const Fp64Check& c : checks)
    if (c.quantity == name) return c;
  throw std::runtime_error("no check " + name);
}

bool passes(const Fp64Check& c) {
  if (c.stats.nan > 0 || c.stats.inf > 0) return false;
  const double v = c.bound.metric == "err/ulp/max" ? static_cast<double>(c.stats.ulp_max) : c.stats.abs_max;
  return v <= c.bound.limit;
}

TEST(Router, PartialsFollowTheWrittenLaneOrderAndTheReduceTheSliceOrder) {
  RouterData d(params(3, 1024, 4), Distribution::normal, 11);
  router_chain_emu(d.p, d.buffers());
  const std::int64_t L = 256, E = d.p.experts, ME = d.p.rows * E;
  const float* w = reinterpret_cast<const float*>(d.w.bytes.data());
  for (std::int64_t m : {0, 2})
    for (std::int64_t e : {0, 77, 127}) {
      float slice[4];
      for (std::int64_t s = 0; s < 4; ++s) {
        float lanes[32] = {};
        for (std::int64_t c = 0; c < L / 8; ++c)
          for (std::int64_t j = 0; j < 8; ++j) {
            const std::int64_t k = s * L + c * 8 + j;
            lanes[c % 32] = lanes[c % 32] + bf16_to_float(d.x.data<std::uint16_t>()[m * 1024 + k]) * w[e * 1024 + k];
          }
        for (int h = 16; h > 0; h /= 2)
          for (int l = 0; l < h; ++l) lanes[l] = lanes[l] + lanes[l + h];
        slice[s] = lanes[0];
        EXPECT_EQ(float_bits(d.partials[s * ME + m * E + e]), float_bits(slice[s]));
      }
      EXPECT_EQ(float_bits(d.logits[m * E + e]), float_bits(((slice[0] + slice[1]) + slice[2]) + slice[3]));
    }
}

TEST(Router, LogitsWithinTheDerivedBoundAndTheIssueTargetAtFullSize) {
  for (RouterWeight weight : {RouterWeight::f32, RouterWeight::bf16})
    for (std::int64_t rows : {1, 8})
      for (std::int64_t split : {1, 2, 4, 8}) {
        RouterData d(params(rows, 6144, split, weight), Distribution::normal, 100 + rows + split);
        router_chain_emu(d.p, d.buffers());
        const auto checks = router_check_fp64(d.p, d.ref(), true);
        const Fp64Check& derived = find_check(checks, "logits/derived");
        const Fp64Check& abs = find_check(checks, "logits/abs");
        EXPECT_TRUE(passes(derived)) << derived.stats.abs_max;
        EXPECT_TRUE(passes(abs)) << abs.stats.abs_max;
        EXPECT_TRUE(passes(find_check(checks, "weights")));
        EXPECT_TRUE(passes(find_check(checks, "ids")));
        std::printf("logits vs fp64: W %s M=%lld S=%lld: max abs %.3g (target 2e-6), max %lld fp32 ulp, "
                    "max error/derived bound %.3g\n",
                    weight == RouterWeight::f32 ? "f32" : "bf16", static_cast<long long>(rows),
                    static_cast<long long>(split), abs.stats.abs_max, static_cast<long long>(abs.stats.ulp_max),
                    derived.stats.abs_max);
      }
}

TEST(Router, SplitKChangesTheOrderNotTheBound) {
  RouterData one(params(4, 2048, 1), Distribution::normal, 5), eight(params(4, 2048, 8), Distribution::normal, 5);
  router_chain_emu(one.p, one.buffers());
  router_chain_emu(eight.p, eight.buffers());
  EXPECT_EQ(std::memcmp(one.partials.data(), one.logits.data(), one.logits.size() * 4), 0);  // S = 1: P0 is the logit
  int differ = 0;
  for (std::size_t i = 0; i < one.logits.size(); ++i) differ += one.logits[i] != eight.logits[i];
  EXPECT_GT(differ, 0);  // another order, other roundings
  EXPECT_TRUE(passes(find_check(router_check_fp64(eight.p, eight.ref(), true), "logits/derived")));
}

TEST(Router, TiesGoToTheLowerIdAndAnAllEqualRowTakesTheFirstK) {
  RouterParams p = params(1, 64, 1);
  std::vector<float> logits(128, -1.0f), bias(128, 0.0f), w(4);
  std::vector<std::int32_t> ids(4);
  logits[90] = logits[17] = logits[40] = 2.0f;  // a three-way tie at the top
  logits[3] = 1.0f;
  router_gate_row_emu(p, logits.data(), bias.data(), ids.data(), w.data());
  EXPECT_EQ(ids, (std::vector<std::int32_t>{17, 40, 90, 3}));
  EXPECT_EQ(float_bits(w[0]), float_bits(w[1]));

  std::fill(logits.begin(), logits.end(), 0.25f);
  router_gate_row_emu(p, logits.data(), bias.data(), ids.data(), w.data());
  EXPECT_EQ(ids, (std::vector<std::int32_t>{0, 1, 2, 3}));
  for (float v : w) EXPECT_EQ(v, 0.5f);  // (p / 4p) * 2

  // -0 and +0 scores tie (p = +0 saturated; +0 + -0 and +0 + +0 are both +0 or -0): the lower id first.
  std::fill(logits.begin(), logits.end(), -200.0f);  // p = 0 (saturated)
  bias.assign(128, -1.0f);
  bias[9] = -0.0f;
  bias[5] = 0.0f;
  router_gate_row_emu(p, logits.data(), bias.data(), ids.data(), w.data());
  EXPECT_EQ(ids[0], 5);
  EXPECT_EQ(ids[1], 9);
}

// The gate kernels sort each lane's candidates with router_sort_desc8 before the selection rounds.
// A compare-exchange network sorts every input iff it sorts every 0-1 input (the 0-1 principle):
// all 256 are checked, then random 64-bit keys with repeats against std::sort; a network with one
// comparator dropped is caught (so the check can fail).
TEST(Router, CandidateSortingNetworkSortsEveryInput) {
  const auto sorted_desc = [](const std::uint64_t (&c)[8]) {
    for (int i = 0; i + 1 < 8; ++i)
      if (c[i] < c[i + 1]) return false;
    return true;
  };
  for (unsigned bits = 0; bits < 256; ++bits) {
    std::uint64_t c[8];
    for (int i = 0; i < 8; ++i) c[i] = (bits >> i) & 1u;
    router_sort_desc8(c);
    EXPECT_TRUE(sorted_desc(c)) << "0-1 input " << bits;
  }
  std::uint64_t state = 0x9E3779B97F4A7C15ull;
  for (int t = 0; t < 2000; ++t) {
    std::uint64_t c[8], ref[8];
    for (int i = 0; i < 8; ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      ref[i] = c[i] = (state >> 33) % 16 == 0 ? 0 : state >> (t % 3 == 0 ? 60 : 8);  // zeros and repeats
    }
    router_sort_desc8(c);
    std::sort(ref, ref + 8, [](std::uint64_t a, std::uint64_t b) { return a > b; });
    for (int i = 0; i < 8; ++i) ASSERT_EQ(c[i], ref[i]) << "trial " << t << " slot " << i;
  }
  // The check fails for a broken network: the same comparators without the last one.
  unsigned failures = 0;
  for (unsigned bits = 0; bits < 256; ++bits) {
    std::uint64_t c[8];
    for (int i = 0; i < 8; ++i) c[i] = (bits >> i) & 1u;
    router_sort_desc8<18>(c);
    failures += !sorted_desc(c);
  }
  EXPECT_GT(failures, 0u);
}

TEST(Router, SaturatedAndTinyLogits) {
  RouterParams p = params(1, 64, 1);
  std::vector<float> logits(128), bias(128), w(4);
  std::vector<std::int32_t> ids(4);
  for (int e = 0; e < 128; ++e) {
    logits[e] = e % 2 ? 1000.0f : -1000.0f;
    bias[e] = 0.001f * static_cast<float>(e % 7);
  }
  router_gate_row_emu(p, logits.data(), bias.data(), ids.data(), w.data());
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(ids[i] % 2, 1);            // p = 1 beats p = 0 whatever the bias
    EXPECT_EQ(ids[i] % 7, 6);            // then the largest bias, lower ids first
    EXPECT_EQ(w[i], 0.5f);               // four p = 1: (1 / 4) * 2
  }
  EXPECT_LT(ids[0], ids[1]);
  for (int e = 0; e < 128; ++e) logits[e] = 1e-30f * static_cast<float>(e);
  bias.assign(128, 0.0f);
  router_gate_row_emu(p, logits.data(), bias.data(), ids.data(), w.data());
  for (int i = 0; i < 4; ++i) EXPECT_EQ(w[i], 0.5f);  // sigmoid(tiny) rounds to 0.5
  EXPECT_EQ(ids[0], 0);                               // equal scores: the lower ids
}

TEST(Router, EdgeRowsPassTheirChecksAndHitTheirCorners) {
  for (RouterGate gate : {RouterGate::sigmoid_bias, RouterGate::softmax}) {
    RouterData d(params(16, 512, 2, RouterWeight::f32, gate), Distribution::edge, 3);
    router_fused_emu(d.p, d.buffers());
    for (const Fp64Check& c : router_check_fp64(d.p, d.ref(), false)) EXPECT_TRUE(passes(c)) << c.quantity;
    EXPECT_EQ(std::vector<std::int32_t>(d.ids.begin(), d.ids.begin() + 4), (std::vector<std::int32_t>{0, 1, 2, 3}));
    for (int i = 0; i < 4; ++i) EXPECT_EQ(d.weights[i], 0.5f);
    // W rows 2j+1 = 2j: equal logits for those pairs.
    for (int m = 0; m < 16; ++m) EXPECT_EQ(float_bits(d.logits[m * 128 + 1]), float_bits(d.logits[m * 128]));
  }
}

TEST(Router, NanInXIsReportedNeverAPass) {
  RouterData d(params(5, 512, 2), Distribution::nan, 9);
  router_chain_emu(d.p, d.buffers());
  for (int e = 0; e < 128; ++e) EXPECT_TRUE(std::isnan(d.logits[2 * 128 + e]));
  EXPECT_EQ(std::vector<std::int32_t>(d.ids.begin() + 8, d.ids.begin() + 12), (std::vector<std::int32_t>{0, 1, 2, 3}));
  const auto checks = router_check_fp64(d.p, d.ref(), true);
  EXPECT_FALSE(passes(find_check(checks, "logits/derived")));
  EXPECT_FALSE(passes(find_check(checks, "weights")));
  EXPECT_FALSE(passes(find_check(checks, "ids")));
}

TEST(Router, SelectionMatchesFp64AndABrokenIdIsCaught) {
  for (RouterGate gate : {RouterGate::sigmoid_bias, RouterGate::softmax})
    for (std::int64_t topk : {1, 4, 8}) {
      RouterParams p = params(24, 768, 4, RouterWeight::bf16, gate);
      p.topk = topk;
      RouterData d(p, Distribution::normal, 21 + topk);
      router_fused_emu(d.p, d.buffers());
      for (const Fp64Check& c : router_check_fp64(d.p, d.ref(), true)) EXPECT_TRUE(passes(c)) << c.quantity;
      d.ids[5] = d.ids[5] == 127 ? 126 : 127;  // a wrong choice far from a tie
      EXPECT_FALSE(passes(find_check(router_check_fp64(d.p, d.ref(), true), "ids")));
    }
}

TEST(Router, SoftmaxWeightsSumToTheScalingFactor) {
  RouterParams p = params(1, 64, 1, RouterWeight::f32, RouterGate::softmax);
  std::vector<float> logits(128), w(4);
  std::vector<std::int32_t> ids(4);
  for (int e = 0; e < 128; ++e) logits[e] = std::sin(static_cast<float>(e)) * 3.0f;
  router_gate_row_emu(p, logits.data(), nullptr, ids.data(), w.data());
  EXPECT_NEAR(w[0] + w[1] + w[2] + w[3], 2.0, 1e-6);
  EXPECT_GT(w[0], w[3]);
}

TEST(Router, BadShapesAreInputErrors) {
  RouterParams p = params(1, 6144, 1);
  p.experts = 100;
  EXPECT_THROW(router_validate(p), InputError);
  p = params(1, 6144, 5);  // 6144 / 5 is not whole
  EXPECT_THROW(router_validate(p), InputError);
  p = params(1, 6144, 1);
  p.topk = 9;
  EXPECT_THROW(router_validate(p), InputError);
  DecodeRouterParams f4;
  f4.router = params(17, 6144, 1);
  f4.buf_cols = 64;
  EXPECT_THROW(decode_router_validate(f4), InputError);
  // F4's shared GEMM (F8): its rows are the router's tokens, K a multiple of 16, e4m3fn only.
  f4.router = params(3, 6144, 1);
  f4.shared = Fp8GemmParams{3, 1536, 6144, Fp8Flavour::e4m3fn};
  EXPECT_NO_THROW(decode_router_validate(f4));
  f4.shared.rows = 4;
  EXPECT_THROW(decode_router_validate(f4), InputError);
  f4.shared.rows = 3;
  f4.shared.depth = 6150;
  EXPECT_THROW(decode_router_validate(f4), InputError);
  f4.shared.depth = 6144;
  f4.shared.flavour = Fp8Flavour::e4m3fnuz;
  EXPECT_THROW(decode_router_validate(f4), InputError);
}

// The fused router's form: the rule, the knob (a bad value names the variable), and the case's
// launch counts and launch_configs, which call the launcher's own choice.
TEST(Router, FusedFormFollowsTheRuleAndTheKnob) {
  for (std::int64_t rows : {1, 3, 8, 16, 17, 512}) {
    const bool one_exists = rows <= kRouterReduceLaunchRows;
    const RouterFusedForm by_rule = router_fused_form(rows, nullptr);
    EXPECT_EQ(by_rule == RouterFusedForm::one_launch, one_exists && rows <= kRouterOneLaunchMaxRows) << rows;
    EXPECT_EQ(router_fused_form(rows, ""), by_rule) << rows;
    EXPECT_EQ(router_fused_form(rows, "two"), RouterFusedForm::gemv_then_gate) << rows;
    EXPECT_EQ(router_fused_form(rows, "one"), one_exists ? RouterFusedForm::one_launch : RouterFusedForm::gemv_then_gate)
        << rows;
    EXPECT_EQ(router_chain_launches(rows), one_exists ? 2 : 3) << rows;
  }
  try {
    router_fused_form(3, "1");
    ADD_FAILURE() << "a bad knob value was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(kRouterFusedFormVariable), std::string::npos) << e.what();
  }

  Registry reg;
  register_all_families(reg);
  const KernelCase& kc = *reg.find("router/gate");
  auto point = [](std::int64_t rows) {
    Point pt;
    pt.set("M", rows);
    pt.set("K", std::int64_t{6144});
    pt.set("E", std::int64_t{128});
    pt.set("split_k", std::int64_t{4});
    pt.set("weight", std::string("f32"));
    pt.set("gate", std::string("sigmoid_bias"));
    pt.set("topk", std::int64_t{4});
    pt.set("dist", std::string("normal"));
    return pt;
  };
  const VariantId fused = kc.variant_id("fused"), chain = kc.variant_id("chain");
  unsetenv(kRouterFusedFormVariable);
  for (std::int64_t rows : {1, 16, 24}) {
    const auto inst = kc.make(point(rows));
    const RouterFusedForm form = router_fused_form(rows, nullptr);
    EXPECT_EQ(inst->launches(fused), router_fused_launches(form)) << rows;
    EXPECT_EQ(inst->launch_config(fused, Backend::gpu), router_fused_form_text(form)) << rows;
    EXPECT_EQ(inst->launches(chain), router_chain_launches(rows)) << rows;
    EXPECT_EQ(inst->launch_config(chain, Backend::gpu), router_chain_form_text(rows)) << rows;
    EXPECT_EQ(inst->launch_config(fused, Backend::cpu), "") << rows;
  }
  setenv(kRouterFusedFormVariable, "two", 1);
  EXPECT_EQ(kc.make(point(1))->launches(fused), 2);
  EXPECT_EQ(kc.make(point(1))->launch_config(fused, Backend::gpu), "GEMV, then a gate launch");
  setenv(kRouterFusedFormVariable, "one", 1);
  EXPECT_EQ(kc.make(point(16))->launches(fused), 1);
  EXPECT_EQ(kc.make(point(24))->launches(fused), 2);  // past 16 rows the one launch does not exist
  setenv(kRouterFusedFormVariable, "three", 1);
  EXPECT_THROW(kc.make(point(1))->launches(fused), InputError);
  unsetenv(kRouterFusedFormVariable);
}

// ---- the GEMV's work-item mapping ----

// Partials [S][M][E] that the items of `sh` write, as the kernels index them (router_gemv_map.hpp:
// item -> rows, slice, first expert; lane group g's accumulator q -> expert; a partial written by
// lane 0 only for the item's live rows), counted per (slice, row, expert); `item_at` is the
// mapping under test. Returns the number of partials not written exactly once, plus every write
// outside [S][M][E] and every item with no live row or more rows than its tile.
template <class ItemAt>
std::int64_t gemv_mapping_errors(const RouterGemvShape& sh, ItemAt&& item_at) {
  std::vector<int> hits(static_cast<std::size_t>(sh.split_k) * sh.rows * sh.experts, 0);
  std::int64_t errors = 0;
  for (int item = 0; item < sh.items(); ++item) {
    const RouterGemvItem it = item_at(sh, item);
    if (it.rows < 1 || it.rows > sh.row_tile) ++errors;
    for (int g = 0; g < kRouterGemvGroups; ++g)
      for (int q = 0; q < sh.experts_per_group(); ++q)
        for (int r = 0; r < it.rows; ++r) {
          const int m = it.m0 + r, e = router_gemv_expert(sh, it, g, q);
          if (it.s < 0 || it.s >= sh.split_k || m < 0 || m >= sh.rows || e < 0 || e >= sh.experts) {
            ++errors;
            continue;
          }
          ++hits[(static_cast<std::size_t>(it.s) * sh.rows + m) * sh.experts + e];
        }
  }
  for (int h : hits) errors += h != 1;
  return errors;
}

TEST(Router, GemvMappingWritesEveryPartialExactlyOnce) {
  // The router/gate plan: the narrow item's tiles up to 16 rows, the wide item (16 experts) past
  // them, its tile 8 while 16-row items would leave multiprocessors idle.
  auto plan_is = [](int rows, int split, int sms, int tile, int item_experts) {
    const RouterGemvPlan plan = router_gemv_plan(rows, 128, split, sms);
    return plan.row_tile == tile && plan.item_experts == item_experts;
  };
  EXPECT_TRUE(plan_is(1, 4, 132, 1, 8));
  EXPECT_TRUE(plan_is(3, 4, 132, 4, 8));
  EXPECT_TRUE(plan_is(16, 4, 132, 8, 8));
  EXPECT_TRUE(plan_is(17, 4, 132, 8, 16));
  EXPECT_TRUE(plan_is(24, 4, 132, 8, 16));
  EXPECT_TRUE(plan_is(64, 4, 132, 8, 16));
  EXPECT_TRUE(plan_is(65, 4, 132, 16, 16));
  EXPECT_TRUE(plan_is(96, 4, 132, 16, 16));
  EXPECT_TRUE(plan_is(512, 4, 132, 16, 16));
  EXPECT_TRUE(plan_is(24, 8, 1, 16, 16));
  // The plan's shapes (the kernels' own choice) at every M, S and multiprocessor count below, and
  // every row tile and item width any launcher uses (tiles 1, 2, 4, 8 with 8 experts per item; F3's
  // 8; the wide item's tiles 8 and 16 with 16 experts), odd and even M, split_k 1..8, E = 32..256.
  std::vector<int> plan_rows;
  for (int rows = 1; rows <= 40; ++rows) plan_rows.push_back(rows);
  for (int rows : {63, 64, 65, 95, 96, 97, 191, 192, 193, 511, 512, 513}) plan_rows.push_back(rows);
  for (int rows : plan_rows)
    for (int split : {1, 2, 4, 8})
      for (int sms : {1, 80, 132, 304}) {
        const RouterGemvPlan plan = router_gemv_plan(rows, 128, split, sms);
        RouterGemvShape sh{rows, 6144, 128, split, plan.row_tile};
        sh.item_experts = plan.item_experts;
        ASSERT_EQ(gemv_mapping_errors(sh, router_gemv_item_at), 0) << "M=" << rows << " S=" << split << " SMs=" << sms;
      }
  std::int64_t shapes = 0;
  for (int experts : {32, 128, 256})
    for (int rows : {1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 23, 24, 33, 95, 96, 191, 192, 511, 512})
      for (int split : {1, 2, 3, 4, 8})
        for (int tile : {1, 2, 4, 8, 16})
          for (int item_experts : {8, 16}) {
            RouterGemvShape sh{rows, 6144, experts, split, tile};
            sh.item_experts = item_experts;
            EXPECT_EQ(gemv_mapping_errors(sh, router_gemv_item_at), 0)
                << "E=" << experts << " M=" << rows << " S=" << split << " tile=" << tile << " item_experts=" << item_experts;
            ++shapes;
          }
  EXPECT_EQ(shapes, 3 * 19 * 5 * 5 * 2);
  // The check has teeth: mappings that drop or duplicate work items are caught.
  RouterGemvShape sh{17, 6144, 128, 4, 16};
  sh.item_experts = 16;
  EXPECT_GT(gemv_mapping_errors(sh,
                                [](const RouterGemvShape& s, int item) {
                                  RouterGemvItem it = router_gemv_item_at(s, item);
                                  it.e0 = item % s.expert_groups() * kRouterGemvGroups;  // 8 apart, not 16: drops
                                  return it;
                                }),
            0);
  EXPECT_GT(gemv_mapping_errors(sh,
                                [](const RouterGemvShape& s, int item) {
                                  RouterGemvItem it = router_gemv_item_at(s, item);
                                  it.rows = s.row_tile;  // the last tile's spare rows: out of range
                                  return it;
                                }),
            0);
  EXPECT_GT(gemv_mapping_errors(sh,
                                [](const RouterGemvShape& s, int item) {
                                  RouterGemvItem it = router_gemv_item_at(s, item);
                                  it.s = item / s.expert_groups() % (s.split_k - 1);  // a slice twice, one never
                                  return it;
                                }),
            0);
}

// ---- F3 and F4 emulations ----

struct SwigluData {
  std::vector<std::uint16_t> gate_up;
  std::vector<std::uint8_t> q, scales;
};

SwigluData swiglu_data(const SwigluFp8Params& s, std::uint64_t seed) {
  HostTensor t({"g", DType::bf16, {{"T", s.rows}, {"2d", 2 * s.d}}});
  fill_tensor(t, Distribution::normal, seed, 3);
  return {std::vector<std::uint16_t>(t.data<std::uint16_t>(), t.data<std::uint16_t>() + s.rows * 2 * s.d),
          std::vector<std::uint8_t>(static_cast<std::size_t>(s.rows * s.d), 0xEE),
          std::vector<std::uint8_t>(static_cast<std::size_t>(s.rows * s.d / 128 + s.rows) * 4, 0xEE)};
}

TEST(RouterSwiglu, FusedEmulationEqualsChainAndTheLandedF2) {
  RouterSwigluParams p;
  p.router = params(24, 512, 4);
  p.swiglu.rows = 24;
  p.swiglu.d = 256;
  p.swiglu.granularity = Fp8Granularity::per_1x128;
  router_swiglu_validate(p);
  RouterData a(p.router, Distribution::normal, 1), b(p.router, Distribution::normal, 1);
  SwigluData sa = swiglu_data(p.swiglu, 2), sb = swiglu_data(p.swiglu, 2), sf2 = swiglu_data(p.swiglu, 2);
  router_swiglu_fused_emu(p, {a.buffers(), {sa.gate_up.data(), nullptr, sa.q.data(), sa.scales.data()}});
  router_swiglu_chain_emu(p, {b.buffers(), {sb.gate_up.data(), nullptr, sb.q.data(), sb.scales.data()}});
  swiglu_fp8_fused_emu(p.swiglu, {sf2.gate_up.data(), nullptr, sf2.q.data(), sf2.scales.data()});
  EXPECT_EQ(a.logits, b.logits);
  EXPECT_EQ(a.ids, b.ids);
  EXPECT_EQ(a.weights, b.weights);
  EXPECT_EQ(sa.q, sb.q);
  EXPECT_EQ(sa.scales, sb.scales);
  EXPECT_EQ(sa.q, sf2.q);
  p.swiglu.d = 200;
  EXPECT_THROW(router_swiglu_validate(p), InputError);  // 1x128 needs d % 128 == 0
}

struct SortData {
  std::vector<std::int32_t> sorted_ids, expert_ids, num_valid{-1, -1};
  std::vector<float> sorted_weights;
  std::vector<std::uint16_t> moe_buf;
  std::vector<std::int32_t> counts, info;
  explicit SortData(const MoeSortMxfp4Params& s)
      : sorted_ids(static_cast<std::size_t>(s.max_entries()), -9),
        expert_ids(static_cast<std::size_t>(s.max_blocks()), -9),
        sorted_weights(static_cast<std::size_t>(s.max_entries()), NAN),
        moe_buf(static_cast<std::size_t>(s.tokens * s.buf_cols), 0x5A5A),
        counts(static_cast<std::size_t>(s.experts)),
        info(static_cast<std::size_t>(MoeExpertInfoLayout{s.experts}.words())) {}
  void attach(DecodeRouterBuffers& b) {
    b.sorted_token_ids = sorted_ids.data();
    b.sorted_weights = sorted_weights.data();
    b.sorted_expert_ids = expert_ids.data();
    b.num_valid_ids = num_valid.data();
    b.moe_buf = moe_buf.data();
    b.chunk_counts = counts.data();
    b.expert_info = info.data();
  }
  MoeSortMxfp4Outputs outputs(const MoeSortMxfp4Params& s) const {
    MoeSortMxfp4Outputs o;
    o.sorted_token_ids = sorted_ids.data();
    o.sorted_weights = sorted_weights.data();
    o.sorted_expert_ids = expert_ids.data();
    o.num_valid_ids = num_valid.data();
    o.moe_buf = moe_buf.data();
    o.entries = s.max_entries();
    o.blocks = s.max_blocks();
    return o;
  }
};

TEST(DecodeRouter, EmulationSortsTheGatesChoiceLikeTheReference) {
  for (std::int64_t tokens : {1, 3, 16}) {
    DecodeRouterParams p;
    p.router = params(tokens, 768, 2);
    p.buf_cols = 64;
    decode_router_validate(p);
    const MoeSortMxfp4Params s = p.sort();
    RouterData d(p.router, Distribution::edge, 4);
    SortData sd(s);
    DecodeRouterBuffers b{d.buffers()};
    sd.attach(b);
    decode_router_fused_emu(p, b);
    MoeSortRefProblem rp;
    rp.tokens = s.tokens;
    rp.topk = s.topk;
    rp.experts = s.experts;
    rp.block = s.block;
    rp.cols = s.cols;
    rp.buf_cols = s.buf_cols;
    for (const Fp64Check& c : router_check_sort_fp64(rp, d.ids.data(), d.weights.data(), sd.outputs(s)))
      EXPECT_TRUE(passes(c)) << c.quantity << " T=" << tokens;
    EXPECT_EQ(sd.num_valid[1], tokens);
  }
}

// ---- GPU against the emulation ----
#if FUSEBENCH_HAS_GPU

// A device copy of a host vector, freed at scope end.
struct DeviceCopy {
  void* ptr = nullptr;
  std::size_t bytes = 0;
  DeviceCopy(const void* host, std::size_t n) : ptr(gpu::allocate(n)), bytes(n) { gpu::copy_to_device(ptr, host, n); }
  ~DeviceCopy() { gpu::release(ptr); }
  template <class T>
  std::vector<T> download() const {
    std::vector<T> v(bytes / sizeof(T));
    gpu::copy_to_host(v.data(), ptr, bytes);
    return v;
  }
  template <class T>
  T* get() const {
    return static_cast<T*>(ptr);
  }
};

template <class T>
DeviceCopy device_of(const std::vector<T>& v) {
  return DeviceCopy(v.data(), v.size() * sizeof(T));
}

// The router's tensors on the device (outputs poisoned with `poison`).
struct DeviceRouter {
  DeviceCopy x, w, bias, partials, logits, ids, weights;
  DeviceRouter(const RouterData& d, std::uint8_t poison)
      : x(d.x.bytes.data(), d.x.bytes.size()),
        w(d.w.bytes.data(), d.w.bytes.size()),
        bias(d.bias.bytes.data(), d.bias.bytes.size()),
        partials(std::vector<std::uint8_t>(d.partials.size() * 4, poison).data(), d.partials.size() * 4),
        logits(std::vector<std::uint8_t>(d.logits.size() * 4, poison).data(), d.logits.size() * 4),
        ids(std::vector<std::uint8_t>(d.ids.size() * 4, poison).data(), d.ids.size() * 4),
        weights(std::vector<std::uint8_t>(d.weights.size() * 4, poison).data(), d.weights.size() * 4) {}
  RouterBuffers buffers() const {
    return {x.get<const std::uint16_t>(), w.get<const void>(), bias.get<const float>(), partials.get<float>(),
            logits.get<float>(),         ids.get<std::int32_t>(), weights.get<float>()};
  }
  void expect_equals(const RouterData& want, const std::string& where) const {
    EXPECT_EQ(std::memcmp(partials.download<float>().data(), want.partials.data(), partials.bytes), 0) << where;
    EXPECT_EQ(std::memcmp(logits.download<float>().data(), want.logits.data(), logits.bytes), 0) << where;
    EXPECT_EQ(ids.download<std::int32_t>(), want.ids) << where;
    EXPECT_EQ(std::memcmp(weights.download<float>().data(), want.weights.data(), weights.bytes), 0) << where;
  }
};

TEST(Router, GpuGemvGateAndFusedGateEqualTheEmulationBitwise) {
  FB_SKIP_WITHOUT_GPU();
  void* stream = gpu::create_stream();
  for (RouterWeight weight : {RouterWeight::f32, RouterWeight::bf16})
    for (RouterGate gate : {RouterGate::sigmoid_bias, RouterGate::softmax})
      for (std::int64_t rows : {1, 3, 8, 9, 12, 16, 17, 24, 96, 192, 512})  // 9, 12: the fused tail's row pairs with spares
        for (std::int64_t split : {1, 2, 4, 8}) {
          if (rows > 24 && (split == 2 || gate == RouterGate::softmax || weight == RouterWeight::bf16)) continue;
          const Distribution dist = rows == 16 ? Distribution::edge : Distribution::normal;
          RouterData want(params(rows, 6144, split, weight, gate), dist, static_cast<std::uint64_t>(rows * 10 + split));
          router_chain_emu(want.p, want.buffers());
          const std::string where = "M=" + std::to_string(rows) + " S=" + std::to_string(split);
          // chain, then the fused router in each form it has at these rows (router_fused_form.hpp)
          for (int form : {-1, 0, 1}) {
            const auto fused_form = form == 0 ? RouterFusedForm::one_launch : RouterFusedForm::gemv_then_gate;
            if (fused_form == RouterFusedForm::one_launch && rows > kRouterReduceLaunchRows) continue;
            const std::string name = form < 0 ? " chain" : " fused, " + router_fused_form_text(fused_form);
            for (std::uint8_t poison : {std::uint8_t{0xFF}, std::uint8_t{0x5A}}) {
              DeviceRouter dev(want, poison);
              if (form < 0)
                router_chain_launch(want.p, dev.buffers(), stream);
              else
                router_fused_launch_as(want.p, dev.buffers(), fused_form, stream);
              gpu::synchronize(stream);
              dev.expect_equals(want, where + name);
            }
          }
        }
  gpu::destroy_stream(stream);
}

TEST(RouterSwiglu, GpuFusedAndChainEqualTheEmulationBitwise) {
  FB_SKIP_WITHOUT_GPU();
  void* stream = gpu::create_stream();
  for (std::int64_t rows : {3, 24, 96, 192})
    for (auto g : {Fp8Granularity::per_token, Fp8Granularity::per_1x128})
      for (std::int64_t split : {1, 4}) {
        RouterSwigluParams p;
        p.router = params(rows, 6144, split);
        p.swiglu.rows = rows;
        p.swiglu.d = 768;
        p.swiglu.granularity = g;
        RouterData want(p.router, Distribution::normal, 40 + rows);
        SwigluData sw = swiglu_data(p.swiglu, 41);
        router_swiglu_chain_emu(p, {want.buffers(), {sw.gate_up.data(), nullptr, sw.q.data(), sw.scales.data()}});
        for (bool fused : {false, true}) {
          DeviceRouter dev(want, 0xFF);
          DeviceCopy gate_up = device_of(sw.gate_up), q = device_of(std::vector<std::uint8_t>(sw.q.size(), 0xFF)),
                     scales = device_of(std::vector<std::uint8_t>(sw.scales.size(), 0xEE));
          const RouterSwigluBuffers b{dev.buffers(),
                                      {gate_up.get<const std::uint16_t>(), nullptr, q.get<std::uint8_t>(), scales.ptr}};
          (fused ? router_swiglu_fused_launch : router_swiglu_chain_launch)(p, b, stream);
          gpu::synchronize(stream);
          const std::string where = "T=" + std::to_string(rows) + (fused ? " fused" : " chain");
          dev.expect_equals(want, where);
          EXPECT_EQ(q.download<std::uint8_t>(), sw.q) << where;
          EXPECT_EQ(scales.download<std::uint8_t>(), sw.scales) << where;
        }
      }
  gpu::destroy_stream(stream);
}

// The one launch at grid sizes that do not divide its work items (16 S items for E = 128), one
// block included, several launches in a row (the ticket counter resets itself), and the chain;
// with F8's blocks beside the router's (N = 1536 or an odd 136 columns: a partial last block;
// none at S = 8, T = 1), its bf16 output against the canonical emulation.
TEST(DecodeRouter, GpuEqualsTheEmulationAtEveryGridSize) {
  FB_SKIP_WITHOUT_GPU();
  void* stream = gpu::create_stream();
  for (std::int64_t tokens : {1, 3, 8, 16})
    for (std::int64_t split : {1, 4, 8}) {
      DecodeRouterParams p;
      p.router = params(tokens, 6144, split);
      p.buf_cols = 6144;
      const std::int64_t n = tokens == 1 && split == 8 ? 0 : (split == 4 ? 136 : 1536);
      p.shared = Fp8GemmParams{tokens, n, 6144, Fp8Flavour::e4m3fn};
      decode_router_validate(p);
      std::vector<std::uint8_t> fa(static_cast<std::size_t>(tokens * 6144)), fb(static_cast<std::size_t>(n * 6144));
      std::vector<float> fas(static_cast<std::size_t>(tokens)), fbs(static_cast<std::size_t>(n));
      std::vector<std::uint16_t> fc(static_cast<std::size_t>(tokens * n), 0xFFFF);
      fill_fp8_operand(fa.data(), tokens, 6144, Distribution::normal, Fp8Flavour::e4m3fn, 90 + tokens, 0);
      fill_fp8_operand(fb.data(), n, 6144, Distribution::normal, Fp8Flavour::e4m3fn, 90 + tokens, 2);
      fill_fp8_scales(fas.data(), tokens, 90 + tokens, 1);
      fill_fp8_scales(fbs.data(), n, 90 + tokens, 3);
      const MoeSortMxfp4Params s = p.sort();
      RouterData want(p.router, tokens == 16 ? Distribution::edge : Distribution::normal, 70 + tokens);
      SortData sw(s);
      DecodeRouterBuffers wb{want.buffers()};
      sw.attach(wb);
      wb.shared = {fa.data(), fas.data(), fb.data(), fbs.data(), fc.data()};
      decode_router_chain_emu(p, wb);
      DeviceCopy da = device_of(fa), das = device_of(fas), dbw = device_of(fb.empty() ? std::vector<std::uint8_t>(16) : fb),
                 dbs = device_of(fbs.empty() ? std::vector<float>(1) : fbs);
      const std::int64_t valid = sw.num_valid[0];
      for (int grid : {0, 1, 3, 7, 13, 100, 1000}) {
        for (int repeat = 0; repeat < 2; ++repeat) {
          p.grid_blocks = grid;
          DeviceRouter dev(want, 0xFF);
          DeviceCopy sorted_ids = device_of(std::vector<std::int32_t>(sw.sorted_ids.size(), -1)),
                     sorted_w = device_of(std::vector<float>(sw.sorted_weights.size(), NAN)),
                     expert_ids = device_of(std::vector<std::int32_t>(sw.expert_ids.size(), -1)),
                     num_valid = device_of(std::vector<std::int32_t>(2, -1)),
                     moe_buf = device_of(std::vector<std::uint16_t>(sw.moe_buf.size(), 0x7FC0)),
                     counts = device_of(sw.counts), info = device_of(sw.info);
          DeviceCopy dc = device_of(std::vector<std::uint16_t>(std::max<std::size_t>(fc.size(), 1), 0x7FC1));
          const Fp8GemmBuffers shared{da.get<const std::uint8_t>(), das.get<const float>(), dbw.get<const std::uint8_t>(),
                                      dbs.get<const float>(), dc.get<std::uint16_t>()};
          DecodeRouterBuffers b{dev.buffers(),          sorted_ids.get<std::int32_t>(), sorted_w.get<float>(),
                                expert_ids.get<std::int32_t>(), num_valid.get<std::int32_t>(),
                                moe_buf.get<std::uint16_t>(),   counts.get<std::int32_t>(), info.get<std::int32_t>(),
                                shared};
          const bool chain = grid == 1000;  // the chain once per shape
          (chain ? decode_router_chain_launch : decode_router_fused_launch)(p, b, stream);
          gpu::synchronize(stream);
          const std::string where = "T=" + std::to_string(tokens) + " S=" + std::to_string(split) +
                                    " grid=" + std::to_string(grid) + (chain ? " chain" : " fused");
          dev.expect_equals(want, where);
          EXPECT_EQ(num_valid.download<std::int32_t>(), sw.num_valid) << where;
          const auto got_ids = sorted_ids.download<std::int32_t>();
          const auto got_w = sorted_w.download<float>();
          const auto got_e = expert_ids.download<std::int32_t>();
          EXPECT_TRUE(std::equal(got_ids.begin(), got_ids.begin() + valid, sw.sorted_ids.begin())) << where;
          EXPECT_EQ(std::memcmp(got_w.data(), sw.sorted_weights.data(), static_cast<std::size_t>(valid) * 4), 0) << where;
          EXPECT_TRUE(std::equal(got_e.begin(), got_e.begin() + valid / s.block, sw.expert_ids.begin())) << where;
          EXPECT_EQ(moe_buf.download<std::uint16_t>(), sw.moe_buf) << where;
          if (n > 0) {
            EXPECT_EQ(dc.download<std::uint16_t>(), fc) << "F8 output, N=" << n << " " << where;
          }
        }
      }
    }
  gpu::destroy_stream(stream);
}

#endif  // FUSEBENCH_HAS_GPU

}  // namespace
}  // namespace fb
