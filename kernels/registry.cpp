// Every family of this build, registered explicitly (no static registrars: they vanish from static
// libraries). A new family adds one declaration and one call here.
#include "core/registry.hpp"

namespace fb {

void register_fp8_quant(Registry& registry);
void register_moe_gemm(Registry& registry);
void register_moe_sort_mxfp4(Registry& registry);
void register_rmsnorm_fp8(Registry& registry);
void register_swiglu_fp8(Registry& registry);
void register_fp8_gemm(Registry& registry);
void register_fp8_gemm_blockscale(Registry& registry);
void register_router(Registry& registry);
void register_allreduce(Registry& registry);

void register_all_families(Registry& registry) {
  register_fp8_quant(registry);
  register_moe_sort_mxfp4(registry);
  register_rmsnorm_fp8(registry);
  register_swiglu_fp8(registry);
  register_moe_gemm(registry);
  register_fp8_gemm(registry);
  register_fp8_gemm_blockscale(registry);
  register_router(registry);
  register_allreduce(registry);
}

}  // namespace fb
