// One MoE layer of the scenario in serving order, per-rank shapes, as a pipeline of stages built on
// the families' typed launch functions (GPU, one stream) or their CPU emulations. Each fusion is a
// switch (layer/fusion_switches.hpp); a switch that is off runs that fusion's chain in place.
// layer/README.md has the data flow, the stage diagram and the launch counts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ablation_section.hpp"
#include "kernels/fp8_gemm/fp8_gemm.hpp"
#include "kernels/fp8_gemm_blockscale/fp8_blockscale.hpp"
#include "kernels/moe_gemm/moe_gemm.hpp"
#include "kernels/rmsnorm_fp8/rmsnorm_fp8.hpp"
#include "kernels/router/decode_router.hpp"
#include "kernels/router/router_swiglu.hpp"
#include "layer/fusion_switches.hpp"
#include "layer/layer_buffers.hpp"

namespace fb {

enum class OutputType { bf16, f32, i32 };

// A step output the checks compare between configurations.
struct StepOutput {
  std::string name;
  OutputType type;
  bool after_gate_up = false;  // computed from the shared gate_up output (moved by F8 within its bound)
  bool after_fold = false;     // the stage-2 result (moved by F6 within its bound)
};

class LayerStep {
 public:
  // Validates the shapes (InputError), allocates every tensor once and writes the weights and
  // inputs from `seed`.
  LayerStep(const AblationLayer& layer, LayerPhase phase, std::int64_t rows, Backend backend, void* stream,
            std::uint64_t seed);

  // Runs one step (CPU) or enqueues it on the stream (GPU: capturable in a graph).
  void run(const FusionSwitches& s);
  // The launches one step makes under `s` (the GPU path's count; on the CPU the same stages run).
  int launches(const FusionSwitches& s);
  void poison() { buffers_.poison(stream_); }
  const std::vector<StepOutput>& outputs() const { return outputs_; }
  std::vector<std::uint8_t> download(const std::string& name) const { return buffers_.download(name); }
  std::size_t allocated_bytes() const { return buffers_.total_bytes(); }
  LayerPhase phase() const { return phase_; }
  std::int64_t rows() const { return rows_; }

 private:
  template <class Emu, class Launch>
  void call(int launches, Emu&& emu, Launch&& launch);
  void allocate(std::uint64_t seed);
  // The stages, in serving order.
  void input_norm(const FusionSwitches& s);    // prefill: F1 (writes qkv's 1x128 fp8; F7 zeroes both accumulators)
  void qkv_gemm(const FusionSwitches& s);      // prefill: F7 off = memset first
  void o_proj_gemm(const FusionSwitches& s);   // prefill
  void post_norm(const FusionSwitches& s);     // F1: residual, bf16 out for the router, per-token fp8 for gate_up
  void decode_router(const FusionSwitches& s);  // <= 16 rows: F4 (router + sort), with F8 inside when both are on
  void shared_gate_up(const FusionSwitches& s);  // the general fp8 GEMM, or F8 where the router does not carry it
  void shared_swiglu(const FusionSwitches& s);   // <= 16 rows: F2
  void router_swiglu(const FusionSwitches& s);   // > 16 rows: F3 (with F2 inside) / router + F2
  void shared_down(const FusionSwitches& s);
  void sort_quant_stage1(const FusionSwitches& s);  // F5 past 16 rows; after F4 only the quant
  void moe_stage1(const FusionSwitches& s);
  void sort_quant_stage2(const FusionSwitches& s);  // F5
  void moe_stage2(const FusionSwitches& s);         // F6
  // The MoE GEMM engine's token prologue (and its weight prologue, where it stages the weights): one launch
  // more each where it runs (GPU, prefill sizes, sm_90a).
  int token_stage_launches(const MoeGemmParams& p, bool stage1) const;
  std::uint8_t* weight_stage_ = nullptr;  // the engine's staged weight rows, where allocate() gave them

  bool small() const { return rows_ <= kDecodeRouterMaxRows; }
  // F8's gate_up rides in the decode router's launch (F4's other blocks, or the chain's own F8
  // launch): F8 on at <= 16 rows, and e4m3fn, the one flavour the one launch instantiates.
  bool f8_in_router(const FusionSwitches& s) const { return small() && s[Fusion::F8] && f8_router_ok_; }
  Fp8GemmBuffers gate_up_buffers();
  RouterBuffers router_buffers();
  MoeSortMxfp4Buffers sort_buffers(MoeStage stage);

  AblationLayer layer_;
  LayerPhase phase_;
  std::int64_t rows_;
  Backend backend_;
  void* stream_;
  Fp8Flavour flavour_;
  LayerBuffers buffers_;
  std::vector<StepOutput> outputs_;
  bool counting_ = false;
  bool f8_router_ok_ = false;  // the layer's fp8 flavour is the one the decode router's F8 blocks take
  int counted_ = 0;

  RmsnormFp8Params in_norm_, post_norm_;
  Fp8BlockscaleParams qkv_, o_proj_;
  RouterParams router_;
  DecodeRouterParams decode_router_;
  Fp8GemmParams gate_up_, down_;
  SwigluFp8Params swiglu_;
  RouterSwigluParams router_swiglu_;
  MoeGemmParams moe_;
  MoeSortMxfp4Params sort1_, sort2_;
};

}  // namespace fb
