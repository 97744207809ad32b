// Tensor sizes are checked arithmetic: a shape whose element count or byte size passes int64 is an
// InputError naming the tensor, never a wrapped small number (which once let a 2^62-row point
// segfault or "pass" on buffers that overflowed to nothing).
#include <gtest/gtest.h>

#include <functional>

#include "core/errors.hpp"
#include "core/host_memory.hpp"
#include "core/tensor.hpp"

namespace fb {
namespace {

TensorSpec spec(std::string name, DType dtype, std::int64_t rows, std::int64_t cols) {
  return TensorSpec{std::move(name), dtype, {{"M", rows}, {"K", cols}}};
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(Tensor, SizesOfOrdinaryShapes) {
  const TensorSpec x = spec("x", DType::bf16, 24, 6144);
  EXPECT_EQ(x.elements(), 24 * 6144);
  EXPECT_EQ(x.bytes(), 24u * 6144u * 2u);
  EXPECT_EQ(checked_bytes({x, spec("q", DType::u8, 24, 6144)}), 24 * 6144 * 3);
  EXPECT_EQ(checked_bytes({}), 0);
}

TEST(Tensor, ElementCountPastInt64IsAnInputError) {
  const TensorSpec x = spec("x", DType::bf16, std::int64_t{1} << 62, 128);
  EXPECT_EQ(error_of([&] { (void)x.elements(); }),
            "tensor x bf16[M=4611686018427387904][K=128]: the element count passes 2^63");
  EXPECT_THROW((void)x.bytes(), InputError);
  EXPECT_THROW(allocate_host({x}), InputError);
}

TEST(Tensor, ByteSizePastInt64IsAnInputError) {
  const TensorSpec x = spec("x", DType::bf16, std::int64_t{1} << 31, std::int64_t{1} << 31);
  EXPECT_EQ(x.elements(), std::int64_t{1} << 62);  // fits...
  EXPECT_EQ(error_of([&] { (void)x.bytes(); }),    // ...but not in bytes
            "tensor x bf16[M=2147483648][K=2147483648]: its size in bytes passes 2^63");
}

TEST(Tensor, TotalPastInt64IsAnInputError) {
  const TensorSpec quarter = spec("h", DType::u8, std::int64_t{1} << 31, std::int64_t{1} << 30);  // 2^61 bytes
  EXPECT_EQ(checked_bytes({quarter, quarter, quarter}), 3 * (std::int64_t{1} << 61));
  EXPECT_NE(error_of([&] { (void)checked_bytes({quarter, quarter, quarter, quarter}); })
                .find("total size in bytes passes 2^63"),
            std::string::npos);
}

TEST(Tensor, NegativeExtentIsAnInputError) {
  EXPECT_NE(error_of([&] { (void)spec("x", DType::f32, -1, 4).elements(); }).find("is negative"), std::string::npos);
}

TEST(HostMemory, LinuxReportsSomeAvailableMemory) {
  const auto bytes = available_host_memory_bytes();
  ASSERT_TRUE(bytes.has_value());
  EXPECT_GT(*bytes, 0);
}

}  // namespace
}  // namespace fb
