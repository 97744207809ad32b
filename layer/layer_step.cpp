#include "layer/layer_step.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "core/device.hpp"
#include "core/errors.hpp"
#include "kernels/fp8_gemm/fp8_gemm_math.hpp"
#include "kernels/moe_gemm/moe_gemm_wgmma.hpp"
#include "kernels/moe_gemm/moe_gemm_wgmma_plan.hpp"
#include "layer/layer_weights.hpp"

namespace fb {
namespace {

// Seed streams of the step's tensors (fixed numbers, so a tensor keeps its values when others are added).
enum Stream : std::uint64_t {
  kXIn = 101, kResidIn, kPostNormW, kInNormW, kRouterW, kRouterBias, kGateUpW, kGateUpWs, kDownW, kDownWs, kW13,
  kW13s, kW2, kW2s, kQkvW, kQkvWs, kOW, kOWs, kOIn, kOInS
};

// The GPU launchers exist in GPU builds only; a CPU-only build never takes the GPU branch (its
// Session has no GPU backend), and says so if it ever did.
#if FUSEBENCH_HAS_GPU
#define LAYER_GPU(call) call
#else
#define LAYER_GPU(call) throw DeviceError("this build has no GPU backend")
#endif

std::size_t sz(std::int64_t n) { return static_cast<std::size_t>(n); }

}  // namespace

template <class Emu, class Launch>
void LayerStep::call(int launches, Emu&& emu, Launch&& launch) {
  counted_ += launches;
  if (counting_) return;
  if (backend_ == Backend::cpu) emu();
  else launch();
}

LayerStep::LayerStep(const AblationLayer& layer, LayerPhase phase, std::int64_t rows, Backend backend, void* stream,
                     std::uint64_t seed)
    : layer_(layer), phase_(phase), rows_(rows), backend_(backend), stream_(stream), buffers_(backend) {
  flavour_ = layer.fp8 == "e4m3fnuz" ? Fp8Flavour::e4m3fnuz : Fp8Flavour::e4m3fn;
  const std::int64_t T = rows, H = layer.hidden;

  post_norm_.rows = T;
  post_norm_.hidden = H;
  post_norm_.residual = true;
  post_norm_.weight_offset = 1.0f;
  post_norm_.eps = 1e-6f;
  post_norm_.write_out = true;  // the router reads the bf16 norm output
  post_norm_.granularity = Fp8Granularity::per_token;
  post_norm_.flavour = flavour_;
  in_norm_ = post_norm_;
  in_norm_.write_out = false;
  in_norm_.granularity = Fp8Granularity::per_1x128;  // the block-scale qkv GEMM's A scales

  qkv_ = {T, layer.qkv_out, H, layer.gemm_slices, flavour_};
  o_proj_ = {T, H, layer.o_proj_in, layer.gemm_slices, flavour_};

  router_.rows = T;
  router_.hidden = H;
  router_.experts = layer.experts;
  router_.split_k = layer.router_split_k;
  router_.topk = layer.topk;
  decode_router_.router = router_;
  decode_router_.block = layer.sort_block;
  decode_router_.buf_cols = H;

  gate_up_ = {T, 2 * layer.shared_inter, H, flavour_};
  down_ = {T, H, layer.shared_inter, flavour_};
  swiglu_.rows = T;
  swiglu_.d = layer.shared_inter;
  swiglu_.activation = SwigluActivation::swiglu_oai;
  swiglu_.granularity = Fp8Granularity::per_token;
  swiglu_.flavour = flavour_;
  router_swiglu_ = {router_, swiglu_};

  moe_.tokens = T;
  moe_.topk = layer.topk;
  moe_.experts = layer.experts;
  moe_.block = layer.sort_block;
  moe_.hidden = H;
  moe_.inter = layer.moe_inter;
  moe_.oai = true;
  moe_.engine = MoeGemmEngine::exact;
  moe_.shared = MoeSharedMode::fold;
  sort1_ = moe_.sort_params(MoeStage::stage1);
  sort2_ = moe_.sort_params(MoeStage::stage2);

  if (H % kFp8GemmChunk != 0 || layer.shared_inter % kFp8GemmChunk != 0)
    throw InputError(fmt::format("ablation.layer: hidden and shared_inter must be multiples of {}", kFp8GemmChunk));
  router_validate(router_);
  f8_router_ok_ = flavour_ == Fp8Flavour::e4m3fn;
  if (small()) {
    decode_router_validate(decode_router_);
    if (f8_router_ok_) {  // the shape F4 runs with F8 inside
      DecodeRouterParams with_f8 = decode_router_;
      with_f8.shared = gate_up_;
      decode_router_validate(with_f8);
    }
  } else {
    router_swiglu_validate(router_swiglu_);
  }
  moe_gemm_validate(moe_);
  moe_sort_validate_shape(sort1_);
  moe_sort_validate_shape(sort2_);
  allocate(seed);

  outputs_ = {{"moe_out", OutputType::bf16, true, true},
              {"residual", OutputType::bf16},
              {"norm_out", OutputType::bf16},
              {"topk_ids", OutputType::i32},
              {"topk_weights", OutputType::f32},
              {"shared_gate_up", OutputType::bf16, true, false},
              {"shared_out", OutputType::bf16, true, false}};
  if (phase_ == LayerPhase::prefill) {
    outputs_.push_back({"attn_residual", OutputType::bf16});
    outputs_.push_back({"qkv_out", OutputType::bf16});
    outputs_.push_back({"o_proj_out", OutputType::bf16});
  }
}

void LayerStep::allocate(std::uint64_t seed) {
  const std::int64_t T = rows_, H = layer_.hidden, E = layer_.experts, k = layer_.topk, I = layer_.moe_inter;
  const std::int64_t Is = layer_.shared_inter;
  LayerBuffers& b = buffers_;
  auto fixed = [&](const char* name, const Bytes& bytes) {
    b.add(name, bytes.size(), BufferRole::fixed);
    b.upload(name, bytes);
  };
  auto written = [&](const char* name, std::int64_t bytes) { b.add(name, sz(bytes), BufferRole::written); };

  // Inputs: the attention block's output and the residual stream (decode), or the layer input
  // and residual (prefill, where the attention output is a fixed fp8 tensor: attention is not modelled).
  fixed("x_in", random_bf16_normal(T * H, 1.0, seed, kXIn));
  fixed("resid_in", random_bf16_normal(T * H, 1.0, seed, kResidIn));
  fixed("post_norm_w", random_bf16_normal(H, 0.1, seed, kPostNormW));
  fixed("router_w", random_f32_normal(E * H, 0.02, seed, kRouterW));
  fixed("router_bias", random_f32_normal(E, 0.01, seed, kRouterBias));
  // fp8 weights: N(0, 1) codes, channel scales 0.5 / sqrt(K) keep each output near unit size.
  fixed("gate_up_w", random_fp8(2 * Is * H, flavour_, seed, kGateUpW));
  fixed("gate_up_ws", random_f32_scales(2 * Is, 0.5 / std::sqrt(double(H)), seed, kGateUpWs));
  fixed("down_w", random_fp8(H * Is, flavour_, seed, kDownW));
  fixed("down_ws", random_f32_scales(H, 0.5 / std::sqrt(double(Is)), seed, kDownWs));
  // MXFP4 experts: packed e2m1 bytes and e8m0 scales near 2^-8 (gate_up, K = hidden) and 2^-6 (down).
  fixed("w13", random_e2m1_bytes(E * 2 * I * H / 2, seed, kW13));
  fixed("w13_s", random_e8m0(E * 2 * I * H / 32, 127 - 8, seed, kW13s));
  fixed("w2", random_e2m1_bytes(E * H * I / 2, seed, kW2));
  fixed("w2_s", random_e8m0(E * H * I / 32, 127 - 6, seed, kW2s));
  if (phase_ == LayerPhase::prefill) {
    const std::int64_t Nq = layer_.qkv_out, Ho = layer_.o_proj_in;
    fixed("in_norm_w", random_bf16_normal(H, 0.1, seed, kInNormW));
    fixed("qkv_w", random_fp8(Nq * H, flavour_, seed, kQkvW));
    fixed("qkv_ws", random_f32_scales((Nq / 128) * (H / 128), 0.5 / std::sqrt(double(H)), seed, kQkvWs));
    fixed("o_w", random_fp8(H * Ho, flavour_, seed, kOW));
    fixed("o_ws", random_f32_scales((H / 128) * (Ho / 128), 0.5 / std::sqrt(double(Ho)), seed, kOWs));
    fixed("o_in", random_fp8(T * Ho, flavour_, seed, kOIn));
    fixed("o_in_s", random_f32_scales(T * (Ho / 128), 1.0, seed, kOInS));
    written("attn_residual", T * H * 2);
    written("in_norm_ws", T * H * 2);
    written("q_in", T * H);
    written("q_in_s", T * (H / 128) * 4);
    written("acc", T * (Nq + H) * 4);  // qkv's accumulator, then o_proj's: one region the F1 producer zeroes (F7)
    written("qkv_out", T * Nq * 2);
    written("qkv_tickets", qkv_.tickets() * 4);
    written("o_proj_out", T * H * 2);
    written("o_tickets", o_proj_.tickets() * 4);
  }
  written("residual", T * H * 2);
  written("norm_out", T * H * 2);
  written("q", T * H);
  written("q_s", T * 4);
  written("partials", router_.split_k * T * E * 4);
  written("logits", T * E * 4);
  written("topk_ids", T * k * 4);
  written("topk_weights", T * k * 4);
  written("sorted_ids", sort1_.max_entries() * 4);
  written("sorted_w", sort1_.max_entries() * 4);
  written("sorted_eids", sort1_.max_blocks() * 4);
  written("num_valid", 2 * 4);
  written("moe_buf", T * sort1_.buf_cols * 2);
  written("chunk_counts", std::max(sort1_.chunks(), sort2_.chunks()) * E * 4);
  written("expert_info", MoeExpertInfoLayout{E}.words() * 4);
  written("row_scales", std::max(sort1_.rows() * sort1_.scale_cols(), sort2_.rows() * sort2_.scale_cols()));
  written("shared_gate_up", T * 2 * Is * 2);
  written("swiglu_ws", T * Is * 2);
  written("swiglu_q", T * Is);
  written("swiglu_s", T * 4);
  written("shared_out", T * H * 2);
  written("xq", T * H / 2);
  written("x_scales", sort1_.scale_rows() * sort1_.scale_cols_pad());
  written("a1", T * k * I * 2);
  written("a2q", T * k * I / 2);
  written("a2_scales", sort2_.scale_rows() * sort2_.scale_cols_pad());
  written("y", T * k * H * 4);
  written("moe_out", T * H * 2);
  // The MoE engine's staged token rows, shared by stage 1 (K = H) and stage 2 (K = I).
  const std::int64_t entries = moe_.max_entries();
  written("token_stage", std::max(MoeTokenStageLayout{entries, H}.bytes(), MoeTokenStageLayout{entries, I}.bytes()));
  // Its staged weight rows (1.2 GB at stage 1), only where it stages them (prefill sizes on sm_90a).
  std::int64_t weight_stage = 0;
#if FUSEBENCH_HAS_GPU
  for (const bool stage1 : {true, false})
    if (backend_ == Backend::gpu && moe_wgmma_stages_weights(moe_, stage1))
      weight_stage = std::max(weight_stage, moe_weight_stage_layout(moe_, stage1).bytes());
#endif
  if (weight_stage > 0) {
    written("weight_stage", weight_stage);
    weight_stage_ = b.ptr<std::uint8_t>("weight_stage");
  }
}

int LayerStep::token_stage_launches(const MoeGemmParams& p, bool stage1) const {
#if FUSEBENCH_HAS_GPU
  if (backend_ == Backend::gpu && moe_wgmma_stages_tokens(p, stage1))
    return 1 + (weight_stage_ && moe_wgmma_stages_weights(p, stage1) ? 1 : 0);
#else
  (void)p;
  (void)stage1;
#endif
  return 0;
}

int LayerStep::launches(const FusionSwitches& s) {
  counting_ = true;
  counted_ = 0;
  try {
    run(s);
  } catch (...) {
    counting_ = false;
    throw;
  }
  counting_ = false;
  return counted_;
}

void LayerStep::run(const FusionSwitches& s) {
  if (phase_ == LayerPhase::prefill) {
    input_norm(s);
    qkv_gemm(s);
    o_proj_gemm(s);
  }
  post_norm(s);  // writes q and its scales (F1 fused, or the chain's quant) before anything reads them
  if (small()) {
    decode_router(s);   // with F8 on, also the shared gate_up (from post_norm's q)
    shared_gate_up(s);  // with F8 off (or a flavour the router's F8 blocks lack), the gate_up here
    shared_swiglu(s);
  } else {
    shared_gate_up(s);  // before the router: F3 runs the router GEMV and this output's SwiGLU in one launch
    router_swiglu(s);
  }
  shared_down(s);
  sort_quant_stage1(s);
  moe_stage1(s);
  sort_quant_stage2(s);
  moe_stage2(s);
}

void LayerStep::input_norm(const FusionSwitches& s) {
  RmsnormFp8Params p = in_norm_;
  RmsnormFp8Buffers b;
  b.x = buffers_.ptr<std::uint16_t>("x_in");
  b.residual = buffers_.ptr<std::uint16_t>("resid_in");
  b.weight = buffers_.ptr<std::uint16_t>("in_norm_w");
  b.residual_out = buffers_.ptr<std::uint16_t>("attn_residual");
  b.out = buffers_.ptr<std::uint16_t>("in_norm_ws");
  b.q = buffers_.ptr<std::uint8_t>("q_in");
  b.scales = buffers_.ptr<void>("q_in_s");
  if (s[Fusion::F1]) {
    // F7's side job rides on the fused producer only: with F1 off the GEMMs get their memsets.
    if (s[Fusion::F7]) {
      p.zero_bytes = static_cast<std::int64_t>(buffers_.bytes("acc"));
      b.zero = buffers_.ptr<void>("acc");
    }
    call(1, [&] { rmsnorm_fp8_fused_emu(p, b); }, [&] { LAYER_GPU(rmsnorm_fp8_fused_launch(p, b, stream_)); });
  } else {
    call(2, [&] { rmsnorm_fp8_chain_emu(p, b); }, [&] { LAYER_GPU(rmsnorm_fp8_chain_launch(p, b, stream_)); });
  }
}

namespace {

void blockscale_step(const Fp8BlockscaleParams& p, const Fp8BlockscaleBuffers& b, bool memset_first, Backend backend,
                     void* stream, int& counted, bool counting) {
  const int n = memset_first ? 2 : 1;
  counted += n;
  if (counting) return;
  if (backend == Backend::cpu) {
    if (memset_first) std::memset(b.acc, 0, sz(p.rows * p.cols) * 4);
    fp8_blockscale_canonical_emu(p, b);
  } else {
    if (memset_first) LAYER_GPU(fp8_blockscale_zero_acc_launch(p, b, stream));
    LAYER_GPU(fp8_blockscale_general_launch(p, b, stream));
  }
}

}  // namespace

void LayerStep::qkv_gemm(const FusionSwitches& s) {
  Fp8BlockscaleBuffers b;
  b.a = buffers_.ptr<std::uint8_t>("q_in");
  b.a_scale = buffers_.ptr<float>("q_in_s");
  b.b = buffers_.ptr<std::uint8_t>("qkv_w");
  b.b_scale = buffers_.ptr<float>("qkv_ws");
  b.acc = buffers_.ptr<float>("acc");
  b.c = buffers_.ptr<std::uint16_t>("qkv_out");
  b.tickets = buffers_.ptr<std::uint32_t>("qkv_tickets");
  blockscale_step(qkv_, b, !(s[Fusion::F7] && s[Fusion::F1]), backend_, stream_, counted_, counting_);
}

void LayerStep::o_proj_gemm(const FusionSwitches& s) {
  Fp8BlockscaleBuffers b;
  b.a = buffers_.ptr<std::uint8_t>("o_in");
  b.a_scale = buffers_.ptr<float>("o_in_s");
  b.b = buffers_.ptr<std::uint8_t>("o_w");
  b.b_scale = buffers_.ptr<float>("o_ws");
  b.acc = buffers_.ptr<float>("acc") + rows_ * layer_.qkv_out;
  b.c = buffers_.ptr<std::uint16_t>("o_proj_out");
  b.tickets = buffers_.ptr<std::uint32_t>("o_tickets");
  blockscale_step(o_proj_, b, !(s[Fusion::F7] && s[Fusion::F1]), backend_, stream_, counted_, counting_);
}

void LayerStep::post_norm(const FusionSwitches& s) {
  RmsnormFp8Buffers b;
  const bool prefill = phase_ == LayerPhase::prefill;
  b.x = buffers_.ptr<std::uint16_t>(prefill ? "o_proj_out" : "x_in");
  b.residual = buffers_.ptr<std::uint16_t>(prefill ? "attn_residual" : "resid_in");
  b.weight = buffers_.ptr<std::uint16_t>("post_norm_w");
  b.residual_out = buffers_.ptr<std::uint16_t>("residual");
  b.out = buffers_.ptr<std::uint16_t>("norm_out");
  b.q = buffers_.ptr<std::uint8_t>("q");
  b.scales = buffers_.ptr<void>("q_s");
  const RmsnormFp8Params& p = post_norm_;
  if (s[Fusion::F1]) call(1, [&] { rmsnorm_fp8_fused_emu(p, b); }, [&] { LAYER_GPU(rmsnorm_fp8_fused_launch(p, b, stream_)); });
  else call(2, [&] { rmsnorm_fp8_chain_emu(p, b); }, [&] { LAYER_GPU(rmsnorm_fp8_chain_launch(p, b, stream_)); });
}

RouterBuffers LayerStep::router_buffers() {
  RouterBuffers b;
  b.x = buffers_.ptr<std::uint16_t>("norm_out");
  b.w = buffers_.ptr<void>("router_w");
  b.bias = buffers_.ptr<float>("router_bias");
  b.partials = buffers_.ptr<float>("partials");
  b.logits = buffers_.ptr<float>("logits");
  b.topk_ids = buffers_.ptr<std::int32_t>("topk_ids");
  b.topk_weights = buffers_.ptr<float>("topk_weights");
  return b;
}

MoeSortMxfp4Buffers LayerStep::sort_buffers(MoeStage stage) {
  MoeSortMxfp4Buffers b;
  b.topk_ids = buffers_.ptr<std::int32_t>("topk_ids");
  b.topk_weights = buffers_.ptr<float>("topk_weights");
  b.x = buffers_.ptr<std::uint16_t>(stage == MoeStage::stage1 ? "norm_out" : "a1");
  b.sorted_token_ids = buffers_.ptr<std::int32_t>("sorted_ids");
  b.sorted_weights = buffers_.ptr<float>("sorted_w");
  b.sorted_expert_ids = buffers_.ptr<std::int32_t>("sorted_eids");
  b.num_valid_ids = buffers_.ptr<std::int32_t>("num_valid");
  b.moe_buf = buffers_.ptr<std::uint16_t>("moe_buf");
  b.xq = buffers_.ptr<std::uint8_t>(stage == MoeStage::stage1 ? "xq" : "a2q");
  b.scales = buffers_.ptr<std::uint8_t>(stage == MoeStage::stage1 ? "x_scales" : "a2_scales");
  b.chunk_counts = buffers_.ptr<std::int32_t>("chunk_counts");
  b.expert_info = buffers_.ptr<std::int32_t>("expert_info");
  b.row_scales = buffers_.ptr<std::uint8_t>("row_scales");
  return b;
}

void LayerStep::decode_router(const FusionSwitches& s) {
  DecodeRouterBuffers b;
  b.router = router_buffers();
  const MoeSortMxfp4Buffers sb = sort_buffers(MoeStage::stage1);
  b.sorted_token_ids = sb.sorted_token_ids;
  b.sorted_weights = sb.sorted_weights;
  b.sorted_expert_ids = sb.sorted_expert_ids;
  b.num_valid_ids = sb.num_valid_ids;
  b.moe_buf = sb.moe_buf;
  b.chunk_counts = sb.chunk_counts;
  b.expert_info = sb.expert_info;
  DecodeRouterParams p = decode_router_;
  const bool f8 = f8_in_router(s);
  if (f8) {
    // F8's gate_up in the router's launch: F4 runs it in its other blocks (still one launch); the
    // chain runs it as its own launch after the sort (6, the router/decode case's chain), so F4
    // alone switches between the pair that case measures.
    p.shared = gate_up_;
    b.shared = gate_up_buffers();
  }
  if (s[Fusion::F4])
    call(1, [&] { decode_router_fused_emu(p, b); }, [&] { LAYER_GPU(decode_router_fused_launch(p, b, stream_)); });
  else
    call(f8 ? 6 : 5, [&] { decode_router_chain_emu(p, b); }, [&] { LAYER_GPU(decode_router_chain_launch(p, b, stream_)); });
}

Fp8GemmBuffers LayerStep::gate_up_buffers() {
  Fp8GemmBuffers b;
  b.a = buffers_.ptr<std::uint8_t>("q");
  b.a_scale = buffers_.ptr<float>("q_s");
  b.b = buffers_.ptr<std::uint8_t>("gate_up_w");
  b.b_scale = buffers_.ptr<float>("gate_up_ws");
  b.c = buffers_.ptr<std::uint16_t>("shared_gate_up");
  return b;
}

void LayerStep::shared_gate_up(const FusionSwitches& s) {
  if (f8_in_router(s)) return;  // the decode router's launch wrote it
  const Fp8GemmBuffers b = gate_up_buffers();
  const Fp8GemmParams& p = gate_up_;
  if (small() && s[Fusion::F8])  // e4m3fnuz: F8's own launch (the router's F8 blocks are e4m3fn only)
    call(1, [&] { fp8_gemm_canonical_emu(p, b); }, [&] { LAYER_GPU(fp8_gemm_small_m_launch(p, b, stream_)); });
  else  // the general GEMM: on the H200 the mma or wgmma kernel, whose structure the blocked emulation follows
    call(1, [&] { fp8_gemm_blocked_emu(p, b); }, [&] { LAYER_GPU(fp8_gemm_general_launch(p, b, stream_)); });
}

void LayerStep::shared_swiglu(const FusionSwitches& s) {
  SwigluFp8Buffers b;
  b.gate_up = buffers_.ptr<std::uint16_t>("shared_gate_up");
  b.out = buffers_.ptr<std::uint16_t>("swiglu_ws");
  b.q = buffers_.ptr<std::uint8_t>("swiglu_q");
  b.scales = buffers_.ptr<void>("swiglu_s");
  const SwigluFp8Params& p = swiglu_;
  if (s[Fusion::F2]) call(1, [&] { swiglu_fp8_fused_emu(p, b); }, [&] { LAYER_GPU(swiglu_fp8_fused_launch(p, b, stream_)); });
  else call(2, [&] { swiglu_fp8_chain_emu(p, b); }, [&] { LAYER_GPU(swiglu_fp8_chain_launch(p, b, stream_)); });
}

void LayerStep::router_swiglu(const FusionSwitches& s) {
  RouterSwigluBuffers b;
  b.router = router_buffers();
  b.swiglu.gate_up = buffers_.ptr<std::uint16_t>("shared_gate_up");
  b.swiglu.out = buffers_.ptr<std::uint16_t>("swiglu_ws");
  b.swiglu.q = buffers_.ptr<std::uint8_t>("swiglu_q");
  b.swiglu.scales = buffers_.ptr<void>("swiglu_s");
  const RouterSwigluParams& p = router_swiglu_;
  if (s[Fusion::F2] && s[Fusion::F3]) {
    call(2, [&] { router_swiglu_fused_emu(p, b); }, [&] { LAYER_GPU(router_swiglu_fused_launch(p, b, stream_)); });
  } else if (s[Fusion::F2]) {  // F3's chain: router GEMV, reduce, gate, then the F2 launch
    call(4, [&] { router_swiglu_chain_emu(p, b); }, [&] { LAYER_GPU(router_swiglu_chain_launch(p, b, stream_)); });
  } else {
    // F2 off: F3's launch carries F2's block body and cannot carry the unfused SwiGLU, so the
    // router runs alone (GEMV + gate from partials with F3 on, the router chain with it off) and the
    // SwiGLU chain follows.
    if (s[Fusion::F3])
      call(2, [&] { router_fused_emu(p.router, b.router); }, [&] { LAYER_GPU(router_fused_launch(p.router, b.router, stream_)); });
    else
      call(3, [&] { router_chain_emu(p.router, b.router); }, [&] { LAYER_GPU(router_chain_launch(p.router, b.router, stream_)); });
    call(2, [&] { swiglu_fp8_chain_emu(p.swiglu, b.swiglu); },
         [&] { LAYER_GPU(swiglu_fp8_chain_launch(p.swiglu, b.swiglu, stream_)); });
  }
}

void LayerStep::shared_down(const FusionSwitches&) {
  Fp8GemmBuffers b;
  b.a = buffers_.ptr<std::uint8_t>("swiglu_q");
  b.a_scale = buffers_.ptr<float>("swiglu_s");
  b.b = buffers_.ptr<std::uint8_t>("down_w");
  b.b_scale = buffers_.ptr<float>("down_ws");
  b.c = buffers_.ptr<std::uint16_t>("shared_out");
  const Fp8GemmParams& p = down_;
  call(1, [&] { fp8_gemm_blocked_emu(p, b); }, [&] { LAYER_GPU(fp8_gemm_general_launch(p, b, stream_)); });
}

namespace {

int sort_quant_launches(const MoeSortMxfp4Params& p, bool fused) {
  const MoeSortQuantPath path = fused ? moe_sort_quant_path(p) : MoeSortQuantPath::chain;
  return path == MoeSortQuantPath::one_launch ? 1 : path == MoeSortQuantPath::four_launch ? 4 : 5;
}

}  // namespace

void LayerStep::sort_quant_stage1(const FusionSwitches& s) {
  const MoeSortMxfp4Buffers b = sort_buffers(MoeStage::stage1);
  const MoeSortMxfp4Params& p = sort1_;
  if (small()) {
    // The decode router (or its chain) sorted already: only the quant and the scale sort remain.
    call(1, [&] { mxfp4_quant_rows_emu(p, b); }, [&] { LAYER_GPU(mxfp4_quant_rows_launch(p, b, stream_)); });
    call(1, [&] { mxfp4_scale_sort_emu(p, b); }, [&] { LAYER_GPU(mxfp4_scale_sort_launch(p, b, stream_)); });
  } else if (s[Fusion::F5]) {
    call(sort_quant_launches(p, true), [&] { moe_sort_mxfp4_fused_emu(p, b); },
         [&] { LAYER_GPU(moe_sort_mxfp4_fused_launch(p, b, stream_)); });
  } else {
    call(5, [&] { moe_sort_mxfp4_chain_emu(p, b); }, [&] { LAYER_GPU(moe_sort_mxfp4_chain_launch(p, b, stream_)); });
  }
}

void LayerStep::moe_stage1(const FusionSwitches&) {
  MoeStage1Buffers b;
  b.sorted_token_ids = buffers_.ptr<std::int32_t>("sorted_ids");
  b.sorted_expert_ids = buffers_.ptr<std::int32_t>("sorted_eids");
  b.num_valid_ids = buffers_.ptr<std::int32_t>("num_valid");
  b.xq = buffers_.ptr<std::uint8_t>("xq");
  b.x_scales = buffers_.ptr<std::uint8_t>("x_scales");
  b.w13 = buffers_.ptr<std::uint8_t>("w13");
  b.w13_scales = buffers_.ptr<std::uint8_t>("w13_s");
  b.a1 = buffers_.ptr<std::uint16_t>("a1");
  b.token_stage = buffers_.ptr<std::uint8_t>("token_stage");
  b.weight_stage = weight_stage_;
  const MoeGemmParams& p = moe_;
  call(1 + token_stage_launches(p, true), [&] { moe_stage1_emu(p, b); },
       [&] { LAYER_GPU(moe_stage1_launch(p, b, stream_)); });
}

void LayerStep::sort_quant_stage2(const FusionSwitches& s) {
  // The family's stage-2 role sorts again (the same pairs, so the same sort bytes) and quantizes a1.
  const MoeSortMxfp4Buffers b = sort_buffers(MoeStage::stage2);
  const MoeSortMxfp4Params& p = sort2_;
  if (s[Fusion::F5])
    call(sort_quant_launches(p, true), [&] { moe_sort_mxfp4_fused_emu(p, b); },
         [&] { LAYER_GPU(moe_sort_mxfp4_fused_launch(p, b, stream_)); });
  else
    call(5, [&] { moe_sort_mxfp4_chain_emu(p, b); }, [&] { LAYER_GPU(moe_sort_mxfp4_chain_launch(p, b, stream_)); });
}

void LayerStep::moe_stage2(const FusionSwitches& s) {
  MoeStage2Buffers b;
  b.sorted_token_ids = buffers_.ptr<std::int32_t>("sorted_ids");
  b.sorted_weights = buffers_.ptr<float>("sorted_w");
  b.sorted_expert_ids = buffers_.ptr<std::int32_t>("sorted_eids");
  b.num_valid_ids = buffers_.ptr<std::int32_t>("num_valid");
  b.a2q = buffers_.ptr<std::uint8_t>("a2q");
  b.a2_scales = buffers_.ptr<std::uint8_t>("a2_scales");
  b.w2 = buffers_.ptr<std::uint8_t>("w2");
  b.w2_scales = buffers_.ptr<std::uint8_t>("w2_s");
  b.shared = buffers_.ptr<std::uint16_t>("shared_out");
  b.y = buffers_.ptr<float>("y");
  b.out = buffers_.ptr<std::uint16_t>("moe_out");
  b.token_stage = buffers_.ptr<std::uint8_t>("token_stage");
  b.weight_stage = weight_stage_;
  MoeGemmParams p = moe_;
  p.shared = s[Fusion::F6] ? MoeSharedMode::fold : MoeSharedMode::chain;
  // Stage 2 is the down GEMM and the slot-ordered reduction; the chain adds the shared output in a third launch.
  call((s[Fusion::F6] ? 2 : 3) + token_stage_launches(p, false), [&] { moe_stage2_emu(p, b); },
       [&] { LAYER_GPU(moe_stage2_launch(p, b, stream_)); });
}

}  // namespace fb
