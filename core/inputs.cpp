#include "core/inputs.hpp"

#include "core/errors.hpp"
#include "reference/codecs/bf16.hpp"

namespace fb {

namespace {
struct DistributionName {
  Distribution d;
  const char* name;
};
constexpr DistributionName kNames[] = {{Distribution::normal, "normal"},
                                       {Distribution::uniform, "uniform"},
                                       {Distribution::outliers, "outliers"},
                                       {Distribution::edge, "edge"},
                                       {Distribution::nan, "nan"}};
}  // namespace

Distribution distribution_from_name(const std::string& name) {
  for (const auto& n : kNames)
    if (name == n.name) return n.d;
  throw InputError("unknown input distribution '" + name + "'");
}

const char* distribution_name(Distribution d) { return kNames[static_cast<int>(d)].name; }

std::vector<std::string> distribution_names(bool with_edge) {
  std::vector<std::string> v;
  for (const auto& n : kNames)
    if (with_edge || n.d != Distribution::edge) v.emplace_back(n.name);
  return v;
}

std::string distribution_text(Distribution d) {
  switch (d) {
    case Distribution::normal: return "normal: Irwin-Hall(4) sum scaled to sigma 1";
    case Distribution::uniform: return "uniform in [-1, 1)";
    case Distribution::outliers: return "normal, 1 column in 64 scaled by 32 (outlier channels)";
    case Distribution::edge: return "normal plus family edge rows (zeros, saturation, ties, subnormals)";
    case Distribution::nan: return "normal with one NaN (must fail)";
  }
  return "";
}

std::uint64_t mix64(std::uint64_t x) {
  // splitmix64 finaliser
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

namespace {
std::uint64_t element_hash(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  return mix64(mix64(seed ^ mix64(stream + 0x632BE59BD9B4E019ull)) ^ index);
}

double irwin_hall4(std::uint64_t h) {
  // Four 16-bit uniforms; their sum minus 2 has variance 4/12, so scale by sqrt(3).
  double sum = 0.0;
  for (int i = 0; i < 4; ++i) sum += (static_cast<double>((h >> (16 * i)) & 0xFFFFu) + 0.5) / 65536.0;
  return (sum - 2.0) * 1.7320508075688772;
}
}  // namespace

double uniform01(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  return static_cast<double>(element_hash(seed, stream, index) >> 11) * 0x1.0p-53;
}

double draw(Distribution d, std::uint64_t seed, std::uint64_t stream, std::uint64_t index, std::int64_t column) {
  const std::uint64_t h = element_hash(seed, stream, index);
  switch (d) {
    case Distribution::uniform: return static_cast<double>(h >> 11) * 0x1.0p-52 - 1.0;
    case Distribution::outliers: {
      const bool outlier_column = (mix64(seed ^ static_cast<std::uint64_t>(column)) & 63u) == 0u;
      return irwin_hall4(h) * (outlier_column ? 32.0 : 1.0);
    }
    default: return irwin_hall4(h);
  }
}

void fill_tensor(HostTensor& t, Distribution d, std::uint64_t seed, std::uint64_t stream, double scale) {
  const std::int64_t n = t.spec.elements();
  const std::int64_t cols = t.spec.dims.empty() ? 1 : t.spec.dims.back().extent;
  if (t.spec.dtype == DType::bf16) {
    auto* p = t.data<std::uint16_t>();
#pragma omp parallel for schedule(static) if (n >= (1 << 16))
    for (std::int64_t i = 0; i < n; ++i)
      p[i] = bf16_from_float(static_cast<float>(scale * draw(d, seed, stream, static_cast<std::uint64_t>(i), i % cols)));
  } else if (t.spec.dtype == DType::f32) {
    auto* p = t.data<float>();
#pragma omp parallel for schedule(static) if (n >= (1 << 16))
    for (std::int64_t i = 0; i < n; ++i)
      p[i] = static_cast<float>(scale * draw(d, seed, stream, static_cast<std::uint64_t>(i), i % cols));
  } else {
    throw InputError("fill_tensor: no generator for dtype " + std::string(dtype_name(t.spec.dtype)));
  }
}

}  // namespace fb
