// Block-scale fp8 GEMM with split-K, and F7: the emulations follow their written orders and sit
// within the derived fp64 budgets for every S; F7's prezeroed variant equals the memset variant
// bitwise; a producer that does not zero the buffer is caught (NaN poison -> NaN in C, reported;
// the other poison -> C differs from the memset variant). On a GPU: the plain kernel equals the
// canonical emulation bitwise for every S, the wgmma kernel stays within its budget and repeats
// bitwise, its wide tile equals its 128-wide tile bitwise, and F7's variants agree bitwise.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/device.hpp"
#include "core/errors.hpp"
#include "core/inputs.hpp"
#include "core/kernel_case.hpp"
#include "kernels/fp8_gemm/fp8_gemm_bounds.hpp"
#include "kernels/fp8_gemm/fp8_gemm_inputs.hpp"
#include "kernels/fp8_gemm/fp8_gemm_wgmma_epilogue.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale_cases.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale_cluster_arrivals.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale_math.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale_schedule.hpp"
#include "reference/codecs/bf16.hpp"
#include "reference/fp8_gemm_ref.hpp"
#include "support/skip_without_gpu.hpp"

namespace fb {
namespace {

struct Problem {
  Fp8BlockscaleParams p;
  std::vector<std::uint8_t> a, b;
  std::vector<float> as, bs;
  Problem(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t s, Distribution d = Distribution::normal,
          std::uint64_t seed = 5)
      : p{m, n, k, s, Fp8Flavour::e4m3fn}, a(m * k), b(n * k), as(m * (k / 128)), bs((n / 128) * (k / 128)) {
    fill_fp8_operand(a.data(), m, k, d, p.flavour, seed, 0);
    fill_fp8_operand(b.data(), n, k, Distribution::normal, p.flavour, seed, 2);
    fill_fp8_scales(as.data(), static_cast<std::int64_t>(as.size()), seed, 1);
    fill_fp8_scales(bs.data(), static_cast<std::int64_t>(bs.size()), seed, 3);
  }
  // C and acc from an emulation with acc starting at `start` (0 by contract).
  std::pair<std::vector<std::uint16_t>, std::vector<float>> run(
      void (*emu)(const Fp8BlockscaleParams&, const Fp8BlockscaleBuffers&, const std::vector<std::int64_t>&),
      float start = 0.0f) const {
    std::vector<std::uint16_t> c(p.rows * p.cols, 0xFFFF);
    std::vector<float> acc(p.rows * p.cols, start);
    emu(p, {a.data(), as.data(), b.data(), bs.data(), acc.data(), c.data(), nullptr}, {});
    return {c, acc};
  }
  Fp64Check fp64(const std::vector<std::uint16_t>& c, bool matrix_unit) const {
    Fp8GemmRefProblem r{p.rows, p.cols, p.depth, p.flavour, a.data(), b.data(), 128, as.data(), p.k_blocks(), 1,
                        bs.data(), 128, p.k_blocks()};
    return fp8_gemm_check_fp64(r, c.data(), {}, blockscale_beta(p.depth, p.slices, matrix_unit), "test").front();
  }
};

std::vector<std::uint16_t> written_order(const Problem& q) {
  const Fp8BlockscaleParams& p = q.p;
  std::vector<std::uint16_t> c(p.rows * p.cols);
  const std::int64_t kb_count = p.depth / 128;
  for (std::int64_t m = 0; m < p.rows; ++m)
    for (std::int64_t n = 0; n < p.cols; ++n) {
      float acc = 0.0f;
      for (std::int64_t s = 0; s < p.slices; ++s) {
        float part = 0.0f;
        for (std::int64_t kb = s * kb_count / p.slices; kb < (s + 1) * kb_count / p.slices; ++kb) {
          float dot = 0.0f;
          for (std::int64_t k = kb * 128; k < kb * 128 + 128; ++k)
            dot += fp8_e4m3fn_to_float(q.a[m * p.depth + k]) * fp8_e4m3fn_to_float(q.b[n * p.depth + k]);
          const float scale = q.as[m * kb_count + kb] * q.bs[(n / 128) * kb_count + kb];
          part = std::fma(dot, scale, part);  // one rounding
        }
        acc += part;
      }
      c[m * p.cols + n] = bf16_from_float(acc);
    }
  return c;
}

TEST(Fp8Blockscale, CanonicalEmulationIsTheWrittenOrderForEverySliceCount) {
  for (std::int64_t s : {1, 2, 3, 6}) {
    const Problem q(5, 256, 768, s);
    EXPECT_EQ(q.run(fp8_blockscale_canonical_emu).first, written_order(q)) << "S=" << s;
  }
}

TEST(Fp8Blockscale, EmulationsWithinTheirFp64BudgetsForEverySliceCount) {
  for (std::int64_t m : {1, 5, 17}) {
    for (std::int64_t s : {1, 2, 4, 6}) {
      for (auto d : {Distribution::normal, Distribution::edge, Distribution::outliers}) {
        const Problem q(m, 256, 768, s, d, static_cast<std::uint64_t>(m * 10 + s));
        const std::string what = "M=" + std::to_string(m) + " S=" + std::to_string(s) + " " + distribution_name(d);
        const Fp64Check canonical = q.fp64(q.run(fp8_blockscale_canonical_emu).first, false);
        const Fp64Check blocked = q.fp64(q.run(fp8_blockscale_blocked_emu).first, true);
        for (const Fp64Check* c : {&canonical, &blocked}) {
          EXPECT_EQ(c->stats.nan, 0) << what;
          EXPECT_LE(c->stats.abs_max, c->bound.limit) << what << ": " << c->bound.reason;
        }
      }
    }
  }
}

TEST(Fp8Blockscale, AccHoldsTheSumAndCIsItsBf16) {
  const Problem q(3, 128, 384, 3);
  const auto [c, acc] = q.run(fp8_blockscale_canonical_emu);
  for (std::size_t i = 0; i < c.size(); ++i) EXPECT_EQ(c[i], bf16_from_float(acc[i]));
}

TEST(Fp8Blockscale, ABufferThatDoesNotStartAtZeroChangesTheResult) {
  const Problem q(3, 128, 384, 2);
  const auto zero = q.run(fp8_blockscale_canonical_emu, 0.0f);
  const auto nan = q.run(fp8_blockscale_canonical_emu, std::nanf(""));
  const auto junk = q.run(fp8_blockscale_canonical_emu, 1.0e16f);
  EXPECT_GT(q.fp64(nan.first, false).stats.nan, 0);
  EXPECT_NE(junk.first, zero.first);
}

// ---- F7 through its case instance, on the CPU backend (and the GPU below).

struct Run {
  HostTensors inputs, outputs;
};

Point f7_point(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t s) {
  Point pt;
  pt.set("M", m);
  pt.set("N", n);
  pt.set("K", k);
  pt.set("S", s);
  pt.set("dist", std::string("normal"));
  return pt;
}

HostTensors make_inputs(const CaseInstance& inst) {
  HostTensors in = allocate_host(inst.inputs());
  inst.prepare_weights(11, in);
  inst.generate(12, in);
  return in;
}

// Runs variant v with every output poisoned by `poison` first, as the harness does.
HostTensors run_cpu(const CaseInstance& inst, VariantId v, HostTensors& in, std::uint8_t poison) {
  HostTensors out = allocate_host(inst.outputs());
  HostTensors ws = allocate_host(inst.workspace(v));
  for (HostTensor& t : out) std::memset(t.bytes.data(), poison, t.bytes.size());
  auto ptrs = [](HostTensors& ts) {
    TensorPointers p;
    for (HostTensor& t : ts) p.items.push_back(t.bytes.data());
    return p;
  };
  inst.run(v, ExecContext{Backend::cpu, nullptr}, ptrs(in), ptrs(out), ptrs(ws));
  return out;
}

TEST(Fp8BlockscaleF7, PrezeroedEqualsMemsetBitwiseOnEveryOutput) {
  const KernelCase kc = make_fp8_blockscale_f7_case(true);
  for (std::int64_t s : {1, 2, 3}) {
    auto inst = kc.make(f7_point(5, 256, 384, s));
    HostTensors in = make_inputs(*inst);
    const HostTensors a = run_cpu(*inst, kc.variant_id("memset"), in, 0xFF);
    const HostTensors b = run_cpu(*inst, kc.variant_id("prezeroed"), in, 0x5A);
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].bytes, b[i].bytes) << a[i].spec.name << " S=" << s;
    const std::vector<Fp64Check> checks = inst->check_fp64(in, b, CheckSubset{});
    EXPECT_EQ(checks.front().stats.nan, 0);
    EXPECT_LE(checks.front().stats.abs_max, checks.front().bound.limit) << checks.front().bound.reason;
  }
}

TEST(Fp8BlockscaleF7, AProducerThatDoesNotZeroIsCaught) {
  const KernelCase broken = make_fp8_blockscale_f7_case(false);
  auto inst = broken.make(f7_point(5, 256, 384, 2));
  HostTensors in = make_inputs(*inst);
  // Under the NaN poison the buffer's NaN reaches C: the fp64 check counts it, and NaN never passes.
  const HostTensors nan_run = run_cpu(*inst, broken.variant_id("prezeroed"), in, 0xFF);
  EXPECT_GT(inst->check_fp64(in, nan_run, CheckSubset{}).front().stats.nan, 0);
  // Under the other poison C is finite but wrong: it differs from the memset variant (the bitwise
  // pair claim fails) and leaves the fp64 budget.
  const HostTensors junk = run_cpu(*inst, broken.variant_id("prezeroed"), in, 0x5A);
  const HostTensors good = run_cpu(*inst, broken.variant_id("memset"), in, 0xFF);
  EXPECT_NE(junk[3].bytes, good[3].bytes);
  EXPECT_GT(inst->check_fp64(in, junk, CheckSubset{}).front().stats.abs_max, 1.0);
}

TEST(Fp8BlockscaleF7, ImpossibleShapesAreRejected) {
  const KernelCase kc = make_fp8_blockscale_f7_case(true);
  EXPECT_THROW(kc.make(f7_point(5, 200, 384, 1)), InputError);
  EXPECT_THROW(kc.make(f7_point(5, 256, 300, 1)), InputError);
  EXPECT_THROW(kc.make(f7_point(5, 256, 384, 4)), InputError);
}

#if FUSEBENCH_HAS_GPU
struct DeviceProblem {
  std::vector<void*> ptrs;
  Fp8BlockscaleBuffers b;
  explicit DeviceProblem(const Problem& q) {
    auto up = [&](const void* src, std::size_t bytes) {
      void* d = gpu::allocate(bytes);
      if (src) gpu::copy_to_device(d, src, bytes);
      ptrs.push_back(d);
      return d;
    };
    b.a = static_cast<const std::uint8_t*>(up(q.a.data(), q.a.size()));
    b.a_scale = static_cast<const float*>(up(q.as.data(), q.as.size() * 4));
    b.b = static_cast<const std::uint8_t*>(up(q.b.data(), q.b.size()));
    b.b_scale = static_cast<const float*>(up(q.bs.data(), q.bs.size() * 4));
    b.acc = static_cast<float*>(up(nullptr, q.p.rows * q.p.cols * 4));
    b.c = static_cast<std::uint16_t*>(up(nullptr, q.p.rows * q.p.cols * 2));
    b.tickets = static_cast<std::uint32_t*>(up(nullptr, q.p.tickets() * 4));
    gpu::fill_bytes(b.tickets, 0x5A, q.p.tickets() * 4, nullptr);  // any content: the epochs cope
  }
  ~DeviceProblem() {
    for (void* p : ptrs) gpu::release(p);
  }
  std::vector<std::uint16_t> run(const Problem& q,
                                 void (*launch)(const Fp8BlockscaleParams&, const Fp8BlockscaleBuffers&, void*),
                                 std::uint8_t poison) {
    gpu::fill_bytes(b.c, poison, q.p.rows * q.p.cols * 2, nullptr);
    fp8_blockscale_zero_acc_launch(q.p, b, nullptr);
    launch(q.p, b, nullptr);
    gpu::synchronize(nullptr);
    std::vector<std::uint16_t> c(q.p.rows * q.p.cols);
    gpu::copy_to_host(c.data(), b.c, c.size() * 2);
    return c;
  }
};

TEST(Fp8BlockscaleGpu, PlainEqualsTheCanonicalEmulationBitwiseForEverySliceCount) {
  FB_SKIP_WITHOUT_GPU();
  for (std::int64_t m : {1, 5, 17, 100})
    for (std::int64_t s : {1, 2, 3, 6}) {
      const Problem q(m, 256, 768, s, Distribution::edge, static_cast<std::uint64_t>(m + s));
      DeviceProblem d(q);
      const auto want = q.run(fp8_blockscale_canonical_emu).first;
      EXPECT_EQ(d.run(q, fp8_blockscale_plain_launch, 0xFF), want) << "M=" << m << " S=" << s;
      EXPECT_EQ(d.run(q, fp8_blockscale_plain_launch, 0x5A), want) << "repeat M=" << m << " S=" << s;
    }
}

// A shape of the GPU tests below, and its text in their failure messages.
struct GemmShape {
  std::int64_t m, n, k, s;
  std::string text() const {
    return "M=" + std::to_string(m) + " N=" + std::to_string(n) + " K=" + std::to_string(k) + " S=" + std::to_string(s);
  }
};

TEST(Fp8BlockscaleGpu, WgmmaWithinItsBudgetAtOddShapesAndRepeatsBitwise) {
  FB_SKIP_WITHOUT_GPU();
  if (const std::string why = fp8_blockscale_wgmma_unavailable({64, 128, 128, 1}); !why.empty()) GTEST_SKIP() << why;
  for (const GemmShape sh : {GemmShape{1, 128, 128, 1}, GemmShape{5, 256, 768, 2}, GemmShape{17, 2304, 6144, 4},
                             GemmShape{100, 768, 6144, 1}, GemmShape{200, 2048, 768, 6}, GemmShape{64, 128, 1024, 8},
                             GemmShape{129, 256, 1024, 2}, GemmShape{257, 384, 768, 1},
                             // 144 tiles x 3 slices: more units than an H200's 132 SMs, so persistent
                             // CTAs wait on slices that other CTAs reach only on their later units.
                             GemmShape{300, 6144, 384, 3}}) {
    const Problem q(sh.m, sh.n, sh.k, sh.s, Distribution::normal, static_cast<std::uint64_t>(sh.m * 7 + sh.s));
    DeviceProblem d(q);
    const std::vector<std::uint16_t> got = d.run(q, fp8_blockscale_wgmma_launch, 0xFF);
    const std::string what = sh.text();
    const Fp64Check c = q.fp64(got, true);
    EXPECT_EQ(c.stats.nan, 0) << what;
    EXPECT_LE(c.stats.abs_max, c.bound.limit) << what;
    const std::vector<std::uint16_t> emu = q.run(fp8_blockscale_blocked_emu).first;
    double num = 0, den = 0;
    for (std::size_t i = 0; i < emu.size(); ++i) {
      const double x = bf16_to_float(got[i]), y = bf16_to_float(emu[i]);
      num += (x - y) * (x - y);
      den += y * y;
    }
    const double beta = blockscale_beta(sh.k, sh.s, true);
    EXPECT_LE(std::sqrt(num / den), pair_rel_l2(beta, beta, sh.k)) << what;
    EXPECT_EQ(d.run(q, fp8_blockscale_wgmma_launch, 0x5A), got) << "repeat " << what;
  }
}

// The wide tile (192 columns, FUSEBENCH_BLOCKSCALE_TILE_N=192) computes every element with the same
// block partials, scales and fma order as the 128-wide one, so C and acc must be the same bits; the
// tiles at n0 % 128 == 64 take their second scale block from column 64, those at 0 from 128, and a
// mix-up of either changes C. Shapes: N a multiple of 384 (where the wide tile applies), odd M, more
// units than SMs with several slices.
TEST(Fp8BlockscaleGpu, WideTileEqualsTheNarrowTileBitwiseOnCAndAcc) {
  FB_SKIP_WITHOUT_GPU();
  if (const std::string why = fp8_blockscale_wgmma_unavailable({64, 384, 128, 1}); !why.empty()) GTEST_SKIP() << why;
  const auto with_tile = [](const char* cols, DeviceProblem& d, const Problem& q, std::uint8_t poison) {
    setenv(kBlockscaleTileWidthVariable, cols, 1);
    std::pair<std::vector<std::uint16_t>, std::vector<float>> out{d.run(q, fp8_blockscale_wgmma_launch, poison), {}};
    unsetenv(kBlockscaleTileWidthVariable);
    out.second.resize(q.p.rows * q.p.cols);
    gpu::copy_to_host(out.second.data(), d.b.acc, out.second.size() * 4);
    return out;
  };
  for (const GemmShape sh : {GemmShape{1, 384, 768, 1}, GemmShape{17, 2304, 6144, 4}, GemmShape{100, 768, 1024, 2},
                             GemmShape{129, 1152, 768, 1}, GemmShape{300, 6144, 384, 3},
                             GemmShape{257, 2304, 2048, 1}}) {
    const Problem q(sh.m, sh.n, sh.k, sh.s, Distribution::normal, static_cast<std::uint64_t>(sh.m * 11 + sh.s));
    DeviceProblem d(q);
    const std::string what = sh.text();
    const auto narrow = with_tile("128", d, q, 0xFF);
    const auto wide = with_tile("192", d, q, 0x5A);
    EXPECT_EQ(std::memcmp(wide.first.data(), narrow.first.data(), narrow.first.size() * 2), 0) << "C " << what;
    EXPECT_EQ(std::memcmp(wide.second.data(), narrow.second.data(), narrow.second.size() * 4), 0) << "acc " << what;
    const Fp64Check c = q.fp64(wide.first, true);
    EXPECT_EQ(c.stats.nan, 0) << what;
    EXPECT_LE(c.stats.abs_max, c.bound.limit) << what;
    EXPECT_EQ(with_tile("192", d, q, 0xFF).first, wide.first) << "repeat " << what;
  }
}
// The direct form writes C without the fp32 buffer: the acc form's C bit for bit, with either
// epilogue at S = 1 (staged through shared memory and the TMA, or from the registers), for both
// tile widths (odd M, more units than SMs, both scale-block splits of the wide tile), and with
// S > 1 through the cluster's exchange (with either form of its arrivals); repeatable, within the
// fp64 budget, and acc is left exactly as it was (filled with 0x77 here, never +0). S > 8 is an
// input error.
TEST(Fp8BlockscaleGpu, DirectWritesTheAccFormsCBitwiseAndLeavesAccAlone) {
  FB_SKIP_WITHOUT_GPU();
  if (const std::string why = fp8_blockscale_wgmma_unavailable({64, 384, 128, 1}); !why.empty()) GTEST_SKIP() << why;
  const auto direct = [](DeviceProblem& d, const Problem& q, std::uint8_t poison) {
    const std::size_t elements = static_cast<std::size_t>(q.p.rows * q.p.cols);
    gpu::fill_bytes(d.b.c, poison, elements * 2, nullptr);
    gpu::fill_bytes(d.b.acc, 0x77, elements * 4, nullptr);
    fp8_blockscale_wgmma_direct_launch(q.p, d.b, nullptr);
    gpu::synchronize(nullptr);
    std::pair<std::vector<std::uint16_t>, std::vector<std::uint8_t>> out{std::vector<std::uint16_t>(elements),
                                                                         std::vector<std::uint8_t>(elements * 4)};
    gpu::copy_to_host(out.first.data(), d.b.c, elements * 2);
    gpu::copy_to_host(out.second.data(), d.b.acc, elements * 4);
    return out;
  };
  // The direct form's C equals the acc form's bit for bit, acc stays untouched, C is within the
  // fp64 budget and a rerun gives the same bytes.
  const auto expect_the_acc_forms_c = [&](DeviceProblem& d, const Problem& q, const std::vector<std::uint16_t>& acc_form,
                                          const std::string& what) {
    const auto got = direct(d, q, 0x5A);
    EXPECT_EQ(std::memcmp(got.first.data(), acc_form.data(), acc_form.size() * 2), 0) << "C " << what;
    EXPECT_TRUE(std::all_of(got.second.begin(), got.second.end(), [](std::uint8_t x) { return x == 0x77; }))
        << "acc written " << what;
    const Fp64Check c = q.fp64(got.first, true);
    EXPECT_EQ(c.stats.nan, 0) << what;
    EXPECT_LE(c.stats.abs_max, c.bound.limit) << what;
    EXPECT_EQ(direct(d, q, 0xFF).first, got.first) << "repeat " << what;
  };
  for (const char* width : {"128", "192"}) {
    setenv(kBlockscaleTileWidthVariable, width, 1);
    for (const GemmShape sh : {GemmShape{1, 384, 768, 1}, GemmShape{17, 2304, 6144, 1}, GemmShape{129, 1152, 768, 1},
                               GemmShape{257, 2304, 2048, 1}, GemmShape{300, 6144, 384, 1}, GemmShape{4099, 768, 256, 1}}) {
      const Problem q(sh.m, sh.n, sh.k, sh.s, Distribution::normal, static_cast<std::uint64_t>(sh.m * 13 + sh.n));
      DeviceProblem d(q);
      const std::string what = std::string("width ") + width + " " + sh.text();
      const std::vector<std::uint16_t> acc_form = d.run(q, fp8_blockscale_wgmma_launch, 0xFF);
      expect_the_acc_forms_c(d, q, acc_form, what);  // the staged epilogue (the default: every N here is a multiple of 8)
      setenv(kWgmmaEpilogueVariable, "registers", 1);  // and the register epilogue
      expect_the_acc_forms_c(d, q, acc_form, "registers, " + what);
      unsetenv(kWgmmaEpilogueVariable);
    }
    unsetenv(kBlockscaleTileWidthVariable);
  }
  // Split-K: the S slices of a tile on a cluster of S CTAs, added in shared memory, against the acc
  // form at the same S (its acc +0, then the slices in order): odd M (a tile half past C), more
  // tiles than fit at once (the clusters loop), S = 2 .. 8 with slices of unequal length, both
  // tile widths (the wide tile's exchange in two rounds).
  for (const GemmShape sh : {GemmShape{3, 2304, 6144, 4}, GemmShape{192, 2304, 6144, 3}, GemmShape{17, 384, 768, 5},
                             GemmShape{129, 1152, 2048, 2}, GemmShape{300, 6144, 1024, 8},
                             GemmShape{1000, 2304, 768, 3}}) {
    const Problem q(sh.m, sh.n, sh.k, sh.s, Distribution::normal, static_cast<std::uint64_t>(sh.m * 17 + sh.s));
    DeviceProblem d(q);
    const std::string what = sh.text();
    const std::vector<std::uint16_t> acc_form = d.run(q, fp8_blockscale_wgmma_launch, 0xFF);
    // The rule's width (128, or 192 where the narrow tiles' CTAs outnumber the SMs), then each
    // forced; each with both forms of the clusters' arrivals (fp8_blockscale_cluster_arrivals.hpp).
    for (const char* width : {"", "128", "192"}) {
      if (*width) setenv(kBlockscaleTileWidthVariable, width, 1);
      for (const char* arrivals : {"release", "relaxed"}) {
        setenv(kClusterArrivalsVariable, arrivals, 1);
        expect_the_acc_forms_c(d, q, acc_form, what + " width " + (*width ? width : "by rule") + ", " + arrivals);
      }
      unsetenv(kClusterArrivalsVariable);
      unsetenv(kBlockscaleTileWidthVariable);
    }
  }
  const Problem too_many(5, 256, 2048, 9, Distribution::normal, 3);
  DeviceProblem d(too_many);
  EXPECT_THROW(fp8_blockscale_wgmma_direct_launch(too_many.p, d.b, nullptr), InputError);
}

// Runs variant v of an instance on the GPU with outputs poisoned by `poison`; returns the outputs.
HostTensors run_gpu(const CaseInstance& inst, VariantId v, const HostTensors& in, std::uint8_t poison) {
  std::vector<void*> owned;
  auto device = [&](const std::vector<TensorSpec>& specs, const HostTensors* host, std::int32_t fill) {
    TensorPointers p;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      void* d = gpu::allocate(specs[i].bytes());
      owned.push_back(d);
      if (host) gpu::copy_to_device(d, (*host)[i].bytes.data(), specs[i].bytes());
      if (fill >= 0) gpu::fill_bytes(d, static_cast<std::uint8_t>(fill), specs[i].bytes(), nullptr);
      p.items.push_back(d);
    }
    return p;
  };
  const TensorPointers din = device(inst.inputs(), &in, -1);
  const TensorPointers dout = device(inst.outputs(), nullptr, poison);
  const TensorPointers dws = device(inst.workspace(v), nullptr, 0x5A);
  inst.run(v, ExecContext{Backend::gpu, nullptr}, din, dout, dws);
  gpu::synchronize(nullptr);
  HostTensors out = allocate_host(inst.outputs());
  for (std::size_t i = 0; i < out.size(); ++i) gpu::copy_to_host(out[i].bytes.data(), dout.items[i], out[i].bytes.size());
  for (void* d : owned) gpu::release(d);
  return out;
}

TEST(Fp8BlockscaleF7Gpu, PrezeroedEqualsMemsetBitwiseAndABrokenProducerIsCaught) {
  FB_SKIP_WITHOUT_GPU();
  const KernelCase kc = make_fp8_blockscale_f7_case(true);
  for (std::int64_t m : {1, 5, 100})
    for (std::int64_t s : {1, 2, 3}) {
      auto inst = kc.make(f7_point(m, 256, 384, s));
      HostTensors in = make_inputs(*inst);
      const HostTensors a = run_gpu(*inst, kc.variant_id("memset"), in, 0xFF);
      const HostTensors b = run_gpu(*inst, kc.variant_id("prezeroed"), in, 0x5A);
      for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].bytes, b[i].bytes) << a[i].spec.name << " M=" << m << " S=" << s;
      const Fp64Check c = inst->check_fp64(in, b, CheckSubset{}).front();
      EXPECT_EQ(c.stats.nan, 0);
      EXPECT_LE(c.stats.abs_max, c.bound.limit) << c.bound.reason;
    }
  const KernelCase broken = make_fp8_blockscale_f7_case(false);
  auto inst = broken.make(f7_point(5, 256, 384, 2));
  HostTensors in = make_inputs(*inst);
  EXPECT_GT(inst->check_fp64(in, run_gpu(*inst, broken.variant_id("prezeroed"), in, 0xFF), CheckSubset{}).front().stats.nan, 0);
}
#endif  // FUSEBENCH_HAS_GPU

}  // namespace
}  // namespace fb
