// Per-token x per-channel fp8 GEMM (general and F8): the emulations follow their written orders and
// sit within the derived fp64 budgets on odd shapes, both fp8 flavours and the edge rows; a NaN
// input is reported; the subset emulation writes only its rows. On a GPU: plain and small-M equal
// the canonical emulation bitwise, wgmma stays within its budget and bound of the blocked
// emulation at odd shapes and repeats bitwise.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/device.hpp"
#include "core/errors.hpp"
#include "core/inputs.hpp"
#include "kernels/fp8_gemm/fp8_gemm.hpp"
#include "kernels/fp8_gemm/fp8_gemm_wgmma_layout.hpp"
#include "kernels/fp8_gemm/fp8_gemm_bounds.hpp"
#include "kernels/fp8_gemm/fp8_gemm_inputs.hpp"
#include "kernels/fp8_gemm/fp8_gemm_math.hpp"
#include "kernels/fp8_gemm/fp8_gemm_tile_width.hpp"
#include "kernels/fp8_gemm/fp8_gemm_wgmma_epilogue.hpp"
#include "reference/codecs/bf16.hpp"
#include "reference/fp8_gemm_ref.hpp"
#include "reference/metrics/error_stats.hpp"
#include "support/skip_without_gpu.hpp"

namespace fb {
namespace {

struct Problem {
  Fp8GemmParams p;
  std::vector<std::uint8_t> a, b;
  std::vector<float> as, bs;
  Problem(std::int64_t m, std::int64_t n, std::int64_t k, Fp8Flavour f = Fp8Flavour::e4m3fn,
          Distribution d = Distribution::normal, std::uint64_t seed = 7)
      : p{m, n, k, f}, a(m * k), b(n * k), as(m), bs(n) {
    fill_fp8_operand(a.data(), m, k, d, f, seed, 0);
    fill_fp8_operand(b.data(), n, k, d == Distribution::nan ? Distribution::normal : d, f, seed, 2);
    fill_fp8_scales(as.data(), m, seed, 1);
    fill_fp8_scales(bs.data(), n, seed, 3);
    if (d == Distribution::nan) a[(m / 2) * k + k / 3] = fp8_nan_code(f);
  }
  std::vector<std::uint16_t> run(void (*emu)(const Fp8GemmParams&, const Fp8GemmBuffers&,
                                             const std::vector<std::int64_t>&),
                                 const std::vector<std::int64_t>& rows = {}) const {
    std::vector<std::uint16_t> c(p.rows * p.cols, 0xFFFF);
    emu(p, {a.data(), as.data(), b.data(), bs.data(), c.data()}, rows);
    return c;
  }
  Fp64Check fp64(const std::vector<std::uint16_t>& c, double beta, const std::vector<std::int64_t>& rows = {}) const {
    Fp8GemmRefProblem r{p.rows, p.cols, p.depth, p.flavour, a.data(), b.data(), p.depth, as.data(), 1, 0, bs.data(), 1, 1};
    return fp8_gemm_check_fp64(r, c.data(), rows, beta, "test").front();
  }
};

void expect_within(const Fp64Check& c, const std::string& what) {
  EXPECT_EQ(c.stats.nan, 0) << what;
  EXPECT_EQ(c.stats.inf, 0) << what;
  EXPECT_LE(c.stats.abs_max, c.bound.limit) << what << ": " << c.bound.reason;
}

// The order as README words it, written again as plainly as possible: term k goes to partial
// (k / 16) % 16, partials added in increasing k, then the halving tree.
std::vector<std::uint16_t> written_order(const Problem& q) {
  std::vector<std::uint16_t> c(q.p.rows * q.p.cols);
  auto dec = [&](std::uint8_t v) {
    return q.p.flavour == Fp8Flavour::e4m3fn ? fp8_e4m3fn_to_float(v) : fp8_e4m3fnuz_to_float(v);
  };
  for (std::int64_t m = 0; m < q.p.rows; ++m)
    for (std::int64_t n = 0; n < q.p.cols; ++n) {
      float part[16] = {};
      for (std::int64_t k = 0; k < q.p.depth; ++k) {
        const float prod = dec(q.a[m * q.p.depth + k]) * dec(q.b[n * q.p.depth + k]);
        part[(k / 16) % 16] += prod;
      }
      for (int h = 8; h > 0; h /= 2)
        for (int j = 0; j < h; ++j) part[j] += part[j + h];
      const float y = part[0] * q.bs[n];
      c[m * q.p.cols + n] = bf16_from_float(y * q.as[m]);
    }
  return c;
}

TEST(Fp8Gemm, CanonicalEmulationIsTheWrittenOrder) {
  for (std::int64_t k : {16, 128, 272, 6144}) {
    const Problem q(5, 33, k, Fp8Flavour::e4m3fn, Distribution::normal, static_cast<std::uint64_t>(k));
    EXPECT_EQ(q.run(fp8_gemm_canonical_emu), written_order(q)) << "K=" << k;
  }
}

TEST(Fp8Gemm, EmulationsWithinTheirFp64BudgetsOnOddShapesFlavoursAndDistributions) {
  for (std::int64_t m : {1, 5, 17}) {
    for (std::int64_t k : {128, 384, 6144}) {
      if (m > 5 && k > 384) continue;  // keep the test fast: K = 6144 on the small M only
      for (auto f : {Fp8Flavour::e4m3fn, Fp8Flavour::e4m3fnuz}) {
        for (auto d : {Distribution::normal, Distribution::outliers, Distribution::edge}) {
          const Problem q(m, 136, k, f, d, static_cast<std::uint64_t>(m * 31 + k));
          const std::string what = "M=" + std::to_string(m) + " K=" + std::to_string(k) + " " + distribution_name(d);
          expect_within(q.fp64(q.run(fp8_gemm_canonical_emu), canonical_beta(k)), "canonical " + what);
          expect_within(q.fp64(q.run(fp8_gemm_blocked_emu), blocked_beta(k)), "blocked " + what);
        }
      }
    }
  }
}

TEST(Fp8Gemm, CanonicalBudgetIsTightEnoughToCatchAOneUlpSlip) {
  // The budget must not be so wide that a wrong answer passes: move one output by a few bf16 ulps
  // of a large value and the check must fail.
  const Problem q(3, 64, 384);
  std::vector<std::uint16_t> c = q.run(fp8_gemm_canonical_emu);
  c[70] = static_cast<std::uint16_t>(c[70] + 4);
  EXPECT_GT(q.fp64(c, canonical_beta(384)).stats.abs_max, 1.0);
}

TEST(Fp8Gemm, SaturatedRowTimesSaturatedChannelIsExact) {
  const Problem q(4, 8, 256, Fp8Flavour::e4m3fn, Distribution::edge);
  const std::vector<std::uint16_t> c = q.run(fp8_gemm_canonical_emu);
  // Row 0 and channel 0 are all +448: acc = 256 * 448^2 exactly.
  const float acc = 256.0f * 448.0f * 448.0f;
  EXPECT_EQ(c[0], fp8_gemm_epilogue(acc, q.bs[0], q.as[0]));
  // Row 1 is all zero.
  for (std::int64_t n = 0; n < 8; ++n) EXPECT_EQ(c[8 + n], 0x0000);
}

TEST(Fp8Gemm, NanInputIsReportedNeverPasses) {
  const Problem q(5, 32, 128, Fp8Flavour::e4m3fn, Distribution::nan);
  const Fp64Check c = q.fp64(q.run(fp8_gemm_canonical_emu), canonical_beta(128));
  EXPECT_GT(c.stats.nan, 0);
}

TEST(Fp8Gemm, SubsetEmulationWritesOnlyItsRowsAndMatchesTheFullRun) {
  const Problem q(9, 40, 256);
  const std::vector<std::uint16_t> full = q.run(fp8_gemm_canonical_emu);
  const std::vector<std::int64_t> rows{2, 7};
  const std::vector<std::uint16_t> part = q.run(fp8_gemm_canonical_emu, rows);
  for (std::int64_t m = 0; m < 9; ++m)
    for (std::int64_t n = 0; n < 40; ++n) {
      const bool in = m == 2 || m == 7;
      EXPECT_EQ(part[m * 40 + n], in ? full[m * 40 + n] : 0xFFFF);
    }
  expect_within(q.fp64(part, canonical_beta(256), rows), "subset");
}

// The tile-width knob (fp8_gemm_tile_width.hpp), shared by the general and block-scale GEMMs, and
// the general GEMM's choice: 192 where N % 192 == 0 and asked for, or by default from 4096 rows.
TEST(Fp8GemmTileWidth, TheKnobParsesItsTwoWidthsAndRejectsTheRest) {
  const char* var = "FUSEBENCH_TILE_WIDTH_TEST";
  unsetenv(var);
  EXPECT_EQ(tile_width_asked(var), TileWidthAsk::by_default);
  setenv(var, "", 1);
  EXPECT_EQ(tile_width_asked(var), TileWidthAsk::by_default);
  setenv(var, "128", 1);
  EXPECT_EQ(tile_width_asked(var), TileWidthAsk::narrow);
  setenv(var, "192", 1);
  EXPECT_EQ(tile_width_asked(var), TileWidthAsk::wide);
  for (const char* bad : {"256", "64", "192 ", "wide"}) {
    setenv(var, bad, 1);
    try {
      tile_width_asked(var);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(var), std::string::npos) << e.what();
    }
  }
  unsetenv(var);
}

TEST(Fp8GemmTileWidth, TheGeneralGemmTakesTheWideTileWhereNIsAMultipleOf192AndAskedOrFrom4096Rows) {
  for (const std::int64_t n : {1, 128, 136, 192, 384, 576, 1536, 2201, 6144})
    for (const std::int64_t m : {1, 1024, 4095, 4096, 32768}) {
      const int wide_where_allowed = n % 192 == 0 ? 192 : 128;
      EXPECT_EQ(fp8_gemm_wgmma_tile_cols(m, n, TileWidthAsk::by_default), m >= 4096 ? wide_where_allowed : 128)
          << m << " x " << n;
      EXPECT_EQ(fp8_gemm_wgmma_tile_cols(m, n, TileWidthAsk::narrow), 128) << m << " x " << n;
      EXPECT_EQ(fp8_gemm_wgmma_tile_cols(m, n, TileWidthAsk::wide), wide_where_allowed) << m << " x " << n;
    }
}

// ---- GPU: the launchers against the emulations (only a GPU build has the launchers).
#if FUSEBENCH_HAS_GPU

struct DeviceProblem {
  std::vector<void*> ptrs;
  Fp8GemmBuffers b;
  explicit DeviceProblem(const Problem& q) {
    auto up = [&](const void* src, std::size_t bytes) {
      void* d = gpu::allocate(bytes);
      gpu::copy_to_device(d, src, bytes);
      ptrs.push_back(d);
      return d;
    };
    b.a = static_cast<const std::uint8_t*>(up(q.a.data(), q.a.size()));
    b.a_scale = static_cast<const float*>(up(q.as.data(), q.as.size() * 4));
    b.b = static_cast<const std::uint8_t*>(up(q.b.data(), q.b.size()));
    b.b_scale = static_cast<const float*>(up(q.bs.data(), q.bs.size() * 4));
    void* c = gpu::allocate(q.p.rows * q.p.cols * 2);
    ptrs.push_back(c);
    b.c = static_cast<std::uint16_t*>(c);
  }
  ~DeviceProblem() {
    for (void* p : ptrs) gpu::release(p);
  }
  std::vector<std::uint16_t> run(const Problem& q, void (*launch)(const Fp8GemmParams&, const Fp8GemmBuffers&, void*),
                                 std::uint8_t poison) {
    gpu::fill_bytes(b.c, poison, q.p.rows * q.p.cols * 2, nullptr);
    launch(q.p, b, nullptr);
    gpu::synchronize(nullptr);
    std::vector<std::uint16_t> c(q.p.rows * q.p.cols);
    gpu::copy_to_host(c.data(), b.c, c.size() * 2);
    return c;
  }
};

TEST(Fp8GemmGpu, PlainAndSmallMEqualTheCanonicalEmulationBitwise) {
  FB_SKIP_WITHOUT_GPU();
  for (auto f : {Fp8Flavour::e4m3fn, Fp8Flavour::e4m3fnuz})
    for (std::int64_t m : {1, 3, 8, 16})
      for (std::int64_t n : {136, 1536})
        for (std::int64_t k : {128, 6144}) {
          const Problem q(m, n, k, f, Distribution::edge, static_cast<std::uint64_t>(m + n + k));
          DeviceProblem d(q);
          const std::vector<std::uint16_t> want = q.run(fp8_gemm_canonical_emu);
          EXPECT_EQ(d.run(q, fp8_gemm_plain_launch, 0xFF), want) << "plain M=" << m << " N=" << n << " K=" << k;
          EXPECT_EQ(d.run(q, fp8_gemm_small_m_launch, 0xFF), want) << "small_m M=" << m << " N=" << n << " K=" << k;
        }
  const Problem big(100, 200, 384);
  DeviceProblem d(big);
  EXPECT_EQ(d.run(big, fp8_gemm_plain_launch, 0xFF), big.run(fp8_gemm_canonical_emu));
}

// The small-M kernel's mapping at the edges of its structure: every row tile (1, 2, 3, 4, 8, 16 and
// the padded 5, 12), K of one chunk, K past one 24-chunk span with a partial second span (6400,
// 12544), N not a multiple of its 8 columns per block; each run under two poisons (every output
// written, the same bytes).
TEST(Fp8GemmGpu, SmallMEqualsTheEmulationAtEveryRowTileAndSpan) {
  FB_SKIP_WITHOUT_GPU();
  struct Shape {
    std::int64_t m, n, k;
  };
  for (const Shape s : {Shape{1, 9, 16}, Shape{2, 136, 6400}, Shape{3, 1536, 6144}, Shape{4, 137, 12544},
                        Shape{5, 200, 6144}, Shape{12, 64, 6400}, Shape{16, 137, 12544}, Shape{8, 1536, 256}}) {
    for (auto f : {Fp8Flavour::e4m3fn, Fp8Flavour::e4m3fnuz}) {
      const Problem q(s.m, s.n, s.k, f, Distribution::normal, static_cast<std::uint64_t>(s.m * 7 + s.k));
      DeviceProblem d(q);
      const std::vector<std::uint16_t> want = q.run(fp8_gemm_canonical_emu);
      const std::string what = "M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k);
      EXPECT_EQ(d.run(q, fp8_gemm_small_m_launch, 0xFF), want) << what;
      EXPECT_EQ(d.run(q, fp8_gemm_small_m_launch, 0x00), want) << "second poison " << what;
    }
  }
}

// A matrix-unit variant's claims at one problem: every output within the matrix-unit fp64 budget,
// the blocked emulation within the pair bound (relative L2), and the same bytes on a second run
// under another poison.
void expect_matrix_unit_claims(const Problem& q, DeviceProblem& d,
                               void (*launch)(const Fp8GemmParams&, const Fp8GemmBuffers&, void*), const char* name) {
  const std::int64_t k = q.p.depth;
  const std::string what = std::string(name) + " M=" + std::to_string(q.p.rows) + " N=" + std::to_string(q.p.cols) +
                           " K=" + std::to_string(k);
  const std::vector<std::uint16_t> got = d.run(q, launch, 0xFF);
  expect_within(q.fp64(got, blocked_beta(k)), what + " vs fp64");
  const std::vector<std::uint16_t> emu = q.run(fp8_gemm_blocked_emu);
  double num = 0, den = 0;
  for (std::size_t i = 0; i < emu.size(); ++i) {
    const double x = bf16_to_float(got[i]), y = bf16_to_float(emu[i]);
    num += (x - y) * (x - y);
    den += y * y;
  }
  const double beta = blocked_beta(k);
  EXPECT_LE(den > 0 ? std::sqrt(num / den) : std::sqrt(num), pair_rel_l2(beta, beta, k)) << what;
  EXPECT_EQ(d.run(q, launch, 0x5A), got) << "repeat " << what;
}

// The wgmma kernel at odd shapes: partial row and column tiles (the epilogue's edge path), odd N
// (its 2-byte stores), whole tiles (the interior path), and more tiles than SMs (a CTA's second
// tile reads the other scale buffer) on both paths: 1000 x 2201 is 8 x 18 tiles.
TEST(Fp8GemmGpu, WgmmaWithinItsBoundsOfTheBlockedEmulationAtOddShapesAndRepeatsBitwise) {
  FB_SKIP_WITHOUT_GPU();
  if (const std::string why = fp8_gemm_wgmma_unavailable({64, 128, 128, Fp8Flavour::e4m3fn}); !why.empty())
    GTEST_SKIP() << why;
  struct Shape {
    std::int64_t m, n, k;
  };
  for (const Shape s : {Shape{1, 128, 128}, Shape{5, 136, 256}, Shape{17, 1536, 6144}, Shape{100, 256, 384},
                        Shape{200, 768, 6144}, Shape{64, 128, 128}, Shape{129, 384, 1024}, Shape{257, 250, 768},
                        Shape{131, 137, 256}, Shape{1000, 2201, 128}}) {
    for (auto dist : {Distribution::normal, Distribution::edge}) {
      const Problem q(s.m, s.n, s.k, Fp8Flavour::e4m3fn, dist, static_cast<std::uint64_t>(s.m * 3 + s.k));
      DeviceProblem d(q);
      expect_matrix_unit_claims(q, d, fp8_gemm_wgmma_launch, "wgmma");
    }
  }
}

// The wgmma GEMM's C under `poison` with the knob `variable` set to `value` for the launch (unset after).
std::vector<std::uint16_t> run_wgmma_with(const char* variable, const char* value, DeviceProblem& d, const Problem& q,
                                          std::uint8_t poison) {
  setenv(variable, value, 1);
  std::vector<std::uint16_t> c = d.run(q, fp8_gemm_wgmma_launch, poison);
  unsetenv(variable);
  return c;
}

// The wide tile (192 columns, FUSEBENCH_GEMM_TILE_N=192) forms every element from the same 128-K
// block partials, added in the same order, with the same epilogue as the 128-wide tile, so C must be
// the same bits. Shapes: N a multiple of 192 (where it applies), partial row tiles, K of one block,
// and 144 tiles on at most 132 SMs (a CTA's second tile reads the other scale buffer).
TEST(Fp8GemmGpu, WgmmaWideTileEqualsTheNarrowTileBitwise) {
  FB_SKIP_WITHOUT_GPU();
  if (const std::string why = fp8_gemm_wgmma_unavailable({64, 192, 128, Fp8Flavour::e4m3fn}); !why.empty())
    GTEST_SKIP() << why;
  struct Shape {
    std::int64_t m, n, k;
  };
  const auto with_tile = [](const char* cols, DeviceProblem& d, const Problem& q, std::uint8_t poison) {
    return run_wgmma_with(kGemmTileWidthVariable, cols, d, q, poison);
  };
  for (const Shape s : {Shape{1, 192, 128}, Shape{129, 384, 1024}, Shape{200, 1536, 6144}, Shape{257, 576, 768},
                        Shape{1100, 3072, 128}}) {
    const Problem q(s.m, s.n, s.k, Fp8Flavour::e4m3fn, Distribution::normal, static_cast<std::uint64_t>(s.m * 5 + s.k));
    DeviceProblem d(q);
    const std::string what = "M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k);
    const std::vector<std::uint16_t> narrow = with_tile("128", d, q, 0xFF);
    const std::vector<std::uint16_t> wide = with_tile("192", d, q, 0x5A);
    ASSERT_EQ(wide.size(), narrow.size()) << what;
    EXPECT_EQ(std::memcmp(wide.data(), narrow.data(), narrow.size() * 2), 0) << what;
    expect_within(q.fp64(wide, blocked_beta(s.k)), what + " wide vs fp64");
    EXPECT_EQ(with_tile("192", d, q, 0xFF), wide) << "repeat " << what;
  }
}

// The staged epilogue (shared memory, then the TMA) writes the register epilogue's bytes: both
// widths, partial row tiles (the TMA clips them), N not a multiple of the tile (clipped columns),
// more tiles than SMs (an area reused after its previous copy), and a whole idle warpgroup (M = 1).
// Every element is written: the two runs start from different poisons.
TEST(Fp8GemmGpu, WgmmaStagedEpilogueEqualsTheRegisterEpilogueBitwise) {
  FB_SKIP_WITHOUT_GPU();
  if (const std::string why = fp8_gemm_wgmma_unavailable({64, 192, 128, Fp8Flavour::e4m3fn}); !why.empty())
    GTEST_SKIP() << why;
  struct Shape {
    std::int64_t m, n, k;
  };
  const auto with = [](const char* epilogue, DeviceProblem& d, const Problem& q, std::uint8_t poison) {
    return run_wgmma_with(kWgmmaEpilogueVariable, epilogue, d, q, poison);
  };
  for (const char* width : {"128", "192"}) {
    setenv(kGemmTileWidthVariable, width, 1);
    for (const Shape s : {Shape{1, 192, 128}, Shape{100, 200, 256}, Shape{129, 384, 1024}, Shape{257, 1536, 768},
                          Shape{1100, 3072, 128}, Shape{4100, 1536, 256}}) {
      const Problem q(s.m, s.n, s.k, Fp8Flavour::e4m3fn, Distribution::edge, static_cast<std::uint64_t>(s.m * 7 + s.n));
      DeviceProblem d(q);
      const std::string what = std::string("width ") + width + " M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) +
                               " K=" + std::to_string(s.k);
      const std::vector<std::uint16_t> registers = with("registers", d, q, 0xFF);
      const std::vector<std::uint16_t> staged = with("staged", d, q, 0x5A);
      ASSERT_EQ(staged.size(), registers.size()) << what;
      EXPECT_EQ(std::memcmp(staged.data(), registers.data(), registers.size() * 2), 0) << what;
      expect_within(q.fp64(staged, blocked_beta(s.k)), what + " staged vs fp64");
      EXPECT_EQ(with("staged", d, q, 0xFF), staged) << "repeat " << what;
    }
    unsetenv(kGemmTileWidthVariable);
  }
}

// The mma kernel (F8 on the matrix units, the general GEMM up to 256 rows): the wgmma variant's
// claims (fp64 within the matrix-unit budget, the blocked emulation within the pair bound, the same
// bytes on a second run under another poison) at every token-tile count (1..8 rows: one tile;
// 9..16: two), several row chunks with a partial last one (17, 40, 200 rows), N not a multiple of
// its 16 columns, K of one 128-K block and K with a second round of blocks (48 blocks per round at
// one tile, 24 at two).
TEST(Fp8GemmGpu, MmaWithinItsBoundsOfTheBlockedEmulationAndRepeatsBitwise) {
  FB_SKIP_WITHOUT_GPU();
  if (const std::string why = fp8_gemm_mma_unavailable({1, 128, 128, Fp8Flavour::e4m3fn}); !why.empty())
    GTEST_SKIP() << why;
  struct Shape {
    std::int64_t m, n, k;
  };
  for (const Shape s : {Shape{1, 16, 128}, Shape{3, 1536, 6144}, Shape{8, 137, 6272}, Shape{9, 136, 3200},
                        Shape{16, 1536, 6144}, Shape{5, 40, 12288}, Shape{17, 200, 768}, Shape{40, 1536, 6144},
                        Shape{200, 6144, 768}}) {
    for (auto dist : {Distribution::normal, Distribution::edge}) {
      const Problem q(s.m, s.n, s.k, Fp8Flavour::e4m3fn, dist, static_cast<std::uint64_t>(s.m * 5 + s.k));
      DeviceProblem d(q);
      expect_matrix_unit_claims(q, d, fp8_gemm_mma_launch, "mma");
    }
  }
  // e4m3fnuz and K % 128 != 0 are refused with a reason, never run.
  EXPECT_FALSE(fp8_gemm_mma_unavailable({1, 128, 128, Fp8Flavour::e4m3fnuz}).empty());
  EXPECT_FALSE(fp8_gemm_mma_unavailable({1, 128, 96, Fp8Flavour::e4m3fn}).empty());
}

// The general GEMM as the layer calls it: the mma kernel at small M, wgmma past it
// (fp8_gemm_general_takes_mma); both hold the blocked emulation's claims on either side of the switch.
TEST(Fp8GemmGpu, GeneralLaunchHoldsTheMatrixUnitClaimsOnBothSidesOfItsSwitch) {
  FB_SKIP_WITHOUT_GPU();
  if (!fp8_gemm_mma_unavailable({1, 128, 128, Fp8Flavour::e4m3fn}).empty() ||
      !fp8_gemm_wgmma_unavailable({64, 128, 128, Fp8Flavour::e4m3fn}).empty())
    GTEST_SKIP() << "needs both matrix-unit kernels (sm_90a)";
  for (const std::int64_t m : {std::int64_t{3}, std::int64_t{64}, std::int64_t{65}, kFp8GemmMmaMaxRows + 1}) {
    const Problem q(m, 768, 1024, Fp8Flavour::e4m3fn, Distribution::normal, static_cast<std::uint64_t>(m + 11));
    DeviceProblem d(q);
    expect_matrix_unit_claims(q, d, fp8_gemm_general_launch, "general");
  }
}

TEST(Fp8GemmGpu, VendorWithinTheMatrixUnitBudgetWhereItRuns) {
  FB_SKIP_WITHOUT_GPU();
  for (std::int64_t m : {1, 3, 16, 100, 192}) {
    const Problem q(m, 1536, 6144, Fp8Flavour::e4m3fn, Distribution::normal, static_cast<std::uint64_t>(m));
    if (const std::string why = fp8_gemm_vendor_unavailable(q.p); !why.empty()) {
      std::printf("vendor skipped at M=%lld: %s\n", static_cast<long long>(m), why.c_str());
      continue;
    }
    DeviceProblem d(q);
    expect_within(q.fp64(d.run(q, fp8_gemm_vendor_launch, 0xFF), blocked_beta(6144)), "vendor M=" + std::to_string(m));
  }
}
#endif  // FUSEBENCH_HAS_GPU

// ---- CPU: the layouts, the knobs and the kernel choice (host code; the GPU runs them above).

// The wgmma tiles' layout is the 128-byte swizzle (chunk c of row r in slot c ^ (r % 8)), and it is
// exactly where the TMA's 128-byte swizzle writes a box of 128-byte rows: every byte of a 64- and
// a 128-row tile lands at wgmma_tile_offset, each slot once.
TEST(Fp8Gemm, TmaSwizzleWritesTheLayoutTheWgmmaDescriptorReads) {
  EXPECT_EQ(wgmma_tile_offset(0, 0), 0);
  EXPECT_EQ(wgmma_tile_offset(3, 16 * 5 + 7), 3 * 128 + (5 ^ 3) * 16 + 7);
  EXPECT_EQ(wgmma_tile_offset(9, 16), 9 * 128 + (1 ^ 1) * 16);
  EXPECT_EQ(tma_swizzle_128b(128 * 3 + 16 * 5 + 7), 3 * 128 + (5 ^ 3) * 16 + 7);
  for (const int rows : {64, 128}) {
    std::vector<int> hits(static_cast<std::size_t>(rows) * 128, 0);
    for (int r = 0; r < rows; ++r)
      for (int k = 0; k < 128; ++k) {
        const int at = tma_swizzle_128b(128 * r + k);
        ASSERT_EQ(at, wgmma_tile_offset(r, k)) << "row " << r << " k " << k;
        ASSERT_EQ(at / 128, r) << "the swizzle keeps a row in its 128-byte line";
        ++hits[static_cast<std::size_t>(at)];
      }
    for (const int h : hits) EXPECT_EQ(h, 1);
  }
}

// The staged epilogue's layout (fp8_gemm_wgmma_store.hpp): every element of a warpgroup's 64 x 128
// and 64 x 192 tile lands in its box at the TMA's 128-byte swizzle of (row, column), each byte of
// the area once; the offset a thread computes for its register pair is that element's; and the 32
// lanes of a warp's store of one pair write 32 different banks (no shared-memory conflict).
TEST(Fp8Gemm, StagedEpilogueLayoutIsTheTmaBoxesAndFreeOfBankConflicts) {
  EXPECT_EQ(wgmma_store_offset(0, 0), 0);
  EXPECT_EQ(wgmma_store_offset(3, 64 + 8 * 5 + 1), kWgmmaStoreBoxBytes + 3 * 128 + (5 ^ 3) * 16 + 2);
  for (const int cols : {128, 192}) {
    std::vector<int> hits(static_cast<std::size_t>(kWgmmaTileM) * cols * 2, 0);
    for (int r = 0; r < kWgmmaTileM; ++r)
      for (int c = 0; c < cols; ++c) {
        const int at = wgmma_store_offset(r, c);
        ASSERT_EQ(at, (c / 64) * kWgmmaStoreBoxBytes + tma_swizzle_128b(128 * r + 2 * (c % 64))) << r << " " << c;
        ASSERT_LT(at + 1, static_cast<int>(hits.size()));
        ++hits[static_cast<std::size_t>(at)];
        ++hits[static_cast<std::size_t>(at) + 1];
      }
    for (const int h : hits) ASSERT_EQ(h, 1) << cols;
    for (int warp = 0; warp < 4; ++warp)
      for (int j = 0; j < cols / 2; j += 2) {
        std::vector<int> bank_hits(32, 0);
        for (int lane = 0; lane < 32; ++lane) {
          const int row = 16 * warp + lane / 4 + 8 * ((j / 2) % 2), col = 8 * (j / 4) + 2 * (lane % 4);
          const int at = wgmma_store_pair_offset(warp, lane, j);
          ASSERT_EQ(at, wgmma_store_offset(row, col)) << "warp " << warp << " lane " << lane << " j " << j;
          ++bank_hits[static_cast<std::size_t>((at / 4) % 32)];
        }
        for (const int h : bank_hits) ASSERT_EQ(h, 1) << "warp " << warp << " j " << j;
      }
  }
}

// The epilogue knob: staged by default where cols % 8 == 0, "registers" turns it off, anything else
// is an InputError naming the variable.
TEST(Fp8Gemm, EpilogueKnobParsesItsTwoFormsAndRejectsTheRest) {
  EXPECT_TRUE(wgmma_epilogue_staged(1536, nullptr));
  EXPECT_TRUE(wgmma_epilogue_staged(1536, ""));
  EXPECT_TRUE(wgmma_epilogue_staged(1536, "staged"));
  EXPECT_FALSE(wgmma_epilogue_staged(1536, "registers"));
  EXPECT_FALSE(wgmma_epilogue_staged(137, nullptr));
  EXPECT_FALSE(wgmma_epilogue_staged(250, "staged"));
  for (const char* bad : {"tma", "Staged", "registers "}) {
    try {
      wgmma_epilogue_staged(1536, bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(kWgmmaEpilogueVariable), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(wgmma_epilogue_text(true), "staged epilogue");
  EXPECT_EQ(wgmma_epilogue_text(false), "register epilogue");
}

// The general GEMM's kernel choice at the layer's shapes, as run 51 measured them on the H200
// (132 SMs, the TMA-fed wgmma CTA; us, mma / wgmma): 1536 x 6144 at M = 3 6.0 / 23.8, 24 10.2 / 23.7,
// 96 23.7 / 28.1, 192 39.4 / 29.0, 1024 184 / 30.7; 6144 x 768 at M = 3 7.8 / 9.1, 24 9.0 / 9.0,
// 96 23.5 / 11.3, 192 42.9 / 12.2.
TEST(Fp8Gemm, GeneralTakesTheMmaKernelWhereRun51MeasuredItFaster) {
  for (const std::int64_t m : {1, 3, 16, 24, 96}) EXPECT_TRUE(fp8_gemm_general_takes_mma(m, 1536, 132)) << m;
  for (const std::int64_t m : {192, 1024}) EXPECT_FALSE(fp8_gemm_general_takes_mma(m, 1536, 132)) << m;
  for (const std::int64_t m : {1, 3, 24, 48}) EXPECT_TRUE(fp8_gemm_general_takes_mma(m, 6144, 132)) << m;
  for (const std::int64_t m : {96, 192, 1024, 32768}) EXPECT_FALSE(fp8_gemm_general_takes_mma(m, 6144, 132)) << m;
}

}  // namespace
}  // namespace fb
