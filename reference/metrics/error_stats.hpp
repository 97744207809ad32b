// Error of an output against its fp64 reference: max abs, max rel, RMSE, relative L2, ulp distance
// (max and p99) and the NaN / inf counts. NaN is never an error of size zero: it is counted, and a
// check with any NaN fails whatever its bound.
#pragma once

#include <array>
#include <cstdint>

namespace fb {

struct ErrorStats {
  std::int64_t elements = 0;
  std::int64_t nan = 0;            // got or reference NaN
  std::int64_t inf = 0;            // got infinite where the reference is finite, or the reverse
  double abs_max = 0.0;
  double rel_max = 0.0;            // over elements whose reference is non-zero
  double rmse = 0.0;
  double rel_l2 = 0.0;             // ||got - ref|| / ||ref|| (0 when both are zero)
  bool has_ulp = false;
  std::int64_t ulp_max = 0;
  std::int64_t ulp_p99 = 0;
  std::int64_t worst_index = -1;   // element with the largest ulp (or abs) error
};

class ErrorAccumulator {
 public:
  // One element. `ulp` < 0 means "no ulp distance for this element".
  void add(std::int64_t index, double got, double ref, std::int64_t ulp = -1);
  void merge(const ErrorAccumulator& other);
  ErrorStats finish() const;

 private:
  static constexpr int kUlpBuckets = 256;  // exact counts for 0..255, one bucket above
  ErrorStats stats_;
  double sum_sq_error_ = 0.0;
  double sum_sq_ref_ = 0.0;
  double worst_key_ = -1.0;
  std::array<std::int64_t, kUlpBuckets + 1> ulp_histogram_{};
};

}  // namespace fb
