#include "kernels/fusions.hpp"

namespace fb {

namespace {
constexpr FusionInfo kSeries[] = {
    {"F1", "Gemma RMSNorm (+residual) writing the next GEMM's fp8", "RMSNorm (bf16) -> fp8 quant", "bitwise"},
    {"F2", "SwiGLU writing the down projection's fp8", "SwiGLU (bf16) -> fp8 quant", "bitwise"},
    {"F3", "router GEMV partials + shared-expert fp8 SwiGLU in one launch; gate sums partials",
     "router GEMV + reduce -> gate", "bitwise"},
    {"F4", "one-launch decode router (1-16 tokens): GEMV + gate + MoE sort", "router GEMV -> gate -> sort",
     "bitwise"},
    {"F5", "MoE sort + MXFP4 quant of stage-1 activations", "sort -> MXFP4 quant -> scale sort", "bitwise"},
    {"F6", "shared-expert output folded into the MoE stage-2 reduction", "stage-2 reduction, then add shared",
     "rel L2 <= 1e-2"},
    {"F7", "block-fp8 split-K GEMM into a pre-zeroed output", "memset, then split-K GEMM", "bitwise"},
    {"F8", "small-M per-token fp8 GEMM (1-16 rows, 1536 x 6144)", "general per-token x per-channel fp8 GEMM",
     "<= 1 bf16 ulp"},
    {"F9", "fp8 quant writing exactly the per-token / 1x128 bytes and scales", "standalone quant kernels",
     "bitwise"},
};
}  // namespace

std::span<const FusionInfo> fusion_series() { return kSeries; }

}  // namespace fb
