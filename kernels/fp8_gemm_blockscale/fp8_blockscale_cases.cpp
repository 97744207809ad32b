// register_fp8_gemm_blockscale(): the block-scale fp8 GEMM with deterministic split-K, and F7.
//
//   fp8_gemm_blockscale/gemm  A 1x128, B 128x128 scales, S slices    variants plain (memset, then the
//                                                                     CUDA-core kernel), wgmma (memset,
//                                                                     then the sm_90a kernel), vendor
//                                                                     (cuBLASLt VEC128 x BLK128x128,
//                                                                     C only; S = 1 points), direct
//                                                                     (the sm_90a kernel writing C
//                                                                     without acc or memset; S > 1
//                                                                     in a cluster of S CTAs)
//   fp8_gemm_blockscale/f7    RMSNorm -> fp8 1x128 -> the GEMM        variants memset (norm, memset,
//                                                                     GEMM), prezeroed (the norm zeroes
//                                                                     acc as a side job, then GEMM)
// Claims: plain = its emulation bitwise; wgmma vs plain and vs the blocked emulation within the
// derived relative-L2 bound; wgmma vs vendor within the same bound (on C); direct = wgmma bitwise
// (on C) and vs vendor within the bound; prezeroed =
// memset bitwise (every output); every C within the fp64 budget of reference/fp8_gemm_ref.hpp.
#include "kernels/fp8_gemm_blockscale/fp8_blockscale_cases.hpp"

#include <cstring>

#include <fmt/format.h>

#include "core/case_helpers.hpp"
#include "core/registry.hpp"
#include "kernels/fp8_gemm/fp8_gemm_bounds.hpp"
#include "kernels/fp8_gemm/fp8_gemm_cpu_limit.hpp"
#include "kernels/fp8_gemm/fp8_gemm_inputs.hpp"
#include "kernels/fp8_gemm/fp8_gemm_wgmma_epilogue.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale_cluster.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale_cluster_arrivals.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale_schedule.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale_vendor.hpp"
#include "kernels/rmsnorm_fp8/rmsnorm_fp8.hpp"
#include "reference/fp8_gemm_ref.hpp"

namespace fb {
namespace {

constexpr std::int64_t kBoundDepth = 8192;  // the static claims hold for K up to this (see fp8_gemm)

Claim matrix_unit_claim() {
  const double beta = blockscale_beta(kBoundDepth, kBlockscaleMaxSlices, true);
  return Claim::within({"err/rel_l2", pair_rel_l2(beta, beta, kBoundDepth),
                        "both within beta T of fp64 (beta: " + blockscale_beta_reason(kBoundDepth, kBlockscaleMaxSlices, true) +
                            "), ||T|| <= sqrt(K) ||C|| for independent-sign inputs, 2^-7 for two bf16 roundings; K <= " +
                            std::to_string(kBoundDepth)});
}

std::string check_shape(const Fp8BlockscaleParams& p) {
  if (p.depth % kBlockscaleBlock != 0) return fmt::format("K={} is not a multiple of the 128 block", p.depth);
  if (p.cols % kBlockscaleBlock != 0) return fmt::format("N={} is not a multiple of the 128 block", p.cols);
  if (p.slices > p.k_blocks()) return fmt::format("S={} is more than the {} K blocks", p.slices, p.k_blocks());
  if (p.slices > kBlockscaleMaxSlices) return fmt::format("S={} is more than {}", p.slices, kBlockscaleMaxSlices);
  return {};
}

Fp8BlockscaleParams read_params(const Point& pt, bool with_flavour) {
  Fp8BlockscaleParams p;
  p.rows = pt.integer("M");
  p.cols = pt.integer("N");
  p.depth = pt.integer("K");
  p.slices = pt.integer("S");
  p.flavour = with_flavour && pt.choice("fp8") == "e4m3fnuz" ? Fp8Flavour::e4m3fnuz : Fp8Flavour::e4m3fn;
  if (const std::string why = check_shape(p); !why.empty()) throw InputError(why);
  return p;
}

Fp64Check check_c(const Fp8BlockscaleParams& p, const std::uint8_t* a, const float* as, const std::uint8_t* b,
                  const float* bs, const std::uint16_t* c, const CheckSubset& subset, bool matrix_unit) {
  Fp8GemmRefProblem r;
  r.rows = p.rows;
  r.cols = p.cols;
  r.depth = p.depth;
  r.flavour = p.flavour;
  r.a = a;
  r.b = b;
  r.block_k = kBlockscaleBlock;
  r.a_scale = as;
  r.a_stride_m = p.k_blocks();
  r.a_stride_kb = 1;
  r.b_scale = bs;
  r.b_group_n = kBlockscaleBlock;
  r.b_stride_n = p.k_blocks();
  return fp8_gemm_check_fp64(r, c, subset.full ? std::vector<std::int64_t>{} : subset.units,
                             blockscale_beta(p.depth, p.slices, matrix_unit),
                             blockscale_beta_reason(p.depth, p.slices, matrix_unit))
      .front();
}

std::vector<ElementRange> row_ranges(const CheckSubset& subset, std::int64_t width) {
  if (subset.full) return {};
  std::vector<ElementRange> r;
  for (std::int64_t m : subset.units) r.push_back({m * width, (m + 1) * width});
  return r;
}

void zero_rows(float* acc, const std::vector<std::int64_t>& rows, std::int64_t rows_total, std::int64_t cols) {
  if (rows.empty()) {
    std::memset(acc, 0, static_cast<std::size_t>(rows_total * cols) * sizeof(float));
    return;
  }
  for (std::int64_t m : rows) std::memset(acc + m * cols, 0, static_cast<std::size_t>(cols) * sizeof(float));
}

// The sm_90a kernel's CTA tile as its launcher picks it, for the reports' launch_configs.
std::string blockscale_tile_text(const Fp8BlockscaleParams& p, bool direct = false) {
#if FUSEBENCH_HAS_GPU
  return wgmma_tile_text(fp8_blockscale_launch_tile_cols(p, direct));  // this device's SM count
#else
  return wgmma_tile_text(blockscale_launch_tile_cols(p, direct));
#endif
}

Work gemm_work(const Fp8BlockscaleParams& p, std::int64_t extra_read, std::int64_t extra_write) {
  Work w;
  const std::int64_t scales = 4 * (p.rows * p.k_blocks() + p.n_blocks() * p.k_blocks());
  // acc: written once (the slices' sum) and C written once; reading acc's zeros is not required work.
  w.read_bytes = p.rows * p.depth + p.cols * p.depth + scales + extra_read;
  w.write_bytes = 2 * p.rows * p.cols + 4 * p.rows * p.cols + extra_write;
  w.flops = 2.0 * static_cast<double>(p.rows) * static_cast<double>(p.cols) * static_cast<double>(p.depth);
  return w;
}

// ---------------------------------------------------------------- fp8_gemm_blockscale/gemm

enum GemmVariant : VariantId { kPlain = 0, kWgmma = 1, kVendor = 2, kDirect = 3 };

class BlockscaleGemmInstance final : public CaseInstance {
 public:
  BlockscaleGemmInstance(const Fp8BlockscaleParams& p, Distribution d) : p_(p), dist_(d) {}

  std::vector<TensorSpec> inputs() const override {
    const DType q = fp8_dtype(p_.flavour);
    TensorSpec b{"b", q, {{"N", p_.cols}, {"K", p_.depth}}};
    TensorSpec bs{"b_scale", DType::f32, {{"NB", p_.n_blocks()}, {"KB", p_.k_blocks()}}};
    // The same weight scales in the layout cuBLASLt documents (rows padded to a multiple of 4 K
    // blocks): read by the vendor variant only, prepared with the weights (untimed).
    TensorSpec bs_lt{"b_scale_lt", DType::f32, {{"NB", p_.n_blocks()}, {"L4", blockscale_vendor_scale_row(p_.k_blocks())}}};
    b.weight = bs.weight = bs_lt.weight = true;
    return {{"a", q, {{"M", p_.rows}, {"K", p_.depth}}},
            {"a_scale", DType::f32, {{"M", p_.rows}, {"KB", p_.k_blocks()}}},
            b,
            bs,
            bs_lt};
  }
  std::vector<TensorSpec> outputs() const override {
    return {{"c", DType::bf16, {{"M", p_.rows}, {"N", p_.cols}}}, {"acc", DType::f32, {{"M", p_.rows}, {"N", p_.cols}}}};
  }
  std::vector<TensorSpec> workspace(VariantId v) const override {
    if (v == kVendor) return {{"a_scale_k_major", DType::f32, {{"KB", p_.k_blocks()}, {"M", p_.rows}}}};
    if (v == kDirect) return {};
    return {{"tickets", DType::i32, {{"T", p_.tickets()}}}};
  }
  void generate(std::uint64_t seed, HostTensors& in) const override {
    fill_fp8_operand(in[0].data<std::uint8_t>(), p_.rows, p_.depth, dist_, p_.flavour, seed, 0);
    fill_fp8_scales(in[1].data<float>(), p_.rows * p_.k_blocks(), seed, 1);
    if (dist_ == Distribution::nan) in[0].data<std::uint8_t>()[(p_.rows / 2) * p_.depth + p_.depth / 3] = fp8_nan_code(p_.flavour);
  }
  void prepare_weights(std::uint64_t seed, HostTensors& in) const override {
    fill_fp8_operand(in[2].data<std::uint8_t>(), p_.cols, p_.depth, dist_ == Distribution::nan ? Distribution::normal : dist_,
                     p_.flavour, seed, 2);
    fill_fp8_scales(in[3].data<float>(), p_.n_blocks() * p_.k_blocks(), seed, 3);
    fp8_blockscale_vendor_pad_weight_scales(p_, in[3].data<float>(), in[4].data<float>());
  }
  std::string distribution_text() const override {
    return dist_ == Distribution::edge ? std::string(kFp8GemmEdgeText) : fb::distribution_text(dist_);
  }

  void run(VariantId v, const ExecContext& ctx, const TensorPointers& in, const TensorPointers& out,
           const TensorPointers& ws) const override {
    if (v == kVendor) {
      // No emulation (a vendor library): skipped on the CPU backend by variant_skip_reason.
      if (ctx.backend == Backend::cpu) throw InputError("the vendor variant has no CPU emulation");
      const Fp8BlockscaleVendorBuffers vb{in.get<const std::uint8_t>(0), in.get<const float>(1),
                                          in.get<const std::uint8_t>(2), in.get<const float>(4),
                                          ws.get<float>(0),              out.get<std::uint16_t>(0)};
      fp8_blockscale_vendor_launch(p_, vb, ctx.stream);
      return;
    }
    const Fp8BlockscaleBuffers b{in.get<const std::uint8_t>(0), in.get<const float>(1), in.get<const std::uint8_t>(2),
                                 in.get<const float>(3), out.get<float>(1), out.get<std::uint16_t>(0),
                                 v == kDirect ? nullptr : ws.get<std::uint32_t>(0)};
    // The vendor returned above: the implementations below are plain, wgmma and direct, in order.
    run_variant<Fp8BlockscaleParams, Fp8BlockscaleBuffers>(
        v == kDirect ? VariantId{2} : v, ctx, p_, b,
        {{&plain_emu, FB_GPU_LAUNCHER(plain_gpu)},
         {&blocked_emu, FB_GPU_LAUNCHER(wgmma_gpu)},
         {&direct_emu, FB_GPU_LAUNCHER(fp8_blockscale_wgmma_direct_launch)}});
  }

  std::vector<Fp64Check> check_fp64(const HostTensors& in, const HostTensors& out, const CheckSubset& subset) const override {
    // The variant is not passed: the wider (matrix-unit) budget for all; the plain kernel is also
    // bitwise to its emulation, whose canonical budget the unit tests check.
    return {check_c(p_, in[0].data<std::uint8_t>(), in[1].data<float>(), in[2].data<std::uint8_t>(), in[3].data<float>(),
                    out[0].data<std::uint16_t>(), subset, true)};
  }

  Work work(VariantId v) const override {
    Work w = gemm_work(p_, 0, 0);
    if (v == kVendor || v == kDirect) w.write_bytes -= 4 * p_.rows * p_.cols;  // C only, no fp32 acc
    return w;
  }

  // The sm_90a kernel's CTA tile on the GPU (wgmma and its direct form): the knob's width, else the
  // rule by M and N; the direct form's epilogue too (fp8_gemm_wgmma_epilogue.hpp), or its clusters'
  // arrivals (fp8_blockscale_cluster_arrivals.hpp).
  std::string launch_config(VariantId v, Backend backend) const override {
    if (backend != Backend::gpu || (v != kWgmma && v != kDirect)) return {};
    if (v == kWgmma) return blockscale_tile_text(p_);  // the turnstile's epilogue: acc and C from the registers
    if (p_.slices > 1)
      return blockscale_tile_text(p_, true) + fmt::format(", clusters of {} CTAs, {}", p_.slices,
                                                          cluster_arrivals_text(launch_cluster_arrivals()));
    return blockscale_tile_text(p_, true) + ", " + wgmma_epilogue_text(wgmma_launch_epilogue_staged(p_.cols));
  }

  std::string variant_skip_reason(VariantId v, Backend backend) const override {
    if (v == kVendor) return vendor_skip_reason(backend);
    if (v == kDirect && p_.slices > kBlockscaleClusterMaxSlices)
      return fmt::format("direct adds the slices in a cluster of S CTAs: S <= {} (S={})", kBlockscaleClusterMaxSlices, p_.slices);
    if (v != kWgmma && v != kDirect) return {};
    if (p_.flavour != Fp8Flavour::e4m3fn) return "wgmma takes OCP e4m3 only (fp8=e4m3fnuz)";
    if (p_.depth > kBoundDepth) return fmt::format("the wgmma claims are derived for K <= {} (K={})", kBoundDepth, p_.depth);
#if FUSEBENCH_HAS_GPU
    if (backend == Backend::gpu) return fp8_blockscale_wgmma_unavailable(p_);
#else
    (void)backend;
#endif
    return {};
  }

  std::string skip_reason(Backend backend) const override {
    if (backend == Backend::gpu && p_.rows > 65535) return "the plain kernel's grid takes at most 65535 rows";
    if (backend == Backend::cpu) return fp8_gemm_cpu_skip_reason(p_.rows, p_.cols, p_.depth);
    return {};
  }

  std::int64_t check_units() const override { return p_.rows; }
  double check_cost() const override {
    return 2.0 * static_cast<double>(p_.rows) * static_cast<double>(p_.cols) * static_cast<double>(p_.depth);
  }
  void emulate_subset(VariantId v, const HostTensors& in, HostTensors& out, const CheckSubset& subset) const override {
    const Fp8BlockscaleBuffers b{in[0].data<std::uint8_t>(), in[1].data<float>(), in[2].data<std::uint8_t>(),
                                 in[3].data<float>(), out[1].data<float>(), out[0].data<std::uint16_t>(), nullptr};
    const std::vector<std::int64_t> rows = subset.full ? std::vector<std::int64_t>{} : subset.units;
    zero_rows(b.acc, rows, p_.rows, p_.cols);  // the memset the acc variants start with (direct: a scratch start)
    (v == kPlain ? fp8_blockscale_canonical_emu : fp8_blockscale_blocked_emu)(p_, b, rows);
  }
  std::vector<ElementRange> subset_region(std::size_t, const CheckSubset& subset) const override {
    return row_ranges(subset, p_.cols);
  }

 private:
  static void plain_emu(const Fp8BlockscaleParams& p, const Fp8BlockscaleBuffers& b) {
    zero_rows(b.acc, {}, p.rows, p.cols);
    fp8_blockscale_canonical_emu(p, b);
  }
  static void blocked_emu(const Fp8BlockscaleParams& p, const Fp8BlockscaleBuffers& b) {
    zero_rows(b.acc, {}, p.rows, p.cols);
    fp8_blockscale_blocked_emu(p, b);
  }
  // The direct form's C is the blocked order's from a zeroed acc; acc is not its output (the
  // emulation still uses the buffer as its scratch).
  static void direct_emu(const Fp8BlockscaleParams& p, const Fp8BlockscaleBuffers& b) { blocked_emu(p, b); }
#if FUSEBENCH_HAS_GPU
  static void plain_gpu(const Fp8BlockscaleParams& p, const Fp8BlockscaleBuffers& b, void* s) {
    fp8_blockscale_zero_acc_launch(p, b, s);
    fp8_blockscale_plain_launch(p, b, s);
  }
  static void wgmma_gpu(const Fp8BlockscaleParams& p, const Fp8BlockscaleBuffers& b, void* s) {
    fp8_blockscale_zero_acc_launch(p, b, s);
    fp8_blockscale_wgmma_launch(p, b, s);
  }
#endif

  std::string vendor_skip_reason(Backend backend) const {
    if (backend == Backend::cpu) return "a vendor library runs on the GPU only (no emulation)";
    if (p_.flavour != Fp8Flavour::e4m3fn) return "cuBLASLt takes OCP e4m3 only (fp8=e4m3fnuz)";
    if (p_.slices != 1) return "cuBLASLt splits K its own way: the vendor runs the S=1 points only";
    if (p_.depth > kBoundDepth) return fmt::format("the vendor claims are derived for K <= {} (K={})", kBoundDepth, p_.depth);
    return fp8_blockscale_vendor_unavailable(p_);
  }

  Fp8BlockscaleParams p_;
  Distribution dist_;
};

std::vector<AxisSpec> gemm_axes(bool with_flavour, std::int64_t default_n, std::int64_t default_slices) {
  std::vector<AxisSpec> a{AxisSpec::integer("M", "rows (tokens)"),
                          AxisSpec::integer("N", "output channels; a multiple of 128", default_n),
                          AxisSpec::integer("K", "depth; a multiple of 128", 6144),
                          AxisSpec::integer("S", "split-K slices, 1 .. K/128", default_slices, 1, kBlockscaleMaxSlices)};
  if (with_flavour) a.push_back(AxisSpec::choice("fp8", "fp8 flavour of A and B", {"e4m3fn", "e4m3fnuz"}, "e4m3fn"));
  a.push_back(distribution_axis());
  return a;
}

KernelCase make_gemm_case() {
  KernelCase c;
  c.name = "fp8_gemm_blockscale/gemm";
  c.family = "fp8_gemm_blockscale";
  c.fusion = "F7";
  c.summary = "block-scale fp8 GEMM (1x128 x 128x128 scales), deterministic split-K into a zeroed fp32 buffer";
  c.spec = "docs/numeric-contract.md#fp8-gemms (orders and bounds: kernels/fp8_gemm_blockscale/README.md)";
  VariantSpec plain;
  plain.name = "plain";
  plain.summary = "memset, then the CUDA-core kernel (canonical order, per-tile turnstile)";
  plain.launches = 2;
  plain.emulation = Claim::bitwise();
  plain.emulation_note = "one written IEEE fp32 order, exact products, slices in a fixed order";
  VariantSpec wgmma;
  wgmma.name = "wgmma";
  wgmma.summary = "memset, then the matrix-unit kernel (sm_90a; 128-K block partials promoted in fp32)";
  wgmma.launches = 2;
  wgmma.emulation = matrix_unit_claim();
  wgmma.emulation_note = "the matrix unit's fp8 accumulation is not IEEE fp32: emulated with each block partial exact, "
                         "rounded once";
  VariantSpec vendor;
  vendor.name = "vendor";
  vendor.summary = "cuBLASLt block scaling (VEC128_32F x BLK128x128_32F, sm_90): the activation scales' transpose, "
                   "then one cublasLtMatmul writing C (no acc)";
  vendor.launches = 2;
  vendor.has_emulation = false;
  // A reference of the pairs only (it writes no acc, so it is not rerun): repeatability is not claimed.
  vendor.deterministic = false;
  vendor.emulation_note = "a vendor library: checked against fp64 (matrix-unit budget) and against our variants only";
  VariantSpec direct;
  direct.name = "direct";
  direct.summary = "the matrix-unit kernel writing C without acc or memset (sm_90a; S > 1: a tile's S slices on a "
                   "cluster of S CTAs, added in shared memory in slice order)";
  direct.emulation = matrix_unit_claim();
  direct.emulation_note = wgmma.emulation_note;
  direct.writes = {"c"};
  vendor.writes = {"c"};
  c.variants = {plain, wgmma, vendor, direct};
  // The vendor writes C only; it is the reference of its pair, so the checks that cover every
  // output of a pair's subject (repeat, unwritten) never look at the acc it does not write. Its
  // pair is with wgmma (the speed peer: bench reports vendor time / wgmma time); plain stays a
  // reference only, so the CPU backend reruns nothing more than before.
  // direct is wgmma without acc: the same bits of C; bench reports wgmma time / direct time (what
  // the acc contract costs) and vendor time / direct time.
  c.pairs = {{"wgmma", "plain", matrix_unit_claim(), {"c"}},
             {"wgmma", "vendor", matrix_unit_claim(), {"c"}},
             {"direct", "wgmma", Claim::bitwise(), {"c"}},
             {"direct", "vendor", matrix_unit_claim(), {"c"}}};
  c.axes = gemm_axes(true, 2304, 1);
  c.make = [](const Point& pt) -> std::unique_ptr<CaseInstance> {
    return std::make_unique<BlockscaleGemmInstance>(read_params(pt, true), distribution_of(pt));
  };
  return c;
}

// ---------------------------------------------------------------- fp8_gemm_blockscale/f7

enum F7Variant : VariantId { kMemset = 0, kPrezeroed = 1 };

struct F7Params {
  Fp8BlockscaleParams gemm;
  RmsnormFp8Params norm;
};

struct F7Buffers {
  const std::uint16_t* x = nullptr;
  const std::uint16_t* gamma = nullptr;
  std::uint8_t* q = nullptr;
  float* a_scale = nullptr;
  const std::uint8_t* b = nullptr;
  const float* b_scale = nullptr;
  float* acc = nullptr;
  std::uint16_t* c = nullptr;
  std::uint32_t* tickets = nullptr;
  Fp8BlockscaleBuffers gemm() const { return {q, a_scale, b, b_scale, acc, c, tickets}; }
  RmsnormFp8Buffers norm(bool zero_acc) const {
    RmsnormFp8Buffers n;
    n.x = x;
    n.weight = gamma;
    n.q = q;
    n.scales = a_scale;
    n.zero = zero_acc ? acc : nullptr;
    return n;
  }
};

RmsnormFp8Params norm_params(const Fp8BlockscaleParams& g) {
  RmsnormFp8Params n;
  n.rows = g.rows;
  n.hidden = g.depth;
  n.residual = false;
  n.write_out = false;
  n.granularity = Fp8Granularity::per_1x128;
  n.flavour = Fp8Flavour::e4m3fn;
  n.layout = ScaleLayout::row_major;
  n.scale_format = ScaleFormat::f32;
  return n;
}

class F7Instance final : public CaseInstance {
 public:
  F7Instance(const Fp8BlockscaleParams& p, Distribution d, bool producer_zeroes)
      : p_(p), dist_(d), producer_zeroes_(producer_zeroes) {}

  std::vector<TensorSpec> inputs() const override {
    TensorSpec gamma{"gamma", DType::bf16, {{"K", p_.depth}}};
    TensorSpec b{"b", DType::fp8_e4m3fn, {{"N", p_.cols}, {"K", p_.depth}}};
    TensorSpec bs{"b_scale", DType::f32, {{"NB", p_.n_blocks()}, {"KB", p_.k_blocks()}}};
    gamma.weight = b.weight = bs.weight = true;
    return {{"x", DType::bf16, {{"M", p_.rows}, {"K", p_.depth}}}, gamma, b, bs};
  }
  std::vector<TensorSpec> outputs() const override {
    return {{"q", DType::fp8_e4m3fn, {{"M", p_.rows}, {"K", p_.depth}}},
            {"a_scale", DType::f32, {{"M", p_.rows}, {"KB", p_.k_blocks()}}},
            {"acc", DType::f32, {{"M", p_.rows}, {"N", p_.cols}}},
            {"c", DType::bf16, {{"M", p_.rows}, {"N", p_.cols}}}};
  }
  std::vector<TensorSpec> workspace(VariantId) const override {
    return {{"tickets", DType::i32, {{"T", p_.tickets()}}}};
  }
  void generate(std::uint64_t seed, HostTensors& in) const override {
    fill_tensor(in[0], dist_ == Distribution::edge ? Distribution::outliers : dist_, seed, 0);
    if (dist_ == Distribution::nan) in[0].data<std::uint16_t>()[(p_.rows / 2) * p_.depth + p_.depth / 3] = 0x7FC0;
  }
  void prepare_weights(std::uint64_t seed, HostTensors& in) const override {
    fill_tensor(in[1], Distribution::normal, seed, 1, 0.1);
    fill_fp8_operand(in[2].data<std::uint8_t>(), p_.cols, p_.depth, Distribution::normal, Fp8Flavour::e4m3fn, seed, 2);
    fill_fp8_scales(in[3].data<float>(), p_.n_blocks() * p_.k_blocks(), seed, 3);
  }
  std::string distribution_text() const override {
    return dist_ == Distribution::edge ? "x with outlier channels (saturating the fp8 groups)"
                                       : fb::distribution_text(dist_);
  }

  void run(VariantId v, const ExecContext& ctx, const TensorPointers& in, const TensorPointers& out,
           const TensorPointers& ws) const override {
    F7Buffers b{in.get<const std::uint16_t>(0), in.get<const std::uint16_t>(1), out.get<std::uint8_t>(0),
                out.get<float>(1), in.get<const std::uint8_t>(2), in.get<const float>(3), out.get<float>(2),
                out.get<std::uint16_t>(3), ws.get<std::uint32_t>(0)};
    F7Params p{p_, norm_params(p_)};
    if (v == kPrezeroed && producer_zeroes_) p.norm.zero_bytes = p_.rows * p_.cols * 4;
    if (ctx.backend == Backend::cpu) {
      rmsnorm_fp8_fused_emu(p.norm, b.norm(v == kPrezeroed));
      if (v == kMemset) zero_rows(b.acc, {}, p_.rows, p_.cols);
      fp8_blockscale_blocked_emu(p_, b.gemm());
      return;
    }
#if FUSEBENCH_HAS_GPU
    rmsnorm_fp8_fused_launch(p.norm, b.norm(v == kPrezeroed), ctx.stream);
    if (v == kMemset) fp8_blockscale_zero_acc_launch(p_, b.gemm(), ctx.stream);
    fp8_blockscale_general_launch(p_, b.gemm(), ctx.stream);
#else
    throw DeviceError("this build has no GPU kernels (FUSEBENCH_GPU=none)");
#endif
  }

  std::vector<Fp64Check> check_fp64(const HostTensors& in, const HostTensors& out, const CheckSubset& subset) const override {
    // C against the fp64 GEMM of the q and scales the producer wrote (the norm itself is F1's,
    // checked there).
    return {check_c(p_, out[0].data<std::uint8_t>(), out[1].data<float>(), in[2].data<std::uint8_t>(), in[3].data<float>(),
                    out[3].data<std::uint16_t>(), subset, true)};
  }

  Work work(VariantId) const override {
    // The norm reads x and gamma, writes q and a_scale; acc's zeros are written once (by the memset
    // or by the producer), whichever variant.
    const std::int64_t norm_read = 2 * p_.rows * p_.depth + 2 * p_.depth;
    const std::int64_t norm_write = p_.rows * p_.depth + 4 * p_.rows * p_.k_blocks();
    return gemm_work(p_, norm_read, norm_write + 4 * p_.rows * p_.cols);
  }

  // Both variants' GEMM is fp8_blockscale_general_launch: the sm_90a kernel where this device and
  // shape take it, the plain kernel elsewhere.
  std::string launch_config(VariantId, Backend backend) const override {
    if (backend != Backend::gpu) return {};
#if FUSEBENCH_HAS_GPU
    if (!fp8_blockscale_wgmma_unavailable(p_).empty()) return "plain kernel";
#endif
    return "wgmma " + blockscale_tile_text(p_);
  }

  std::string skip_reason(Backend backend) const override {
    if (backend == Backend::gpu && p_.rows > 65535) return "the plain kernel's grid takes at most 65535 rows";
    if (backend == Backend::cpu) return fp8_gemm_cpu_skip_reason(p_.rows, p_.cols, p_.depth);
    return {};
  }

  std::int64_t check_units() const override { return p_.rows; }
  double check_cost() const override {
    return 2.0 * static_cast<double>(p_.rows) * static_cast<double>(p_.cols) * static_cast<double>(p_.depth);
  }
  void emulate_subset(VariantId v, const HostTensors& in, HostTensors& out, const CheckSubset& subset) const override {
    const std::vector<std::int64_t> rows = subset.full ? std::vector<std::int64_t>{} : subset.units;
    F7Buffers b{in[0].data<std::uint16_t>(), in[1].data<std::uint16_t>(), out[0].data<std::uint8_t>(),
                out[1].data<float>(), in[2].data<std::uint8_t>(), in[3].data<float>(), out[2].data<float>(),
                out[3].data<std::uint16_t>(), nullptr};
    // The norm row by row (one-row problems at the row's offsets), then the side job's or the
    // memset's zeros on those rows, then the GEMM on those rows.
    RmsnormFp8Params one = norm_params(p_);
    one.rows = 1;
    const std::int64_t kb = p_.k_blocks();
    auto norm_row = [&](std::int64_t m) {
      RmsnormFp8Buffers r = b.norm(false);
      r.x = b.x + m * p_.depth;
      r.q = b.q + m * p_.depth;
      r.scales = b.a_scale + m * kb;
      rmsnorm_fp8_fused_emu(one, r);
    };
    if (rows.empty())
      for (std::int64_t m = 0; m < p_.rows; ++m) norm_row(m);
    else
      for (std::int64_t m : rows) norm_row(m);
    if (v == kMemset || producer_zeroes_) zero_rows(b.acc, rows, p_.rows, p_.cols);
    fp8_blockscale_blocked_emu(p_, b.gemm(), rows);
  }
  std::vector<ElementRange> subset_region(std::size_t output, const CheckSubset& subset) const override {
    return row_ranges(subset, output <= 1 ? (output == 0 ? p_.depth : p_.k_blocks()) : p_.cols);
  }

 private:
  Fp8BlockscaleParams p_;
  Distribution dist_;
  bool producer_zeroes_;
};

}  // namespace

KernelCase make_fp8_blockscale_f7_case(bool producer_zeroes) {
  KernelCase c;
  c.name = "fp8_gemm_blockscale/f7";
  c.family = "fp8_gemm_blockscale";
  c.fusion = "F7";
  c.summary = "RMSNorm -> fp8 1x128 whose kernel also zeroes the split-K GEMM's fp32 buffer, so the GEMM skips its memset";
  c.spec = "docs/numeric-contract.md#fp8-gemms (orders and bounds: kernels/fp8_gemm_blockscale/README.md)";
  VariantSpec memset;
  memset.name = "memset";
  memset.summary = "RMSNorm -> fp8 1x128, memset of acc, split-K block-scale GEMM";
  memset.launches = 3;
  memset.emulation = matrix_unit_claim();
  memset.emulation_note = "the GEMM runs on the matrix units where available (sm_90a): blocked emulation, derived bound";
  VariantSpec prezeroed = memset;
  prezeroed.name = "prezeroed";
  prezeroed.summary = "RMSNorm -> fp8 1x128 zeroing acc as a side job, split-K block-scale GEMM (no memset)";
  prezeroed.launches = 2;
  c.variants = {memset, prezeroed};
  c.pairs = {{"prezeroed", "memset", Claim::bitwise(), {}}};
  c.axes = gemm_axes(false, 2304, 2);
  c.make = [producer_zeroes](const Point& pt) -> std::unique_ptr<CaseInstance> {
    return std::make_unique<F7Instance>(read_params(pt, false), distribution_of(pt), producer_zeroes);
  };
  return c;
}

void register_fp8_gemm_blockscale(Registry& registry) {
  registry.add(make_gemm_case());
  registry.add(make_fp8_blockscale_f7_case(true));
}

}  // namespace fb
