// The launch epoch of the split-K turnstile (fp8_blockscale_math.hpp, blockscale_ticket): a
// process-wide counter, 24 bits, skipping the two epochs that the harness's poison bytes spell
// (0xFFFFFF, 0x5A5A5A), so a poisoned ticket never reads as a turn of this launch.
#pragma once

#include <atomic>
#include <cstdint>

namespace fb {

inline std::uint32_t next_blockscale_epoch() {
  static std::atomic<std::uint32_t> counter{0};
  for (;;) {
    const std::uint32_t e = (counter.fetch_add(1) + 1) & 0xFFFFFFu;
    if (e != 0xFFFFFFu && e != 0x5A5A5Au) return e;
  }
}

}  // namespace fb
