// GPU tests skip (never fail) where no device can be opened, e.g. in CI. A macro because
// GTEST_SKIP() returns from the function that expands it.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "core/device.hpp"
#include "core/errors.hpp"

namespace fb::testing {

// Why no GPU can be used here; empty when one can.
inline std::string gpu_missing_reason() {
  try {
    gpu::open_device();
  } catch (const DeviceError& e) {
    return e.what();
  }
  return {};
}

}  // namespace fb::testing

#define FB_SKIP_WITHOUT_GPU()                                                              \
  do {                                                                                     \
    if (const std::string why = ::fb::testing::gpu_missing_reason(); !why.empty())         \
      GTEST_SKIP() << "no GPU: " << why;                                                   \
  } while (false)
