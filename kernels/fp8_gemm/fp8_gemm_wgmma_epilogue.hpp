// How the wgmma GEMMs' epilogues move C to memory (host code: the launchers and the cases call the
// same functions, so a report's launch_configs names what ran):
//   staged     the warpgroup writes its bf16 tile into shared memory and the TMA copies it to C
//              while the warpgroup goes on (fp8_gemm_wgmma_store.hpp); needs cols % 8 == 0 and a
//              16-byte aligned C (every buffer the harness allocates);
//   registers  each thread stores its pairs of columns from the registers (until run 75).
// The bits are the same either way. The knob FUSEBENCH_WGMMA_EPILOGUE (read per launch, for A/B
// runs): unset or empty takes staged wherever it fits, "registers" the old path, "staged" the
// default; any other value is an InputError naming the variable.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/knob_choice.hpp"

namespace fb {

inline constexpr const char* kWgmmaEpilogueVariable = "FUSEBENCH_WGMMA_EPILOGUE";

inline bool wgmma_epilogue_staged(std::int64_t cols, const char* asked) {
  if (knob_choice(kWgmmaEpilogueVariable, asked, "staged", "registers") == "registers") return false;
  return cols % 8 == 0;
}
// The epilogue the launchers take: the knob's, else staged where the columns allow (the launchers
// also check C's alignment).
inline bool wgmma_launch_epilogue_staged(std::int64_t cols) {
  return wgmma_epilogue_staged(cols, std::getenv(kWgmmaEpilogueVariable));
}
inline std::string wgmma_epilogue_text(bool staged) { return staged ? "staged epilogue" : "register epilogue"; }

}  // namespace fb
