// The largest GEMM point the CPU backend runs: every variant's emulation runs over the whole point
// there (only the GPU run's emulation takes a row subset), so a 32768-row prefill GEMM (about 3e11
// multiply-adds per variant) would take hours. Past the limit the point is a skip with this reason
// on the CPU backend; the GPU backend checks it on a row subset.
#pragma once

#include <cstdint>
#include <string>

#include <fmt/format.h>

namespace fb {

inline constexpr double kFp8GemmCpuMaxMultiplyAdds = 0x1.0p32;

inline std::string fp8_gemm_cpu_skip_reason(std::int64_t m, std::int64_t n, std::int64_t k) {
  const double mac = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  if (mac <= kFp8GemmCpuMaxMultiplyAdds) return {};
  return fmt::format("the CPU emulation of {} x {} x {} ({:.2g} multiply-adds per variant) is past the CPU backend's "
                     "limit of 2^32; run it on a GPU (its checks take a row subset there)",
                     m, n, k, mac);
}

}  // namespace fb
