// register_fp8_gemm(): the per-token x per-channel fp8 GEMM cases.
//
//   fp8_gemm/ptpc      the general GEMM, any M       variants plain (CUDA cores, canonical order),
//                                                     wgmma (matrix units, sm_90a), vendor, mma
//                                                     (mma.sync e4m3, the general GEMM up to 256 rows)
//   fp8_gemm/small_m   F8: 1..16 rows, the shared     variants small_m (weight streaming, canonical
//                      expert's gate_up 1536 x 6144   order), general (the plain GEMM), wgmma, vendor, mma
// Claims: plain, small_m, general against the CPU emulation bitwise (one written IEEE order);
// wgmma and mma against their blocked emulation and against plain within a derived relative-L2 bound;
// small_m = general bitwise (hence within 1 bf16 ulp, the contract); every variant within the fp64 budget of fp8_gemm_ref.hpp.
#include <fmt/format.h>

#include "core/case_helpers.hpp"
#include "core/registry.hpp"
#include "kernels/fp8_gemm/fp8_gemm.hpp"
#include "kernels/fp8_gemm/fp8_gemm_bounds.hpp"
#include "kernels/fp8_gemm/fp8_gemm_cpu_limit.hpp"
#include "kernels/fp8_gemm/fp8_gemm_inputs.hpp"
#include "kernels/fp8_gemm/fp8_gemm_math.hpp"
#include "kernels/fp8_gemm/fp8_gemm_small_m_tile.hpp"
#include "kernels/fp8_gemm/fp8_gemm_tile_width.hpp"
#include "kernels/fp8_gemm/fp8_gemm_vendor.hpp"
#include "kernels/fp8_gemm/fp8_gemm_wgmma_epilogue.hpp"
#include "reference/fp8_gemm_ref.hpp"

namespace fb {
namespace {

enum class GemmKind { ptpc, small_m };

// The static claims of the wgmma variant are derived at this K; both grow with K, so they hold for
// every K up to it, and the variant is skipped beyond.
constexpr std::int64_t kBoundDepth = 8192;
enum class Order { canonical, blocked };

// Past this many rows the mma variant is not run: far past the general GEMM's switch to wgmma
// (kFp8GemmMmaMaxRows), where it would only cost bench time.
constexpr std::int64_t kMmaBenchRows = 4096;

// How each variant computes: its order (for emulation and bound) and its launcher.
struct VariantPlan {
  Order order = Order::canonical;
  void (*gpu)(const Fp8GemmParams&, const Fp8GemmBuffers&, void*) = nullptr;
  bool matrix_unit = false;
  bool vendor = false;  // no emulation: checked against fp64 and the other variants
  bool mma = false;  // the mma.sync e4m3 kernel: its own availability
  bool small_m = false;  // F8's weight-streaming kernel: its row tile is a launch choice
};

void canonical_emu_all(const Fp8GemmParams& p, const Fp8GemmBuffers& b) { fp8_gemm_canonical_emu(p, b); }
void blocked_emu_all(const Fp8GemmParams& p, const Fp8GemmBuffers& b) { fp8_gemm_blocked_emu(p, b); }

std::vector<VariantPlan> plans(GemmKind kind) {
  const VariantPlan plain{Order::canonical, FB_GPU_LAUNCHER(fp8_gemm_plain_launch), false};
  const VariantPlan wgmma{Order::blocked, FB_GPU_LAUNCHER(fp8_gemm_wgmma_launch), true};
  const VariantPlan vendor{Order::blocked, FB_GPU_LAUNCHER(fp8_gemm_vendor_launch), false, true};
  const VariantPlan mma{Order::blocked, FB_GPU_LAUNCHER(fp8_gemm_mma_launch), false, false, true};
  if (kind == GemmKind::ptpc) return {plain, wgmma, vendor, mma};
  return {{Order::canonical, FB_GPU_LAUNCHER(fp8_gemm_small_m_launch), false, false, false, true}, plain, wgmma, vendor, mma};
}

std::string kind_name(GemmKind kind) { return kind == GemmKind::ptpc ? "fp8_gemm/ptpc" : "fp8_gemm/small_m"; }

class Fp8GemmInstance final : public CaseInstance {
 public:
  Fp8GemmInstance(GemmKind kind, const Fp8GemmParams& p, Distribution d) : kind_(kind), p_(p), dist_(d), plans_(plans(kind)) {}

  std::vector<TensorSpec> inputs() const override {
    const DType q = fp8_dtype(p_.flavour);
    TensorSpec b{"b", q, {{"N", p_.cols}, {"K", p_.depth}}}, bs{"b_scale", DType::f32, {{"N", p_.cols}}};
    b.weight = bs.weight = true;
    return {{"a", q, {{"M", p_.rows}, {"K", p_.depth}}}, {"a_scale", DType::f32, {{"M", p_.rows}}}, b, bs};
  }
  std::vector<TensorSpec> outputs() const override { return {{"c", DType::bf16, {{"M", p_.rows}, {"N", p_.cols}}}}; }

  void generate(std::uint64_t seed, HostTensors& in) const override {
    fill_fp8_operand(in[0].data<std::uint8_t>(), p_.rows, p_.depth, dist_, p_.flavour, seed, 0);
    fill_fp8_scales(in[1].data<float>(), p_.rows, seed, 1);
    if (dist_ == Distribution::nan) in[0].data<std::uint8_t>()[(p_.rows / 2) * p_.depth + p_.depth / 3] = fp8_nan_code(p_.flavour);
  }
  void prepare_weights(std::uint64_t seed, HostTensors& in) const override {
    // Weights draw from the same distribution (edge rows become edge output channels).
    fill_fp8_operand(in[2].data<std::uint8_t>(), p_.cols, p_.depth, dist_ == Distribution::nan ? Distribution::normal : dist_,
                     p_.flavour, seed, 2);
    fill_fp8_scales(in[3].data<float>(), p_.cols, seed, 3);
  }
  std::string distribution_text() const override {
    return dist_ == Distribution::edge ? std::string(kFp8GemmEdgeText) : fb::distribution_text(dist_);
  }

  void run(VariantId v, const ExecContext& ctx, const TensorPointers& in, const TensorPointers& out,
           const TensorPointers&) const override {
    const Fp8GemmBuffers b = buffers(in, out);
    const VariantPlan& plan = plans_.at(v);
    const VariantImpl<Fp8GemmParams, Fp8GemmBuffers> impl{
        plan.order == Order::canonical ? &canonical_emu_all : &blocked_emu_all, plan.gpu};
    run_variant<Fp8GemmParams, Fp8GemmBuffers>(0, ctx, p_, b, {impl});
  }

  std::vector<Fp64Check> check_fp64(const HostTensors& in, const HostTensors& out, const CheckSubset& subset) const override {
    // Which variant wrote `out` is not passed: every variant is held to the wider (matrix-unit)
    // budget when the point has one, the canonical budget otherwise. The canonical variants also
    // equal their emulation bitwise, which is checked within the canonical budget by the tests.
    return check_with(in, out, subset, blocked_beta(p_.depth), blocked_beta_reason(p_.depth));
  }

  Work work(VariantId) const override {
    Work w;
    w.read_bytes = p_.rows * p_.depth + p_.cols * p_.depth + 4 * (p_.rows + p_.cols);
    w.write_bytes = 2 * p_.rows * p_.cols;
    w.flops = 2.0 * static_cast<double>(p_.rows) * static_cast<double>(p_.cols) * static_cast<double>(p_.depth);
    return w;
  }

  // The vendor's form is chosen per point at plan time (fp8_gemm_vendor.hpp): 1 launch with
  // outer-vector scales, 2 with the fp32-output fallback and our epilogue.
  int launches(VariantId v) const override {
#if FUSEBENCH_HAS_GPU
    if (plans_.at(v).vendor) return fp8_gemm_vendor_launches(p_);
#else
    (void)v;
#endif
    return 0;
  }

  // On the GPU, as the launchers pick them: the wgmma kernel's CTA tile and epilogue (e.g.
  // "tile 128x192, staged epilogue"), and F8's row tile (the small_m variant: its `row_tile` axis,
  // or the rule for `auto`).
  std::string launch_config(VariantId v, Backend backend) const override {
    if (backend != Backend::gpu) return {};
    if (plans_.at(v).small_m) return fp8_gemm_small_m_tile_text(p_.rows, p_.row_tile);
    if (!plans_.at(v).matrix_unit) return {};
    return wgmma_tile_text(fp8_gemm_launch_tile_cols(p_.rows, p_.cols)) + ", " +
           wgmma_epilogue_text(wgmma_launch_epilogue_staged(p_.cols));
  }

  std::string variant_skip_reason(VariantId v, Backend backend) const override {
    if (plans_.at(v).vendor) {
      if (backend == Backend::cpu) return "a vendor library runs on the GPU only (no emulation)";
      if (p_.depth > kBoundDepth) return fmt::format("the vendor claims are derived for K <= {} (K={})", kBoundDepth, p_.depth);
#if FUSEBENCH_HAS_GPU
      return fp8_gemm_vendor_unavailable(p_);
#else
      return {};
#endif
    }
    if (plans_.at(v).mma) {
      if (p_.flavour != Fp8Flavour::e4m3fn) return "mma.sync takes OCP e4m3 only (fp8=e4m3fnuz)";
      if (p_.depth % kFp8GemmBlockK != 0) return fmt::format("the fp8 MMA kernel needs K % 128 == 0 (K={})", p_.depth);
      if (p_.depth > kBoundDepth) return fmt::format("the matrix-unit claims are derived for K <= {} (K={})", kBoundDepth, p_.depth);
      if (p_.rows > kMmaBenchRows)
        return fmt::format("the mma kernel re-reads the weights once per 16 rows: not run past {} rows (M={}; the general "
                           "GEMM uses it up to {})", kMmaBenchRows, p_.rows, kFp8GemmMmaMaxRows);
#if FUSEBENCH_HAS_GPU
      if (backend == Backend::gpu) return fp8_gemm_mma_unavailable(p_);
#endif
      return {};
    }
    if (!plans_.at(v).matrix_unit) return {};
    if (p_.flavour != Fp8Flavour::e4m3fn) return "wgmma takes OCP e4m3 only (fp8=e4m3fnuz)";
    if (p_.depth % kFp8GemmBlockK != 0) return fmt::format("wgmma kernel needs K % 128 == 0 (K={})", p_.depth);
    if (p_.depth > kBoundDepth) return fmt::format("the wgmma claims are derived for K <= {} (K={})", kBoundDepth, p_.depth);
#if FUSEBENCH_HAS_GPU
    if (backend == Backend::gpu) return fp8_gemm_wgmma_unavailable(p_);
#else
    (void)backend;
#endif
    return {};
  }

  std::string skip_reason(Backend backend) const override {
    return backend == Backend::cpu ? fp8_gemm_cpu_skip_reason(p_.rows, p_.cols, p_.depth) : std::string();
  }

  std::int64_t check_units() const override { return p_.rows; }
  double check_cost() const override {
    return 2.0 * static_cast<double>(p_.rows) * static_cast<double>(p_.cols) * static_cast<double>(p_.depth);
  }
  void emulate_subset(VariantId v, const HostTensors& in, HostTensors& out, const CheckSubset& subset) const override {
    Fp8GemmBuffers b{in[0].data<std::uint8_t>(), in[1].data<float>(), in[2].data<std::uint8_t>(), in[3].data<float>(),
                     out[0].data<std::uint16_t>()};
    const std::vector<std::int64_t> rows = subset.full ? std::vector<std::int64_t>{} : subset.units;
    if (plans_.at(v).order == Order::canonical)
      fp8_gemm_canonical_emu(p_, b, rows);
    else
      fp8_gemm_blocked_emu(p_, b, rows);
  }
  std::vector<ElementRange> subset_region(std::size_t, const CheckSubset& subset) const override {
    if (subset.full) return {};
    std::vector<ElementRange> r;
    for (std::int64_t m : subset.units) r.push_back({m * p_.cols, (m + 1) * p_.cols});
    return r;
  }

  // For the tests: the fp64 check under a chosen beta.
  std::vector<Fp64Check> check_with(const HostTensors& in, const HostTensors& out, const CheckSubset& subset,
                                    double beta, const std::string& reason) const {
    Fp8GemmRefProblem r;
    r.rows = p_.rows;
    r.cols = p_.cols;
    r.depth = p_.depth;
    r.flavour = p_.flavour;
    r.a = in[0].data<std::uint8_t>();
    r.b = in[2].data<std::uint8_t>();
    r.block_k = p_.depth;
    r.a_scale = in[1].data<float>();
    r.b_scale = in[3].data<float>();
    return fp8_gemm_check_fp64(r, out[0].data<std::uint16_t>(), subset.full ? std::vector<std::int64_t>{} : subset.units,
                               beta, reason);
  }

 private:
  Fp8GemmBuffers buffers(const TensorPointers& in, const TensorPointers& out) const {
    return {in.get<const std::uint8_t>(0), in.get<const float>(1), in.get<const std::uint8_t>(2), in.get<const float>(3),
            out.get<std::uint16_t>(0)};
  }

  GemmKind kind_;
  Fp8GemmParams p_;
  Distribution dist_;
  std::vector<VariantPlan> plans_;
};

VariantSpec canonical_variant(std::string name, std::string summary) {
  VariantSpec v;
  v.name = std::move(name);
  v.summary = std::move(summary);
  v.emulation = Claim::bitwise();
  v.emulation_note = "one written IEEE fp32 order (fp8_gemm_math.hpp), exact products";
  return v;
}

VariantSpec vendor_variant() {
  VariantSpec v;
  v.name = "vendor";
  v.summary = "cuBLASLt fp8 GEMM: outer-vector fp32 scales (1 launch) where cuBLASLt has an algorithm, else its fp32 "
              "output with unit scales and our epilogue kernel (2 launches; bench's launch count says which ran)";
  v.has_emulation = false;
  v.emulation_note = "a vendor library: checked against fp64 (matrix-unit budget) and against our variants only";
  return v;
}

VariantSpec wgmma_variant(std::int64_t k_for_bound) {
  VariantSpec v;
  v.name = "wgmma";
  v.summary = "matrix units (wgmma, sm_90a), each 128-K block partial promoted into fp32 on the CUDA cores";
  const double beta = blocked_beta(k_for_bound);
  v.emulation = Claim::within({"err/rel_l2", pair_rel_l2(beta, beta, k_for_bound),
                               "both within beta T of fp64 (beta: " + blocked_beta_reason(k_for_bound) +
                                   "), ||T|| <= sqrt(K) ||C|| for independent-sign inputs, 2^-7 for two bf16 roundings"});
  v.emulation_note = "the matrix unit's fp8 accumulation is not IEEE fp32: the emulation computes each block partial "
                     "exactly and rounds it once";
  return v;
}

// The mma.sync kernel (F8 on the matrix units, and the general GEMM at small and medium M): the
// wgmma variant's structure and claim (the same emulation and bound).
VariantSpec mma_variant(std::int64_t k_for_bound) {
  VariantSpec v = wgmma_variant(k_for_bound);
  v.name = "mma";
  v.summary = "matrix units (mma.sync m16n8k32 e4m3, sm_89+): 16 output channels x 8 or 16 rows per CTA, each "
              "128-K block partial from 4 MMAs, the partials added in K order in fp32 (the wgmma variant's structure)";
  return v;
}

std::vector<AxisSpec> axes(GemmKind kind) {
  std::vector<AxisSpec> a{kind == GemmKind::small_m ? AxisSpec::integer("M", "rows (tokens), 1..16", {}, 1, 16)
                                                    : AxisSpec::integer("M", "rows (tokens)"),
                          AxisSpec::integer("N", "output channels", 1536),
                          AxisSpec::integer("K", "depth; a multiple of 16 (128 for wgmma)", 6144),
                          AxisSpec::choice("fp8", "fp8 flavour of A and B", {"e4m3fn", "e4m3fnuz"}, "e4m3fn"),
                          distribution_axis()};
  if (kind == GemmKind::small_m)
    a.push_back(AxisSpec::choice("row_tile",
                                 "small_m rows per block: auto (M itself up to 4 rows, then 8, then 16), or 1, 2, 4, 8, 16",
                                 {"auto", "1", "2", "4", "8", "16"}, "auto"));
  return a;
}

KernelCase make_case(GemmKind kind, std::int64_t k_for_bound) {
  KernelCase c;
  c.name = kind_name(kind);
  c.family = "fp8_gemm";
  c.fusion = "F8";  // the general GEMM is F8's reference variant too
  c.summary = kind == GemmKind::small_m
                  ? "small-M (1..16 rows) per-token x per-channel fp8 GEMM, weight streaming, canonical order"
                  : "per-token x per-channel fp8 GEMM, C = bf16((acc * b_scale) * a_scale)";
  c.spec = "docs/numeric-contract.md#fp8-gemms (orders and bounds: kernels/fp8_gemm/README.md)";
  if (kind == GemmKind::ptpc) {
    c.variants = {canonical_variant("plain", "CUDA cores, one thread per output, canonical order"),
                  wgmma_variant(k_for_bound), vendor_variant(), mma_variant(k_for_bound)};
    c.pairs = {{"wgmma", "plain", wgmma_variant(k_for_bound).emulation, {}},
               {"vendor", "plain", wgmma_variant(k_for_bound).emulation, {}},
               {"mma", "plain", wgmma_variant(k_for_bound).emulation, {}}};
  } else {
    c.variants = {canonical_variant("small_m", "weight streaming: 16 lanes per output channel, canonical order"),
                  canonical_variant("general", "the plain general GEMM (same canonical order)"),
                  wgmma_variant(k_for_bound), vendor_variant(), mma_variant(k_for_bound)};
    // The contract asks for small_m within 1 bf16 ulp of general; both sum in the canonical order,
    // so the claim made is the stronger one, the same bytes (the harness's value checks record no
    // ulp distance, so an ulp bound could not be checked there).
    c.pairs = {{"small_m", "general", Claim::bitwise(), {}},
               {"wgmma", "small_m", wgmma_variant(k_for_bound).emulation, {}},
               {"vendor", "small_m", wgmma_variant(k_for_bound).emulation, {}},
               {"mma", "small_m", wgmma_variant(k_for_bound).emulation, {}}};
  }
  c.axes = axes(kind);
  c.make = [kind](const Point& pt) -> std::unique_ptr<CaseInstance> {
    Fp8GemmParams p;
    p.rows = pt.integer("M");
    p.cols = pt.integer("N");
    p.depth = pt.integer("K");
    p.flavour = pt.choice("fp8") == "e4m3fnuz" ? Fp8Flavour::e4m3fnuz : Fp8Flavour::e4m3fn;
    if (kind == GemmKind::small_m && pt.choice("row_tile") != "auto") p.row_tile = std::stoll(pt.choice("row_tile"));
    if (p.depth % kFp8GemmChunk != 0) throw InputError(fmt::format("K={} is not a multiple of 16", p.depth));
    if (kind == GemmKind::small_m && p.rows > kFp8GemmSmallMMaxRows)
      throw InputError(fmt::format("M={} is more than the small-M kernel's 16 rows", p.rows));
    return std::make_unique<Fp8GemmInstance>(kind, p, distribution_of(pt));
  };
  return c;
}

}  // namespace

void register_fp8_gemm(Registry& registry) {
  registry.add(make_case(GemmKind::ptpc, kBoundDepth));
  registry.add(make_case(GemmKind::small_m, kBoundDepth));
}

}  // namespace fb
