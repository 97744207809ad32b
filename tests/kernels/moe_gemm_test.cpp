// MoE MXFP4 GEMMs (kernels/moe_gemm): the exact-block arithmetic, the CPU emulation against the
// fp64 reference with its derived bounds (stage 1 both activations, stage 2, F6 fold and chain,
// edge inputs, NaN scales), the check-subset emulation, impossible shapes, the fast variant's
// emulation against fp64 and exact; on a GPU (skipped without one): every variant equals its
// emulation as it claims (bitwise but fast), and the matrix units' block sums of adversarial
// blocks equal the exact integers.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>

#include "core/device.hpp"
#include "core/errors.hpp"
#include "core/registry.hpp"
#include "kernels/moe_gemm/moe_gemm.hpp"
#include "kernels/moe_gemm/moe_gemm_exact.hpp"
#include "kernels/moe_gemm/moe_gemm_fragments.hpp"
#include "kernels/moe_gemm/moe_gemm_math.hpp"
#include "kernels/moe_gemm/moe_gemm_mfma.hpp"
#include "kernels/moe_gemm/moe_gemm_mfma_wave.hpp"
#include "kernels/moe_gemm/moe_gemm_wgmma.hpp"
#include "kernels/moe_gemm/moe_gemm_wgmma_plan.hpp"
#include "reference/codecs/e2m1.hpp"
#include "reference/codecs/e8m0.hpp"
#include "reference/codecs/fp8.hpp"
#include "support/skip_without_gpu.hpp"

namespace fb {
void register_moe_gemm(Registry& registry);

namespace {

// Sets a run-time knob for one scope (a null value unsets it) and unsets it when the scope ends, so
// a test that forces an engine does not leak the choice into the tests after it (the launchers read
// the knobs per launch).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() { unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

const KernelCase& moe_case(const char* name) {
  static const Registry reg = [] {
    Registry r;
    register_moe_gemm(r);
    return r;
  }();
  const KernelCase* c = reg.find(name);
  if (!c) throw std::logic_error(std::string("no case ") + name);
  return *c;
}

struct Shape {
  std::int64_t T = 7, E = 9, k = 4, K = 288, I = 96, B = 32;
  std::string routing = "uniform", activation = "swiglu_oai", dist = "normal";
};

Point point(const KernelCase& kc, const Shape& s) {
  Point p;
  p.set("T", s.T);
  p.set("E", s.E);
  p.set("k", s.k);
  p.set("K", s.K);
  p.set("I", s.I);
  p.set("B", s.B);
  p.set("routing", s.routing);
  if (kc.axis("activation")) p.set("activation", s.activation);
  p.set("dist", s.dist);
  return p;
}

// One point made on the host: inputs (weights prepared, activations generated).
struct Made {
  std::unique_ptr<CaseInstance> inst;
  HostTensors in;
};

Made make(const char* name, const Shape& s, std::uint64_t seed = 5) {
  const KernelCase& kc = moe_case(name);
  Made m{kc.make(point(kc, s)), {}};
  m.in = allocate_host(m.inst->inputs());
  m.inst->prepare_weights(seed, m.in);
  m.inst->generate(seed, m.in);
  return m;
}

TensorPointers pointers(HostTensors& t) {
  TensorPointers p;
  for (HostTensor& x : t) p.items.push_back(x.bytes.data());
  return p;
}

// The CPU emulation of variant v, outputs poisoned first (0xFF: NaN in bf16).
HostTensors emulate(Made& m, VariantId v) {
  HostTensors out = allocate_host(m.inst->outputs());
  for (HostTensor& t : out) std::fill(t.bytes.begin(), t.bytes.end(), std::uint8_t{0xFF});
  HostTensors ws = allocate_host(m.inst->workspace(v));
  m.inst->run(v, ExecContext{Backend::cpu, nullptr}, pointers(m.in), pointers(out), pointers(ws));
  return out;
}

CheckSubset full_subset(const CaseInstance& inst) {
  CheckSubset s;
  s.full = true;
  s.total = inst.check_units();
  return s;
}

void expect_checks_pass(const std::vector<Fp64Check>& checks, const std::string& what) {
  ASSERT_FALSE(checks.empty());
  for (const Fp64Check& c : checks) {
    SCOPED_TRACE(what + " " + c.quantity);
    EXPECT_EQ(c.stats.nan, 0);
    EXPECT_EQ(c.stats.inf, 0);
    EXPECT_GT(c.stats.elements, 0);
    EXPECT_LE(c.stats.abs_max, c.bound.limit) << c.bound.reason;
  }
}

// The relative L2 distance of two bf16 outputs; NaN where either holds a NaN or an inf (never a pass).
double bf16_rel_l2(const HostTensor& a, const HostTensor& b) {
  double diff = 0.0, norm = 0.0;
  for (std::size_t i = 0; i < a.bytes.size() / 2; ++i) {
    const double x = bf16_to_float(a.data<std::uint16_t>()[i]), y = bf16_to_float(b.data<std::uint16_t>()[i]);
    if (!std::isfinite(x) || !std::isfinite(y)) return std::numeric_limits<double>::quiet_NaN();
    diff += (x - y) * (x - y);
    norm += y * y;
  }
  return norm > 0.0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

// ---- the arithmetic ----

TEST(MoeGemmMath, HalvesAreTwiceTheCodecValue) {
  for (std::uint32_t code = 0; code < 16; ++code)
    EXPECT_EQ(static_cast<float>(e2m1_halves(code)), 2.0f * e2m1_to_float(static_cast<std::uint8_t>(code))) << code;
  // Packed e4m3 operands: the even elements' bytes, then the odd ones'.
  std::uint32_t even, odd;
  e2m1x8_to_e4m3x8(0xF7u | (0x81u << 8), even, odd);  // elements +6, -6, +0.5, -0
  EXPECT_EQ(even, 0x0000041Cu);                        // +6 * 2^-6 (0x1C), +0.5 * 2^-6 (0x04)
  EXPECT_EQ(odd, 0x0000809Cu);                         // -6 * 2^-6 (0x9C), -0 (0x80)
}

// The K loops' branch-free scale decode is the codec's, bit for bit, on every byte (NaN included).
TEST(MoeGemmMath, BranchFreeScaleDecodeIsTheCodecOnEveryByte) {
  for (std::uint32_t s = 0; s < 256; ++s)
    EXPECT_EQ(float_bits(mx_scale_float(s)), float_bits(e8m0_to_float(static_cast<std::uint8_t>(s)))) << s;
}

// The word-wise conversion the MMA operands use, on every 16-bit input (either half of the word):
// each e4m3 byte is its code's value times 2^-6, exactly (byte j of `even` element 2j, of `odd`
// element 2j + 1).
TEST(MoeGemmMath, E4m3ConversionIsTheCodeValueTimesTwoToTheMinusSixOnEveryInput) {
  for (std::uint32_t t = 0; t < 0x10000u; ++t)
    for (const int half : {0, 1}) {  // t in bytes 2 half, 2 half + 1 of the word: its nibble e is element 4 half + e
      std::uint32_t even, odd;
      e2m1x8_to_e4m3x8(half ? (t << 16) | 0x1234u : t | 0xABCD0000u, even, odd);
      const auto code = [&](int e) { return static_cast<std::uint8_t>((t >> (4 * e)) & 0xFu); };
      const auto byte = [&](std::uint32_t w, int b) { return static_cast<std::uint8_t>(w >> (8 * (b + 2 * half))); };
      for (int b = 0; b < 2; ++b) {
        ASSERT_EQ(float_bits(fp8_e4m3fn_to_float(byte(even, b))), float_bits(e2m1_to_float(code(2 * b)) * 0x1p-6f)) << t;
        ASSERT_EQ(float_bits(fp8_e4m3fn_to_float(byte(odd, b))), float_bits(e2m1_to_float(code(2 * b + 1)) * 0x1p-6f)) << t;
      }
    }
}

// The kernels' promotion from the matrix unit's fp32 block sum (S_q * 2^-14, scales decoded once a
// block) gives the contract's bits for every scale pair.
TEST(MoeGemmMath, MmaSumPromotionEqualsTheCanonicalOne) {
  for (int sa = 0; sa < 256; ++sa)
    for (int sw = 0; sw < 256; ++sw)
      for (int q : {0, 1, -3, 4608, -4607})
        for (float acc : {0.0f, 1.5f, -3.0e30f}) {
          const float want = mx_block_promote(acc, q, static_cast<std::uint8_t>(sa), static_cast<std::uint8_t>(sw));
          const float got = mx_block_promote_mma(acc, static_cast<float>(q) * kMxMmaSumScale, mx_scale_float(static_cast<std::uint32_t>(sa)),
                                                 mx_scale_float(static_cast<std::uint32_t>(sw)));
          if (std::isnan(want))
            ASSERT_TRUE(std::isnan(got)) << sa << " " << sw << " " << q;
          else
            ASSERT_EQ(float_bits(got), float_bits(want)) << sa << " " << sw << " " << q << " " << acc;
        }
  // Every block sum is an exact fp32 multiple of 2^-14, and times 2^12 it is S_q / 4 exactly.
  for (int q = -4608; q <= 4608; ++q)
    ASSERT_EQ(float_bits(static_cast<float>(q) * kMxMmaSumScale * 4096.0f), float_bits(static_cast<float>(q) * 0.25f)) << q;
}

// The fragments the kernels build, run through the m16n8k32 definition (PTX fragment layout) for
// all 32 lanes, give every lane the integer block sums of its C positions: the permutation of k is
// the same for A and B.
TEST(MoeGemmMath, FragmentPermutationGivesTheBlockSums) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 50; ++trial) {
    std::uint8_t a[16][16], b[8][16];
    for (auto& row : a)
      for (auto& x : row) x = static_cast<std::uint8_t>(rng());
    for (auto& col : b)
      for (auto& x : col) x = static_cast<std::uint8_t>(rng());
    // Logical operands as the MMA sees them.
    int A[16][32], B[32][8];
    for (int lane = 0; lane < 32; ++lane) {
      const int g = lane / 4, q = lane % 4;
      const MxAFragment fa = mx_a_fragment(a[g], a[g + 8], q);
      const MxBFragment fb = mx_b_fragment(b[g], q);
      // An e4m3 operand byte is the code's value times 2^-6: times 2^7 it is h = 2 * value.
      const auto byte = [](std::uint32_t w, int i) {
        return static_cast<int>(fp8_e4m3fn_to_float(static_cast<std::uint8_t>(w >> (8 * i))) * 128.0f);
      };
      for (int i = 0; i < 4; ++i) {
        A[g][4 * q + i] = byte(fa.a[0], i);
        A[g + 8][4 * q + i] = byte(fa.a[1], i);
        A[g][16 + 4 * q + i] = byte(fa.a[2], i);
        A[g + 8][16 + 4 * q + i] = byte(fa.a[3], i);
        B[4 * q + i][g] = byte(fb.b[0], i);
        B[16 + 4 * q + i][g] = byte(fb.b[1], i);
      }
    }
    for (int r = 0; r < 16; ++r)
      for (int c = 0; c < 8; ++c) {
        int d = 0;
        for (int k = 0; k < 32; ++k) d += A[r][k] * B[k][c];
        ASSERT_EQ(d, mx_block_sum_quarters(a[r], b[c])) << r << " " << c;
      }
  }
}

// S_q in integers equals the fp64 block sum times 4, for random and adversarial blocks.
TEST(MoeGemmMath, BlockSumsAreExact) {
  std::mt19937 rng(7);
  std::vector<std::array<std::uint8_t, 16>> blocks;
  for (int i = 0; i < 200; ++i) {
    std::array<std::uint8_t, 16> b{};
    for (auto& x : b) x = static_cast<std::uint8_t>(rng());
    blocks.push_back(b);
  }
  std::array<std::uint8_t, 16> plus6{}, minus6{}, alternating{}, zeros{}, negzeros{};
  plus6.fill(0x77);
  minus6.fill(0xFF);
  alternating.fill(0xF7);
  negzeros.fill(0x88);
  blocks.insert(blocks.end(), {plus6, minus6, alternating, zeros, negzeros});
  for (const auto& a : blocks)
    for (const auto& w : blocks) {
      double exact = 0.0;
      for (int j = 0; j < 32; ++j) {
        const auto code = [&](const std::array<std::uint8_t, 16>& v) {
          return static_cast<std::uint8_t>(j % 2 ? v[j / 2] >> 4 : v[j / 2] & 0xF);
        };
        exact += static_cast<double>(e2m1_to_float(code(a))) * e2m1_to_float(code(w));
      }
      ASSERT_EQ(static_cast<double>(mx_block_sum_quarters(a.data(), w.data())), 4.0 * exact);
    }
  EXPECT_EQ(mx_block_sum_quarters(plus6.data(), plus6.data()), 4608);
  EXPECT_EQ(mx_block_sum_quarters(plus6.data(), minus6.data()), -4608);
  EXPECT_EQ(mx_block_sum_quarters(alternating.data(), plus6.data()), 0);
}

// The promotion's first product is exact for every activation scale (or +-inf past fp32's range);
// the weight scale's may round only in the subnormal range; 0xFF is NaN.
TEST(MoeGemmMath, PromotionRoundsOnlyWhereTheFormatForces) {
  for (int sa = 0; sa < 255; ++sa) {
    for (int q : {1, 3, 4607, -4608, -1}) {
      const double exact = q * 0.25 * std::ldexp(1.0, sa - 127);
      const float got = static_cast<float>(q) * 0.25f * e8m0_to_float(static_cast<std::uint8_t>(sa));
      if (std::abs(exact) < 0x1.0p128)
        EXPECT_EQ(static_cast<double>(got), exact) << q << " " << sa;
      else
        EXPECT_EQ(static_cast<double>(got), exact > 0 ? HUGE_VAL : -HUGE_VAL) << q << " " << sa;
    }
  }
  EXPECT_EQ(mx_block_promote(0.0f, 4, 127, 127), 1.0f);
  EXPECT_EQ(mx_block_promote(1.0f, 4, 128, 126), 2.0f);
  EXPECT_TRUE(std::isnan(mx_block_promote(0.0f, 4, 0xFF, 127)));
  EXPECT_TRUE(std::isnan(mx_block_promote(0.0f, 0, 127, 0xFF)));
  EXPECT_EQ(mx_block_promote(0.0f, 1, 0, 0), 0.0f);  // 2^-2 * 2^-254 underflows to +0
}

// ---- emulation against fp64 ----

TEST(MoeGemmEmulation, Stage1WithinItsFp64Bounds) {
  for (const char* act : {"swiglu_oai", "silu"})
    for (const char* routing : {"uniform", "one_expert", "empty_experts"})
      for (const char* dist : {"normal", "edge", "outliers"}) {
        if (std::string(routing) != "uniform" && std::string(dist) != "normal") continue;
        Shape s;
        s.T = 40;
        s.activation = act;
        s.routing = routing;
        s.dist = dist;
        Made m = make("moe_gemm/stage1", s);
        const HostTensors out = emulate(m, 0);
        expect_checks_pass(m.inst->check_fp64(m.in, out, full_subset(*m.inst)),
                           std::string(act) + " " + routing + " " + dist);
      }
}

TEST(MoeGemmEmulation, Stage2AndFoldWithinTheirFp64Bounds) {
  for (const char* name : {"moe_gemm/stage2", "moe_gemm/shared_fold"})
    for (const char* dist : {"normal", "edge", "uniform"})
      for (std::int64_t T : {1, 7, 40}) {
        Shape s;
        s.T = T;
        s.E = 8;
        s.K = 256;
        s.I = 64;
        s.dist = dist;
        Made m = make(name, s);
        for (VariantId v = 0; v < moe_case(name).variants.size(); ++v) {
          const HostTensors out = emulate(m, v);
          expect_checks_pass(m.inst->check_variant_fp64(v, m.in, out, full_subset(*m.inst)),
                             std::string(name) + " " + dist + " T=" + std::to_string(T) + " v" + std::to_string(v));
        }
      }
}

// The buffers of a stage-1 or stage-2 (shared_fold: with the shared output) launch over a made
// point's inputs, in the cases' input order.
MoeStage1Buffers stage1_buffers(const std::vector<void*>& in, std::uint16_t* a1) {
  return {static_cast<const std::int32_t*>(in[0]), static_cast<const std::int32_t*>(in[1]),
          static_cast<const std::int32_t*>(in[2]), static_cast<const std::uint8_t*>(in[3]),
          static_cast<const std::uint8_t*>(in[4]), static_cast<const std::uint8_t*>(in[5]),
          static_cast<const std::uint8_t*>(in[6]), a1};
}
MoeStage2Buffers stage2_buffers(const std::vector<void*>& in, float* y, std::uint16_t* out) {
  MoeStage2Buffers b;
  b.sorted_token_ids = static_cast<const std::int32_t*>(in[0]);
  b.sorted_weights = static_cast<const float*>(in[1]);
  b.sorted_expert_ids = static_cast<const std::int32_t*>(in[2]);
  b.num_valid_ids = static_cast<const std::int32_t*>(in[3]);
  b.a2q = static_cast<const std::uint8_t*>(in[4]);
  b.a2_scales = static_cast<const std::uint8_t*>(in[5]);
  b.w2 = static_cast<const std::uint8_t*>(in[6]);
  b.w2_scales = static_cast<const std::uint8_t*>(in[7]);
  b.shared = in.size() > 8 ? static_cast<const std::uint16_t*>(in[8]) : nullptr;
  b.y = y;
  b.out = out;
  return b;
}
std::vector<void*> input_pointers(Made& m) {
  std::vector<void*> v;
  for (HostTensor& t : m.in) v.push_back(t.bytes.data());
  return v;
}

// Both engines and both stage-2 variants have one emulation each; exact and plain agree.
TEST(MoeGemmEmulation, ExactAndPlainAreTheSameArithmetic) {
  for (const char* name : {"moe_gemm/stage1", "moe_gemm/stage2"}) {
    Made m = make(name, Shape{});
    EXPECT_EQ(emulate(m, 0)[0].bytes, emulate(m, 1)[0].bytes) << name;
  }
}

// The points of the grid simulations below: T = 40 and 3, every routing, B 16 to 128 with I and K
// that give 1, 2 or 4 warps (or waves) a CTA, both activations, edge inputs at B = 128.
std::vector<std::pair<const char*, Shape>> indexing_points() {
  std::vector<std::pair<const char*, Shape>> points;
  for (std::int64_t T : {40, 3})
    for (const char* routing : {"uniform", "one_expert", "empty_experts"})
      for (std::int64_t B : {16, 32, 64, 128})
        for (const char* name : {"moe_gemm/stage1", "moe_gemm/stage2", "moe_gemm/shared_fold"}) {
          Shape s;
          s.T = T;
          s.B = B;
          s.routing = routing;
          s.I = B == 64 ? 128 : (B == 128 ? 256 : 96);
          s.K = B == 32 ? 256 : (B == 64 ? 640 : 288);
          s.activation = B == 16 ? "silu" : "swiglu_oai";
          s.dist = B == 128 ? "edge" : "normal";
          points.emplace_back(name, s);
        }
  return points;
}

// The exact kernels' grid, warp and lane indexing run on the CPU (scalar block sums in place of the
// MMA) equals the emulation bitwise: B 16 to 128, I and K with 1, 2 or 4 warps per CTA, every routing,
// both activations, F6 both ways, edge inputs.
TEST(MoeGemmEmulation, ExactKernelIndexingMatchesTheEmulation) {
  // K/32 and I/32 of 9 and 3 take the one-block stages (unpacked scale bytes), 8, 20, 4 and 8 the
  // packed stages of 4, 2 and 1 blocks (several trips, and an odd count); T = 3 gives sort blocks of
  // one token (the stage with the odd columns skipped), T = 40 blocks of one and two groups.
  for (const auto& [name, s] : indexing_points()) {
    const std::int64_t T = s.T, B = s.B;
    const std::string& routing = s.routing;
    Made m = make(name, s);
    const std::vector<void*> in = input_pointers(m);
    for (VariantId v = 0; v < moe_case(name).variants.size(); ++v) {
      if (moe_case(name).variants[v].name == "fast") continue;  // its own arithmetic: MoeGemmFast tests
      const HostTensors want = emulate(m, v);
      HostTensors got = allocate_host(m.inst->outputs());
      MoeGemmParams p;
      p.tokens = s.T, p.topk = s.k, p.experts = s.E, p.block = B, p.hidden = s.K, p.inter = s.I;
      p.oai = s.activation == "swiglu_oai";
      if (std::string(name) == "moe_gemm/stage1") {
        // Both warp mappings (wide: 16 columns in a gate and an up tile; narrow: 8 in a mixed tile).
        for (bool narrow : {true, false}) {
          std::fill(got[0].bytes.begin(), got[0].bytes.end(), std::uint8_t{0x5A});  // poisoned
          moe_stage1_exact_simulate(p, stage1_buffers(in, got[0].data<std::uint16_t>()), narrow);
          if (narrow) {
            EXPECT_EQ(got[0].bytes, want[0].bytes) << name << " narrow " << routing << " T=" << T << " B=" << B;
          }
        }
      } else {
        if (std::string(name) == "moe_gemm/shared_fold") p.shared = v == 0 ? MoeSharedMode::fold : MoeSharedMode::chain;
        std::vector<float> y(static_cast<std::size_t>(s.T * s.k * s.K), std::numeric_limits<float>::quiet_NaN());
        moe_stage2_exact_simulate(p, stage2_buffers(in, y.data(), got[0].data<std::uint16_t>()));
      }
      EXPECT_EQ(got[0].bytes, want[0].bytes) << name << " " << routing << " T=" << T << " B=" << B << " variant " << v;
    }
  }
}

// The AMD engine's int8 operands: byte e of e2m1x8_to_i8x8(w) is 2 * the value of code e of w
// (the e2m1 codec's decode, an independent oracle), for every code in every position.
TEST(MoeGemmMfma, Int8OperandsAreTwiceTheCodesValues) {
  for (int e = 0; e < 8; ++e)
    for (std::uint32_t code = 0; code < 16; ++code)
      for (std::uint32_t rest : {0x00000000u, 0xFFFFFFFFu, 0x9E3779B9u}) {
        const std::uint32_t w = (rest & ~(0xFu << (4 * e))) | (code << (4 * e));
        const std::uint64_t ops = e2m1x8_to_i8x8(w);
        for (int f = 0; f < 8; ++f) {
          const auto h = static_cast<std::int8_t>(ops >> (8 * f));
          EXPECT_EQ(static_cast<double>(h), 2.0 * e2m1_to_float(static_cast<std::uint8_t>((w >> (4 * f)) & 0xFu)))
              << "word " << std::hex << w << " byte " << f;
        }
      }
}

// Both forms of the integer MFMA (one K=32 instruction, two K=16), simulated from the layout on the
// operands the wave hands each lane (word l / 16 of its row's block, as int8), give every lane's
// four results the block sums S_q of their (weight row, sorted row): random blocks and the extreme
// ones (all +-6: |S_q| = 4608, alternating signs: cancellation to 0, zeros, halves).
TEST(MoeGemmMfma, BothInstructionFormsGiveTheBlockSumsOfTheirRows) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> byte(0, 255);
  const auto fill = [&](std::array<std::array<std::uint8_t, 16>, kMfmaTile>& rows, int kind) {
    for (std::size_t r = 0; r < rows.size(); ++r)
      for (std::size_t i = 0; i < 16; ++i) {
        const int pick = kind == 0 ? byte(rng) : (kind == 1 ? (r % 2 ? 0xFF : 0x77) : (kind == 2 ? 0xF7 : (r % 3 ? 0x11 : 0x99)));
        rows[r][i] = static_cast<std::uint8_t>(pick);
      }
  };
  for (int kind_w = 0; kind_w < 4; ++kind_w)
    for (int kind_x = 0; kind_x < 4; ++kind_x) {
      std::array<std::array<std::uint8_t, 16>, kMfmaTile> w{}, x{};  // one 32-code block per row
      fill(w, kind_w);
      fill(x, kind_x);
      std::uint64_t a[kMfmaWaveLanes], b[kMfmaWaveLanes];
      for (int l = 0; l < kMfmaWaveLanes; ++l) {
        const auto row = static_cast<std::size_t>(mfma_operand_row(l));
        a[l] = e2m1x8_to_i8x8(load_u32(w[row].data() + 4 * mfma_operand_group(l)));
        b[l] = e2m1x8_to_i8x8(load_u32(x[row].data() + 4 * mfma_operand_group(l)));
      }
      std::int32_t d32[kMfmaWaveLanes][4], d16[kMfmaWaveLanes][4];
      MoeMfmaSimulated<true>::block_sums(a, b, d32);
      MoeMfmaSimulated<false>::block_sums(a, b, d16);
      for (int l = 0; l < kMfmaWaveLanes; ++l)
        for (int r = 0; r < 4; ++r) {
          const auto wr = static_cast<std::size_t>(mfma_result_row(l, r)), xr = static_cast<std::size_t>(mfma_result_col(l));
          const int want = mx_block_sum_quarters(x[xr].data(), w[wr].data());
          EXPECT_EQ(d32[l][r], want) << "K=32 lane " << l << " r " << r << " kinds " << kind_w << kind_x;
          EXPECT_EQ(d16[l][r], want) << "K=16 lane " << l << " r " << r << " kinds " << kind_w << kind_x;
        }
      // The wave relies on a lane's B row being its result column's row.
      for (int l = 0; l < kMfmaWaveLanes; ++l) EXPECT_EQ(mfma_result_col(l), mfma_operand_row(l));
    }
}

// The AMD engine's grid, wave and lane indexing (moe_gemm_mfma.hip's kernels through the same FB_HD
// wave functions, the instruction simulated in both forms) equals the emulation bitwise: B 16 to
// 128, 1, 2 or 4 waves per CTA (I / 16 = 6, 8, 16; K / 32 = 9, 8, 20, 9), every routing, both
// activations, F6 both ways, edge inputs, outputs poisoned first.
TEST(MoeGemmEmulation, MfmaEngineIndexingMatchesTheEmulation) {
  for (const auto& [name, s] : indexing_points()) {
    const std::int64_t T = s.T, B = s.B;
    const std::string& routing = s.routing;
    Made m = make(name, s);
    const std::vector<void*> in = input_pointers(m);
    const bool stage1 = std::string(name) == "moe_gemm/stage1", fold = std::string(name) == "moe_gemm/shared_fold";
    for (VariantId v = 0; v < (fold ? 2u : 1u); ++v) {  // exact; fold and chain (plain is exact's emulation)
      const HostTensors want = emulate(m, v);
      MoeGemmParams p;
      p.tokens = s.T, p.topk = s.k, p.experts = s.E, p.block = B, p.hidden = s.K, p.inter = s.I;
      p.oai = s.activation == "swiglu_oai";
      if (fold) p.shared = v == 0 ? MoeSharedMode::fold : MoeSharedMode::chain;
      for (bool k32 : {true, false}) {
        HostTensors got = allocate_host(m.inst->outputs());
        std::fill(got[0].bytes.begin(), got[0].bytes.end(), std::uint8_t{0x5A});  // poisoned
        std::vector<float> y(static_cast<std::size_t>(s.T * s.k * s.K), std::numeric_limits<float>::quiet_NaN());
        if (stage1)
          moe_stage1_mfma_simulate(p, stage1_buffers(in, got[0].data<std::uint16_t>()), k32);
        else
          moe_stage2_mfma_simulate(p, stage2_buffers(in, y.data(), got[0].data<std::uint16_t>()), k32);
        EXPECT_EQ(got[0].bytes, want[0].bytes)
            << name << " " << routing << " T=" << T << " B=" << B << " variant " << v << (k32 ? " K=32" : " K=16");
      }
    }
  }
}

// Stage 1 takes the narrow warps where the wide grid would leave the SMs few warps: at the m31
// decode points on 132 SMs, T = 3 (12 sort blocks x 48 wide warps = 576 < 8 x 132), not T = 24
// (96 x 48); never where I is not a multiple of 32 (the narrow CTA's 4 warps of 8 columns).
TEST(MoeGemmEmulation, Stage1TakesTheNarrowWarpsOnlyWhereTheWideGridIsThin) {
  EXPECT_TRUE(moe_stage1_narrow(3, 4, 128, 768, 132));
  EXPECT_TRUE(moe_stage1_narrow(1, 4, 128, 768, 132));
  EXPECT_FALSE(moe_stage1_narrow(24, 4, 128, 768, 132));
  EXPECT_FALSE(moe_stage1_narrow(192, 4, 128, 768, 132));
  EXPECT_FALSE(moe_stage1_narrow(3, 4, 128, 784, 132));  // 784 % 32 != 0
  EXPECT_TRUE(moe_stage1_narrow(24, 4, 128, 768, 1000));  // a wider GPU
}

// The exact kernels clamp num_valid_ids[0] to the shape: a poisoned count (0xFF bytes: -1) runs
// no CTA and leaves the output untouched; the grid simulation stages entries as the kernels do.
TEST(MoeGemmEmulation, ExactKernelsClampAPoisonedValidCount) {
  Shape s;
  Made m = make("moe_gemm/stage1", s);
  const std::int32_t poisoned = -1;
  std::memcpy(m.in[2].bytes.data(), &poisoned, 4);
  HostTensors got = allocate_host(m.inst->outputs());
  std::fill(got[0].bytes.begin(), got[0].bytes.end(), std::uint8_t{0x5A});
  MoeGemmParams p;
  p.tokens = s.T, p.topk = s.k, p.experts = s.E, p.block = s.B, p.hidden = s.K, p.inter = s.I;
  moe_stage1_exact_simulate(p, {m.in[0].data<std::int32_t>(), m.in[1].data<std::int32_t>(), m.in[2].data<std::int32_t>(),
                                m.in[3].data<std::uint8_t>(), m.in[4].data<std::uint8_t>(), m.in[5].data<std::uint8_t>(),
                                m.in[6].data<std::uint8_t>(), got[0].data<std::uint16_t>()});
  EXPECT_TRUE(std::all_of(got[0].bytes.begin(), got[0].bytes.end(), [](std::uint8_t b) { return b == 0x5A; }));
  EXPECT_EQ(moe_valid_entries(-1, 100), 0);
  EXPECT_EQ(moe_valid_entries(0x5A5A5A5A, 100), 100);
  EXPECT_EQ(moe_valid_entries(64, 100), 64);
}

TEST(MoeGemmEmulation, FoldWithinRelL2OfChainAndNoWorseAgainstFp64) {
  Shape s;
  s.T = 40;
  s.E = 8;
  s.K = 256;
  s.I = 64;
  Made m = make("moe_gemm/shared_fold", s);
  const HostTensors fold = emulate(m, 0), chain = emulate(m, 1);
  ErrorAccumulator acc;
  for (std::size_t i = 0; i < fold[0].bytes.size() / 2; ++i)
    acc.add(static_cast<std::int64_t>(i), bf16_to_float(fold[0].data<std::uint16_t>()[i]),
            bf16_to_float(chain[0].data<std::uint16_t>()[i]));
  const ErrorStats st = acc.finish();
  EXPECT_LE(st.rel_l2, 1e-2);
  EXPECT_GT(st.rel_l2, 0.0);  // they do differ: one rounding fewer
  const std::vector<CheckResult> r = m.inst->case_checks(m.in, {&fold, &chain}, full_subset(*m.inst));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].passed) << r[0].message;
  EXPECT_LT(r[0].details["fold/err/rel_l2"].get<double>(), r[0].details["chain/err/rel_l2"].get<double>());
}

TEST(MoeGemmEmulation, NanScaleIsReportedNeverPassed) {
  for (const char* name : {"moe_gemm/stage1", "moe_gemm/stage2", "moe_gemm/shared_fold"}) {
    Shape s;
    s.dist = "nan";
    Made m = make(name, s);
    const HostTensors out = emulate(m, 0);
    std::int64_t nan = 0;
    for (const Fp64Check& c : m.inst->check_fp64(m.in, out, full_subset(*m.inst))) nan += c.stats.nan;
    EXPECT_GT(nan, 0) << name;
  }
}

// The subset emulation writes exactly the subset's rows, with the full emulation's bytes.
TEST(MoeGemmEmulation, SubsetEmulationMatchesTheWholeOnItsRegion) {
  for (const char* name : {"moe_gemm/stage1", "moe_gemm/shared_fold"}) {
    Shape s;
    s.T = 40;
    Made m = make(name, s);
    const HostTensors whole = emulate(m, 0);
    CheckSubset sub;
    sub.full = false;
    sub.total = 40;
    sub.units = {0, 3, 17, 39};
    HostTensors part = allocate_host(m.inst->outputs());
    m.inst->emulate_subset(0, m.in, part, sub);
    const std::vector<ElementRange> region = m.inst->subset_region(0, sub);
    ASSERT_EQ(region.size(), 4u);
    const std::size_t width = 2;
    for (const ElementRange& r : region)
      EXPECT_EQ(0, std::memcmp(whole[0].bytes.data() + r.begin * width, part[0].bytes.data() + r.begin * width,
                               static_cast<std::size_t>(r.end - r.begin) * width))
          << name;
    expect_checks_pass(m.inst->check_fp64(m.in, part, sub), name);
  }
}

// ---- the fast variant (its arithmetic: moe_gemm_fast_test.cpp) ----

VariantId variant_named(const char* name, const char* variant) { return moe_case(name).variant_id(variant); }

// fast's emulation within its own fp64 bound and within the declared relative L2 of exact, on every
// distribution the scenarios use. (On the CPU the two often agree bitwise at small K: the exact
// partials of a few blocks round nowhere in fp32; the GPU's matrix unit is what differs.)
TEST(MoeGemmFast, EmulationWithinItsFp64BoundAndItsClaimOfExact) {
  for (const char* name : {"moe_gemm/stage1", "moe_gemm/stage2"})
    for (const char* dist : {"normal", "edge", "outliers", "uniform"}) {
      Shape s;
      s.T = 40;
      s.E = 8;
      s.K = 384;
      s.I = 128;
      s.dist = dist;
      Made m = make(name, s);
      const VariantId fast = variant_named(name, "fast"), exact = variant_named(name, "exact");
      const HostTensors f = emulate(m, fast), e = emulate(m, exact);
      expect_checks_pass(m.inst->check_variant_fp64(fast, m.in, f, full_subset(*m.inst)), std::string(name) + " " + dist);
      const PairClaim& claim = moe_case(name).pairs.at(1);
      ASSERT_EQ(claim.variant, "fast");
      EXPECT_LE(bf16_rel_l2(f[0], e[0]), claim.claim.bound.limit) << name << " " << dist;
    }
}

// A weight row whose largest scale sits on an all-zero block: fast drops every other block of the
// row (more than 12 binades below it), so those outputs are 0 where exact's are not. The fp64 bound
// still holds, because it counts the dropped products; the relative-L2 claim against exact (which
// assumes rows without such a spread) does not, and verify reports that.
TEST(MoeGemmFast, DroppedBlocksAreCountedByTheBound) {
  Shape s;
  s.T = 40;
  s.E = 8;
  s.K = 256;
  s.I = 96;
  Made m = make("moe_gemm/stage2", s);
  HostTensor& w = m.in[6];
  HostTensor& ws = m.in[7];
  const std::int64_t rows = s.E * s.K, blocks = s.I / 32;
  for (std::int64_t r = 0; r < rows; ++r) {
    std::fill_n(w.bytes.data() + r * s.I / 2, 16, std::uint8_t{0});  // block 0: all codes 0
    ws.bytes[static_cast<std::size_t>(r * blocks)] = 250;             // and the row's largest scale
  }
  const VariantId fast = variant_named("moe_gemm/stage2", "fast"), exact = variant_named("moe_gemm/stage2", "exact");
  const HostTensors f = emulate(m, fast), e = emulate(m, exact);
  expect_checks_pass(m.inst->check_variant_fp64(fast, m.in, f, full_subset(*m.inst)), "dropped blocks");
  expect_checks_pass(m.inst->check_variant_fp64(exact, m.in, e, full_subset(*m.inst)), "exact, same inputs");
  EXPECT_TRUE(std::all_of(f[0].data<std::uint16_t>(), f[0].data<std::uint16_t>() + f[0].bytes.size() / 2,
                          [](std::uint16_t b) { return (b & 0x7FFFu) == 0; }));
  EXPECT_NEAR(bf16_rel_l2(f[0], e[0]), 1.0, 1e-12);
}

// Points past the sizes fast's claims are derived for skip fast, with the reason.
TEST(MoeGemmFast, PointsBeyondTheDerivedSizesSkipIt) {
  Shape s;
  s.K = 8192 + 32;
  Made m = make("moe_gemm/stage1", s);
  EXPECT_NE(m.inst->variant_skip_reason(variant_named("moe_gemm/stage1", "fast"), Backend::cpu).find("K <= 8192"),
            std::string::npos);
  EXPECT_EQ(m.inst->variant_skip_reason(variant_named("moe_gemm/stage1", "exact"), Backend::cpu), "");
  Shape t;
  t.I = 2048 + 32;
  t.K = 256;
  Made n = make("moe_gemm/stage2", t);
  EXPECT_NE(n.inst->variant_skip_reason(variant_named("moe_gemm/stage2", "fast"), Backend::cpu).find("I <= 2048"),
            std::string::npos);
}

TEST(MoeGemmCases, ImpossibleShapesAreRejectedWithAReason) {
  const KernelCase& kc = moe_case("moe_gemm/stage1");
  const auto expect_error = [&](Shape s, const char* text) {
    try {
      kc.make(point(kc, s));
      ADD_FAILURE() << "no error for " << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  Shape s;
  s.K = 100;
  expect_error(s, "K=100 is not a positive multiple of 32");
  s = Shape{};
  s.I = 80;
  expect_error(s, "I=80 is not a positive multiple of 32");
  s = Shape{};
  s.B = 24;
  expect_error(s, "B=24 is not a multiple of 16");
  s = Shape{};
  s.k = 10;
  expect_error(s, "k=10 must be in");
}

TEST(MoeGemmCases, PrefillPointsAreGpuOnlyAndCheckTokens) {
  const KernelCase& kc = moe_case("moe_gemm/stage2");
  Shape s;
  s.T = 32768;
  s.E = 128;
  s.K = 6144;
  s.I = 768;
  const auto inst = kc.make(point(kc, s));
  EXPECT_NE(inst->skip_reason(Backend::cpu).find("GPU only"), std::string::npos);
  EXPECT_EQ(inst->skip_reason(Backend::gpu), "");
  EXPECT_EQ(inst->check_units(), 32768);
  EXPECT_EQ(inst->check_unit_name(), "tokens");
  // 2 * T*k * K * I flops; the weights of the (expected) 128 active experts at least.
  EXPECT_EQ(inst->work(0).flops, 2.0 * 32768 * 4 * 6144 * 768);
  EXPECT_GT(inst->work(0).read_bytes, 128LL * 6144 * 768 / 2);
}

// The exact and fast variants (and F6's two) get the engine's staged token rows as a workspace where
// the wgmma engine tiles the shape, sized by MoeTokenStageLayout; plain never does, nor do shapes it
// does not tile (K = 288 is not a multiple of 128).
TEST(MoeGemmCases, MatrixUnitVariantsGetTheStagedTokenRows) {
  Shape s;
  s.T = 4096;
  s.E = 128;
  s.K = 6144;
  s.I = 768;
  const auto bytes_of = [](const std::vector<TensorSpec>& ws, const char* name) -> std::int64_t {
    for (const TensorSpec& t : ws)
      if (t.name == name) return static_cast<std::int64_t>(t.bytes());
    return -1;
  };
  for (const char* name : {"moe_gemm/stage1", "moe_gemm/stage2", "moe_gemm/shared_fold"}) {
    const KernelCase& kc = moe_case(name);
    const auto inst = kc.make(point(kc, s));
    const bool stage1 = std::string(name) == "moe_gemm/stage1";
    const std::int64_t entries = 4096 * 4 + 128 * 32 - 4, inner = stage1 ? 6144 : 768;
    const MoeTokenStageLayout L{entries, inner};
    EXPECT_EQ(L.scales_at(), entries * inner);
    EXPECT_EQ(L.maxima_at(), entries * inner + entries * inner / 32);
    EXPECT_EQ(L.bytes() % 16, 0);
    EXPECT_GE(L.bytes(), L.maxima_at() + entries);
    for (VariantId v = 0; v < kc.variants.size(); ++v) {
      const bool plain = kc.variants[v].name == "plain";
      EXPECT_EQ(bytes_of(inst->workspace(v), "token_stage"), plain ? -1 : L.bytes()) << name << " " << kc.variants[v].name;
      EXPECT_EQ(bytes_of(inst->workspace(v), "y") > 0, !stage1) << name;
    }
  }
  s.K = 288;
  const KernelCase& kc = moe_case("moe_gemm/stage1");
  EXPECT_EQ(bytes_of(kc.make(point(kc, s))->workspace(0), "token_stage"), -1);
}

// The engine stages the weights by default only for the fast engine and only where an expert has
// several token tiles on average (run 66: at 128 pairs an expert the prologue costs more than it
// saves; exact's consumers, not its producer, set its pace).
TEST(MoeGemmCases, WeightStagingByDefaultOnlyForFastWithSeveralTokenTilesAnExpert) {
  MoeGemmParams p;
  p.topk = 4;
  p.experts = 128;
  for (const MoeGemmEngine engine : {MoeGemmEngine::plain, MoeGemmEngine::exact, MoeGemmEngine::fast})
    for (const std::int64_t T : {4096, 16383, 16384, 32768}) {
      p.engine = engine;
      p.tokens = T;
      const bool want = engine == MoeGemmEngine::fast && T * 4 >= kMoeWeightStageMinPairsPerExpert * 128;
      EXPECT_EQ(moe_weight_stage_by_default(p), want) << static_cast<int>(engine) << " T=" << T;
    }
}

// ---- GPU ----

// Runs variant v on the GPU on host inputs; returns the outputs.
HostTensors run_gpu(Made& m, VariantId v, void* stream) {
  std::vector<void*> allocations;
  const auto upload = [&](HostTensors& ts, bool copy) {
    TensorPointers p;
    for (HostTensor& t : ts) {
      void* d = gpu::allocate(std::max<std::size_t>(t.bytes.size(), 1));
      allocations.push_back(d);
      if (copy) gpu::copy_to_device(d, t.bytes.data(), t.bytes.size());
      else gpu::fill_bytes(d, 0xFF, t.bytes.size(), stream);
      p.items.push_back(d);
    }
    return p;
  };
  HostTensors out = allocate_host(m.inst->outputs());
  HostTensors ws = allocate_host(m.inst->workspace(v));
  const TensorPointers in_d = upload(m.in, true), out_d = upload(out, false), ws_d = upload(ws, false);
  m.inst->run(v, ExecContext{Backend::gpu, stream}, in_d, out_d, ws_d);
  gpu::synchronize(stream);
  for (std::size_t i = 0; i < out.size(); ++i) gpu::copy_to_host(out[i].bytes.data(), out_d.items[i], out[i].bytes.size());
  for (void* p : allocations) gpu::release(p);
  return out;
}

// Every variant of every point on the GPU equals its emulation as it claims (bitwise; fast within
// its bound, and against fp64 within its own bound), and again bitwise on a rerun (deterministic).
// Progress goes to stderr: should a launch ever hang, the log names its point.
void expect_gpu_equals_emulation(const std::vector<std::pair<const char*, Shape>>& points, const char* tag,
                                 void* stream) {
  for (const auto& [name, s] : points) {
    Made m = make(name, s);
    for (VariantId v = 0; v < moe_case(name).variants.size(); ++v) {
      const VariantSpec& spec = moe_case(name).variants[v];
      std::fprintf(stderr, "[%s] %s %s T=%lld K=%lld I=%lld B=%lld %s %s\n", tag, name, spec.name.c_str(),
                   static_cast<long long>(s.T), static_cast<long long>(s.K), static_cast<long long>(s.I),
                   static_cast<long long>(s.B), s.dist.c_str(), s.routing.c_str());
      std::fflush(stderr);
      const HostTensors want = emulate(m, v), got = run_gpu(m, v, stream);
      if (spec.emulation.kind == Claim::Kind::bitwise) {
        EXPECT_EQ(got[0].bytes, want[0].bytes) << name << " variant " << spec.name << " T=" << s.T << " B=" << s.B
                                               << " " << s.dist << " " << s.routing;
      } else {
        const double d = bf16_rel_l2(got[0], want[0]);
        EXPECT_LE(d, spec.emulation.bound.limit) << name << " variant " << spec.name << " T=" << s.T << " " << s.dist;
        expect_checks_pass(m.inst->check_variant_fp64(v, m.in, got, full_subset(*m.inst)),
                           std::string(name) + " gpu " + spec.name + " " + s.dist);
        std::fprintf(stderr, "[%s]   rel_l2 against the emulation %.3g (bound %.3g)\n", tag, d, spec.emulation.bound.limit);
      }
      EXPECT_EQ(run_gpu(m, v, stream)[0].bytes, got[0].bytes) << name << " rerun";
    }
  }
}

// The warp kernels' points (and the MFMA engine's): K/32 = 9, 20, 8 and I/32 = 2, 3, 4, T from 1 to
// 1030, normal and edge inputs; one_expert and empty_experts at B = 16, 64, 128.
std::vector<std::pair<const char*, Shape>> warp_kernel_points() {
  std::vector<std::pair<const char*, Shape>> points;
  for (const char* name : {"moe_gemm/stage1", "moe_gemm/stage2", "moe_gemm/shared_fold"})
    for (std::int64_t T : {1, 7, 40, 1030})
      for (const char* dist : {"normal", "edge"}) {
        Shape s;
        s.T = T;
        s.E = T == 1030 ? 9 : 8;
        // K/32 = 9, I/32 = 2, 3: the one-block stages; K/32 = 20, 8 and I/32 = 4: the packed ones.
        s.K = T == 7 ? 288 : (T == 1 ? 640 : 256);
        s.I = T == 40 ? 96 : (T == 7 ? 64 : 128);
        s.dist = dist;
        points.emplace_back(name, s);
      }
  for (const char* routing : {"one_expert", "empty_experts"})
    for (std::int64_t B : {16, 64, 128}) {
      Shape s;
      s.T = 96;
      s.routing = routing;
      s.B = B;
      s.activation = "silu";
      points.emplace_back("moe_gemm/stage1", s);
      points.emplace_back("moe_gemm/stage2", s);
    }
  return points;
}

TEST(MoeGemmGpu, EveryVariantEqualsItsEmulationAsClaimed) {
  FB_SKIP_WITHOUT_GPU();
  void* stream = gpu::create_stream();
  expect_gpu_equals_emulation(warp_kernel_points(), "moe_gemm gpu", stream);
  gpu::destroy_stream(stream);
}

// FUSEBENCH_MOE_MFMA asks for the AMD integer-MFMA engine: 1 yes, 0 or unset no, anything else an
// InputError; where the engine cannot run (NVIDIA, an AMD build without MFMA code) asking changes
// nothing. GPU builds (the knob is the launchers'); no device needed.
TEST(MoeGemmMfma, KnobAsksForTheEngineAndRefusesOtherValues) {
#if !FUSEBENCH_HAS_GPU
  GTEST_SKIP() << "no GPU backend in this build";
#else
  const ScopedEnv knob("FUSEBENCH_MOE_MFMA", nullptr);
  EXPECT_FALSE(moe_mfma_wanted());
  setenv("FUSEBENCH_MOE_MFMA", "0", 1);
  EXPECT_FALSE(moe_mfma_wanted());
  setenv("FUSEBENCH_MOE_MFMA", "yes", 1);
  EXPECT_THROW(moe_mfma_wanted(), InputError);
  setenv("FUSEBENCH_MOE_MFMA", "1", 1);
  EXPECT_TRUE(moe_mfma_wanted());
  MoeGemmParams p;
  p.tokens = 7, p.topk = 4, p.experts = 9, p.hidden = 288, p.inter = 96;
  if (!moe_mfma_unavailable().empty()) {
    EXPECT_FALSE(moe_mfma_takes(p, true));
    EXPECT_FALSE(moe_mfma_takes(p, false));
  }
  p.engine = MoeGemmEngine::plain;
  EXPECT_FALSE(moe_mfma_takes(p, true));  // plain is never the matrix units'
#endif
}

// The AMD integer-MFMA engine (FUSEBENCH_MOE_MFMA=1) on the warp kernels' points, where a device
// runs it: every variant equals its emulation as claimed, and bitwise on a rerun. Skipped with the
// reason elsewhere (NVIDIA; no AMD device has run it yet).
TEST(MoeGemmGpu, MfmaEngineEqualsTheEmulationAsClaimed) {
  FB_SKIP_WITHOUT_GPU();
#if !FUSEBENCH_HAS_GPU
  GTEST_SKIP() << "no GPU backend in this build";
#else
  if (const std::string why = moe_mfma_unavailable(); !why.empty()) GTEST_SKIP() << why;
  const ScopedEnv force("FUSEBENCH_MOE_MFMA", "1");
  MoeGemmParams p;
  p.tokens = 7, p.topk = 4, p.experts = 9, p.hidden = 288, p.inter = 96;
  ASSERT_TRUE(moe_mfma_takes(p, true) && moe_mfma_takes(p, false));  // the launchers take it
  void* stream = gpu::create_stream();
  expect_gpu_equals_emulation(warp_kernel_points(), "moe_gemm mfma", stream);
  gpu::destroy_stream(stream);
#endif
}

// The wgmma prefill engine (sm_90a), forced at small shapes (FUSEBENCH_MOE_WGMMA_MIN_PAIRS=0):
// every variant equals its emulation as it claims (exact and plain bitwise; fast, its accumulating
// form, within its bound of its emulation and of fp64), and bitwise on a rerun, at shapes it tiles: several
// stages and column tiles, partial tiles, every sort block size it takes (tiles of 8, 4, 2, 1
// blocks), `edge` inputs (extreme scales: the canonical promotion) and `normal` ones (the
// one-operation form), an expert with every pair and experts with none. The case names each form
// it launches (launch_config).
TEST(MoeGemmGpu, WgmmaEngineEqualsTheEmulationAsClaimed) {
  FB_SKIP_WITHOUT_GPU();
#if !FUSEBENCH_HAS_GPU
  GTEST_SKIP() << "no GPU backend in this build";
#else
  if (const std::string why = moe_wgmma_unavailable(); !why.empty()) GTEST_SKIP() << why;
  const ScopedEnv force("FUSEBENCH_MOE_WGMMA_MIN_PAIRS", "0");
  ASSERT_EQ(moe_wgmma_min_pairs(), 0);
  void* stream = gpu::create_stream();
  std::vector<std::pair<const char*, Shape>> points;
  for (const char* name : {"moe_gemm/stage1", "moe_gemm/stage2", "moe_gemm/shared_fold"})
    for (std::int64_t T : {1, 40, 1030})
      for (const char* dist : {"normal", "edge"}) {
        Shape s;
        s.T = T;
        s.E = T == 1030 ? 9 : 8;
        s.K = T == 40 ? 384 : 256;
        s.I = T == 1030 ? 256 : 128;
        s.dist = dist;
        points.emplace_back(name, s);
      }
  for (const char* routing : {"one_expert", "empty_experts"})
    for (std::int64_t B : {16, 32, 64, 128}) {
      Shape s;
      s.T = 96;
      s.K = 384;
      s.I = 128;
      s.routing = routing;
      s.B = B;
      s.activation = "silu";
      points.emplace_back("moe_gemm/stage1", s);
      points.emplace_back("moe_gemm/stage2", s);
    }
  for (const auto& [name, s] : points)
    ASSERT_TRUE(moe_wgmma_shape_fits(s.K, s.I, true, s.B) && moe_wgmma_shape_fits(s.I, s.K, false, s.B)) << name;
  // Every form of the tiles: tokens and weights staged by their prologues and read by TMA, the
  // tokens alone (the weights converted by the producer), and both converted in the kernel. The
  // weight prologue skips experts no sort block names (one_expert, empty_experts).
  struct Form {
    const char* tokens;
    const char* weights;
    const char* tag;
  };
  for (const Form& f : {Form{"1", "1", "moe_gemm wgmma staged tokens+weights"},
                        Form{"1", "0", "moe_gemm wgmma staged tokens"}, Form{"0", "1", "moe_gemm wgmma in-kernel"}}) {
    setenv("FUSEBENCH_MOE_TOKEN_STAGE", f.tokens, 1);
    setenv("FUSEBENCH_MOE_WEIGHT_STAGE", f.weights, 1);
    MoeGemmParams probe;
    probe.tokens = 1030;
    probe.topk = 4;
    probe.experts = 9;
    probe.hidden = 256;
    probe.inter = 256;
    EXPECT_EQ(moe_wgmma_stages_tokens(probe, true), std::string(f.tokens) == "1");
    const bool weights = std::string(f.tokens) == "1" && std::string(f.weights) == "1";
    EXPECT_EQ(moe_wgmma_stages_weights(probe, true), weights);
    {  // the case gives the matrix-unit variants the staged weight rows exactly then, and counts the launch
      const KernelCase& kc = moe_case("moe_gemm/stage1");
      const Shape& s = points.front().second;
      const auto inst = kc.make(point(kc, s));
      for (VariantId v = 0; v < kc.variants.size(); ++v) {
        std::int64_t bytes = -1;
        for (const TensorSpec& t : inst->workspace(v))
          if (t.name == "weight_stage") bytes = static_cast<std::int64_t>(t.bytes());
        const bool plain = kc.variants[v].name == "plain";
        const std::int64_t want = weights && !plain ? MoeWeightStageLayout{s.E, 2 * s.I, s.K}.bytes() : -1;
        EXPECT_EQ(bytes, want) << kc.variants[v].name;
        if (!plain) {
          EXPECT_EQ(inst->launches(v), std::string(f.tokens) == "1" ? (weights ? 3 : 2) : 0) << kc.variants[v].name;
        }
        // ... and names the form in the report's launch_configs
        const std::string form = std::string("wgmma") + (std::string(f.tokens) == "1" ? ", tokens staged" : "") +
                                 (weights ? ", weights staged" : "");
        EXPECT_EQ(inst->launch_config(v, Backend::gpu), plain ? std::string() : form) << kc.variants[v].name;
      }
    }
    expect_gpu_equals_emulation(points, f.tag, stream);
  }
  {  // below the threshold of routed pairs the decode engine runs (or, turned off, the warp kernels),
     // and the report says so
    setenv("FUSEBENCH_MOE_WGMMA_MIN_PAIRS", "1000000000", 1);
    const KernelCase& kc = moe_case("moe_gemm/stage2");
    const auto inst = kc.make(point(kc, points.front().second));
    setenv("FUSEBENCH_MOE_DECODE_ENGINE", "wgmma", 1);
    // Stage 2's K here is I = 128, not whole stage pairs (256 K): even forced, the decode engine
    // declines it and the warp kernels run (DecodeEngineEqualsTheEmulationAsClaimed names its shapes).
    EXPECT_EQ(inst->launch_config(kc.variant_id("exact"), Backend::gpu), "warp kernels");
    setenv("FUSEBENCH_MOE_DECODE_ENGINE", "warp", 1);
    EXPECT_EQ(inst->launch_config(kc.variant_id("exact"), Backend::gpu), "warp kernels");
    EXPECT_EQ(inst->launch_config(kc.variant_id("exact"), Backend::cpu), "");
    unsetenv("FUSEBENCH_MOE_DECODE_ENGINE");
    setenv("FUSEBENCH_MOE_WGMMA_MIN_PAIRS", "0", 1);
  }
  unsetenv("FUSEBENCH_MOE_TOKEN_STAGE");
  unsetenv("FUSEBENCH_MOE_WEIGHT_STAGE");
  gpu::destroy_stream(stream);
#endif
}

// The wgmma decode engine (sm_90a; moe_gemm_decode.hip), forced (FUSEBENCH_MOE_DECODE_ENGINE=wgmma)
// at shapes it tiles below the prefill engine's threshold: every variant equals its emulation as it
// claims and bitwise on a rerun, at passes of both widths (sort blocks with 1-8 and 9-16 live rows;
// blocks of 32, 64 and 128 rows in passes of 16), token chunks whole, several and cut short, the
// weight ring refilled and continued across passes, experts with every pair and with none, `edge`
// inputs (the canonical promotion) and `normal` ones (mostly the one-operation form), both
// activations. Shapes whose K is not whole pairs of stages take the mma.sync kernels. The same points
// again with FUSEBENCH_MOE_DECODE_ENGINE=warp: the mma.sync kernels, the same bits.
TEST(MoeGemmGpu, DecodeEngineEqualsTheEmulationAsClaimed) {
  FB_SKIP_WITHOUT_GPU();
#if !FUSEBENCH_HAS_GPU
  GTEST_SKIP() << "no GPU backend in this build";
#else
  if (const std::string why = moe_wgmma_unavailable(); !why.empty()) GTEST_SKIP() << why;
  void* stream = gpu::create_stream();
  std::vector<std::pair<const char*, Shape>> points;
  for (const char* name : {"moe_gemm/stage1", "moe_gemm/stage2", "moe_gemm/shared_fold"})
    for (std::int64_t T : {1, 40, 300})
      for (const char* dist : {"normal", "edge"}) {
        Shape s;
        s.T = T;
        s.E = 8;
        // K: 3 stages (not the engine's), 36 (two chunks of 16 and a part at N = 8, the ring refilled), 2
        s.K = T == 40 ? 384 : (T == 1 ? 4608 : 256);
        s.I = T == 300 ? 1280 : (T == 1 ? 256 : 128);  // 10 stages (two chunks at N = 16), 2, 1 (not the engine's)
        s.dist = dist;
        s.activation = T == 40 ? "silu" : "swiglu_oai";
        points.emplace_back(name, s);
      }
  for (const char* routing : {"uniform", "one_expert", "empty_experts"})
    for (std::int64_t B : {16, 32, 64, 128}) {
      Shape s;
      s.T = 96;
      s.K = 1280;  // passes of 16 rows continue the ring's fills
      s.I = 256;
      s.routing = routing;
      s.B = B;
      points.emplace_back("moe_gemm/stage1", s);
      points.emplace_back("moe_gemm/stage2", s);
    }
  setenv("FUSEBENCH_MOE_DECODE_ENGINE", "wgmma", 1);  // wherever it fits, not only where the rule picks it
  for (const auto& [name, s] : points) {  // the engine each point takes, as the report names it
    const KernelCase& kc = moe_case(name);
    const auto inst = kc.make(point(kc, s));
    const std::int64_t inner = std::string(name) == "moe_gemm/stage1" ? s.K : s.I;
    const std::string config = inst->launch_config(0, Backend::gpu);  // exact, or chain
    if (inner % 256 == 0)
      EXPECT_EQ(config, "wgmma decode") << name << " T=" << s.T;
    else
      EXPECT_NE(config, "wgmma decode") << name << " T=" << s.T;
  }
  expect_gpu_equals_emulation(points, "moe_gemm decode", stream);
  setenv("FUSEBENCH_MOE_DECODE_ENGINE", "warp", 1);
  expect_gpu_equals_emulation(points, "moe_gemm warp kernels", stream);
  unsetenv("FUSEBENCH_MOE_DECODE_ENGINE");
  gpu::destroy_stream(stream);
#endif
}

// The matrix units' block sums of adversarial blocks are the exact integers: every +-6 (the
// largest |S_q| = 4608, both signs), alternating signs that cancel to 0, halves that leave
// 1/4-grid remainders (ties of a narrower accumulator), one large element among small ones, random
// blocks, and every code against every code. Scales enter the mma.sync kernels' block sums only on
// the CUDA cores afterwards (extreme scales: PromotionRoundsOnlyWhereTheFormatForces and the `edge`
// points of EveryVariantEqualsItsEmulationAsClaimed); the wgmma engine carries a token block's scale
// near 1 in its operand (times 2^u, u = 1..12) and converts by table in k order, so the same blocks
// run again converted that way, the columns shifted by u = 0, 1, 6 and 12, and must give S_q * 2^u
// exactly.
TEST(MoeGemmGpu, MatrixUnitBlockSumsAreExact) {
  FB_SKIP_WITHOUT_GPU();
#if !FUSEBENCH_HAS_GPU
  GTEST_SKIP() << "no GPU backend in this build";
#else
  std::vector<std::array<std::uint8_t, 16>> rows;  // a pool of blocks
  const auto fill = [](std::uint8_t byte) {
    std::array<std::uint8_t, 16> b{};
    b.fill(byte);
    return b;
  };
  rows.push_back(fill(0x77));  // all +6
  rows.push_back(fill(0xFF));  // all -6
  rows.push_back(fill(0xF7));  // +6, -6 alternating: cancels to 0
  rows.push_back(fill(0x00));
  rows.push_back(fill(0x88));  // -0
  rows.push_back(fill(0x11));  // all +0.5: products 1/4
  rows.push_back(fill(0x91));  // +0.5, -0.5
  rows.push_back(fill(0x13));  // 0.5, 1.5
  std::array<std::uint8_t, 16> spike = fill(0x11);
  spike[5] = 0x17;             // one 6 among halves
  rows.push_back(spike);
  for (int c = 0; c < 16; ++c) rows.push_back(fill(static_cast<std::uint8_t>(c | (c << 4))));  // every code
  std::mt19937 rng(11);
  while (rows.size() < 64) {
    std::array<std::uint8_t, 16> b{};
    for (auto& x : b) x = static_cast<std::uint8_t>(rng());
    rows.push_back(b);
  }
  // Tiles: A rows and B columns drawn from the pool so that every pair meets.
  const std::int64_t tiles = static_cast<std::int64_t>(rows.size() * rows.size() / (16 * 8)) + 1;
  std::vector<std::uint8_t> a(static_cast<std::size_t>(tiles * 256)), b(static_cast<std::size_t>(tiles * 128));
  for (std::int64_t t = 0; t < tiles; ++t) {
    for (int r = 0; r < 16; ++r)
      std::memcpy(&a[static_cast<std::size_t>(t * 256 + r * 16)], rows[static_cast<std::size_t>((t * 16 + r) % rows.size())].data(), 16);
    for (int c = 0; c < 8; ++c)
      std::memcpy(&b[static_cast<std::size_t>(t * 128 + c * 16)],
                  rows[static_cast<std::size_t>((t * 16 / rows.size() * 8 + c + t) % rows.size())].data(), 16);
  }
  void* stream = gpu::create_stream();
  void* da = gpu::allocate(a.size());
  void* db = gpu::allocate(b.size());
  void* ds = gpu::allocate(static_cast<std::size_t>(tiles * 128 * 4));
  gpu::copy_to_device(da, a.data(), a.size());
  gpu::copy_to_device(db, b.data(), b.size());
  // The exact engine also with the operands as the wgmma prefill engine converts them, the columns
  // times 2^u as its token blocks (u = 0, and 1, 6, 12: the range's ends and its middle).
  const std::pair<MoeGemmEngine, int> runs[] = {{MoeGemmEngine::exact, -1}, {MoeGemmEngine::plain, -1},
                                                {MoeGemmEngine::exact, 0},  {MoeGemmEngine::exact, 1},
                                                {MoeGemmEngine::exact, 6},  {MoeGemmEngine::exact, 12}};
  for (const auto& [engine, shift] : runs) {
    if (shift >= 0 && !moe_wgmma_unavailable().empty()) continue;  // the engine's conversion runs on sm_90a only
    gpu::fill_bytes(ds, 0x5A, static_cast<std::size_t>(tiles * 128 * 4), stream);
    moe_block_sums_launch(engine, static_cast<const std::uint8_t*>(da), static_cast<const std::uint8_t*>(db),
                          static_cast<std::int32_t*>(ds), tiles, stream, shift);
    gpu::synchronize(stream);
    std::vector<std::int32_t> sums(static_cast<std::size_t>(tiles * 128));
    gpu::copy_to_host(sums.data(), ds, sums.size() * 4);
    std::int64_t checked = 0;
    for (std::int64_t t = 0; t < tiles; ++t)
      for (int r = 0; r < 16; ++r)
        for (int c = 0; c < 8; ++c) {
          const int want = mx_block_sum_quarters(&a[static_cast<std::size_t>(t * 256 + r * 16)],
                                                 &b[static_cast<std::size_t>(t * 128 + c * 16)]);
          ASSERT_EQ(sums[static_cast<std::size_t>(t * 128 + r * 8 + c)], want)
              << (engine == MoeGemmEngine::exact ? "mma" : "plain") << " shift " << shift << " tile " << t << " row " << r
              << " col " << c;
          ++checked;
        }
    EXPECT_EQ(checked, tiles * 128);
  }
  gpu::release(da);
  gpu::release(db);
  gpu::release(ds);
  gpu::destroy_stream(stream);
#endif
}

}  // namespace
}  // namespace fb
