#include "layer/layer_weights.hpp"

#include <cstring>

#include "core/inputs.hpp"
#include "reference/codecs/bf16.hpp"

namespace fb {
namespace {

double normal(std::uint64_t seed, std::uint64_t stream, std::int64_t i) {
  return draw(Distribution::normal, seed, stream, static_cast<std::uint64_t>(i), 0);
}

}  // namespace

Bytes random_bf16_normal(std::int64_t count, double sigma, std::uint64_t seed, std::uint64_t stream) {
  Bytes out(static_cast<std::size_t>(count) * 2);
  auto* v = reinterpret_cast<std::uint16_t*>(out.data());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < count; ++i) v[i] = bf16_from_float(static_cast<float>(sigma * normal(seed, stream, i)));
  return out;
}

Bytes random_f32_normal(std::int64_t count, double sigma, std::uint64_t seed, std::uint64_t stream) {
  Bytes out(static_cast<std::size_t>(count) * 4);
  auto* v = reinterpret_cast<float*>(out.data());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < count; ++i) v[i] = static_cast<float>(sigma * normal(seed, stream, i));
  return out;
}

Bytes random_f32_scales(std::int64_t count, double base, std::uint64_t seed, std::uint64_t stream) {
  Bytes out(static_cast<std::size_t>(count) * 4);
  auto* v = reinterpret_cast<float*>(out.data());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < count; ++i)
    v[i] = static_cast<float>(base * (0.75 + 0.5 * uniform01(seed, stream, static_cast<std::uint64_t>(i))));
  return out;
}

Bytes random_fp8(std::int64_t count, Fp8Flavour flavour, std::uint64_t seed, std::uint64_t stream) {
  Bytes out(static_cast<std::size_t>(count));
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < count; ++i) out[i] = fp8_from_float(static_cast<float>(normal(seed, stream, i)), flavour);
  return out;
}

Bytes random_e2m1_bytes(std::int64_t count, std::uint64_t seed, std::uint64_t stream) {
  Bytes out(static_cast<std::size_t>(count));
  const std::int64_t words = count / 8;
  const std::uint64_t base = mix64(seed ^ mix64(stream + 0x9E3779B97F4A7C15ull));
#pragma omp parallel for schedule(static)
  for (std::int64_t w = 0; w < words; ++w) {
    const std::uint64_t r = mix64(base + static_cast<std::uint64_t>(w));
    std::memcpy(out.data() + w * 8, &r, 8);
  }
  for (std::int64_t i = words * 8; i < count; ++i) out[i] = static_cast<std::uint8_t>(mix64(base + i) & 0xFF);
  return out;
}

Bytes random_e8m0(std::int64_t count, int center, std::uint64_t seed, std::uint64_t stream) {
  Bytes out(static_cast<std::size_t>(count));
  const std::uint64_t base = mix64(seed ^ mix64(stream + 0xD1B54A32D192ED03ull));
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < count; ++i)
    out[i] = static_cast<std::uint8_t>(center - 1 + static_cast<int>(mix64(base + static_cast<std::uint64_t>(i)) % 3));
  return out;
}

}  // namespace fb
