// The fusions of the MiniMax-M3.1-Flash MoE kernel series (docs/model.md): what each fuses,
// the chain it replaces and what it claims. `fusebench list` shows which have cases in this build.
#pragma once

#include <span>

namespace fb {

struct FusionInfo {
  const char* id;
  const char* fused;
  const char* chain;
  const char* claim;
};

std::span<const FusionInfo> fusion_series();

}  // namespace fb
