// The eight fusions of the MoE layer step as named switches, and where each one applies.
// A switch that is off runs the fusion's unfused chain in place (layer/README.md has the table).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace fb {

enum class Fusion : int { F1 = 0, F2, F3, F4, F5, F6, F7, F8 };
inline constexpr int kFusionCount = 8;

enum class LayerPhase { decode, prefill };
const char* phase_name(LayerPhase phase);

const char* fusion_id(Fusion f);     // "F1"
const char* fusion_title(Fusion f);  // "Gemma RMSNorm -> fp8"
// Bitwise fusions leave every layer output bit-identical when toggled; F6 and F8 hold a bound.
bool fusion_bitwise(Fusion f);
std::vector<Fusion> all_fusions();
// "F3" or "f3" -> Fusion::F3; InputError naming the text otherwise.
Fusion parse_fusion(const std::string& text);

// Why the fusion has no switch at this point (empty: it applies). F4 and F8 are the <= 16-row
// kernels, F3 the router path past 16 rows, F7 the prefill GEMMs.
std::string fusion_not_applicable(Fusion f, LayerPhase phase, std::int64_t rows);

struct FusionSwitches {
  std::array<bool, kFusionCount> on{true, true, true, true, true, true, true, true};
  bool operator[](Fusion f) const { return on[static_cast<int>(f)]; }
  static FusionSwitches all(bool value) {
    FusionSwitches s;
    s.on.fill(value);
    return s;
  }
};

}  // namespace fb
