#include "layer/fusion_switches.hpp"

#include <cctype>

#include "core/errors.hpp"
#include "kernels/fp8_gemm/fp8_gemm.hpp"
#include "kernels/router/decode_router.hpp"

namespace fb {

const char* phase_name(LayerPhase phase) { return phase == LayerPhase::decode ? "decode" : "prefill"; }

const char* fusion_id(Fusion f) {
  static const char* ids[kFusionCount] = {"F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8"};
  return ids[static_cast<int>(f)];
}

const char* fusion_title(Fusion f) {
  switch (f) {
    case Fusion::F1: return "Gemma RMSNorm -> fp8";
    case Fusion::F2: return "SwiGLU -> fp8";
    case Fusion::F3: return "router partials + shared SwiGLU";
    case Fusion::F4: return "one-launch decode router";
    case Fusion::F5: return "MoE sort + MXFP4 quant";
    case Fusion::F6: return "shared-expert fold";
    case Fusion::F7: return "pre-zeroed split-K GEMM";
    case Fusion::F8: return "small-M shared gate_up";
  }
  return "?";
}

bool fusion_bitwise(Fusion f) { return f != Fusion::F6 && f != Fusion::F8; }

std::vector<Fusion> all_fusions() {
  std::vector<Fusion> v;
  for (int i = 0; i < kFusionCount; ++i) v.push_back(static_cast<Fusion>(i));
  return v;
}

Fusion parse_fusion(const std::string& text) {
  if (text.size() == 2 && (text[0] == 'F' || text[0] == 'f') && text[1] >= '1' && text[1] <= '8')
    return static_cast<Fusion>(text[1] - '1');
  throw InputError("--fusions: '" + text.substr(0, 40) + "' is not a fusion (F1 .. F8)");
}

std::string fusion_not_applicable(Fusion f, LayerPhase phase, std::int64_t rows) {
  switch (f) {
    case Fusion::F3:
      if (rows <= kDecodeRouterMaxRows) return "16 rows or fewer: the one-launch decode router (F4) routes";
      return {};
    case Fusion::F4:
      if (rows > kDecodeRouterMaxRows) return "more than 16 rows: the router GEMV + fused gate routes";
      return {};
    case Fusion::F7:
      if (phase == LayerPhase::decode) return "decode: the qkv and o_proj GEMMs run in prefill only";
      return {};
    case Fusion::F8:
      if (rows > kFp8GemmSmallMMaxRows) return "more than 16 rows: the general fp8 GEMM runs gate_up";
      return {};
    default:
      return {};
  }
}

}  // namespace fb
