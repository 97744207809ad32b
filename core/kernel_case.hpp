// The kernel case: what a family registers, and what the runners verify and time.
//
// A case is data (name, family, fusion id, claim, axes) plus a factory. For one point of its axes
// the factory returns a CaseInstance, which knows the tensors, makes seeded inputs, runs either role
// (fused or chain) on either backend, checks outputs against its fp64 reference and counts the bytes
// each role must move. Runners, CLI and reports only ever talk to this interface, so a new family
// touches none of them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/axes.hpp"
#include "core/tensor.hpp"
#include "reference/metrics/bitwise_compare.hpp"
#include "reference/metrics/bound.hpp"

namespace fb {

enum class Role { fused, chain };
const char* role_name(Role r);

enum class Backend { cpu, gpu };
const char* backend_name(Backend b);

// What a fusion promises about fused against chain.
struct Claim {
  enum class Kind { bitwise, bound };
  Kind kind = Kind::bitwise;
  Bound bound;          // for Kind::bound
  std::string text() const;
};

// Bytes a role must read and write at least (each input read once, each output written once).
struct Traffic {
  std::int64_t read_bytes = 0;
  std::int64_t write_bytes = 0;
  std::int64_t total() const { return read_bytes + write_bytes; }
};

// Where a role runs: host memory and the CPU emulation, or device memory and a stream.
struct ExecContext {
  Backend backend = Backend::cpu;
  void* stream = nullptr;  // hipStream_t / cudaStream_t on the GPU backend
};

// Pointers to a role's tensors, in the order the instance declared them.
struct TensorPointers {
  std::vector<void*> items;
  template <class T>
  T* get(std::size_t i) const {
    return static_cast<T*>(items.at(i));
  }
};

class CaseInstance {
 public:
  virtual ~CaseInstance() = default;

  virtual std::vector<TensorSpec> inputs() const = 0;
  virtual std::vector<TensorSpec> outputs() const = 0;
  virtual std::vector<TensorSpec> workspace(Role) const { return {}; }

  // Fill the inputs (already allocated from inputs()) from the point's distribution.
  virtual void generate(std::uint64_t seed, HostTensors& inputs) const = 0;
  virtual std::string distribution_text() const = 0;

  virtual void run(Role role, const ExecContext& ctx, const TensorPointers& in, const TensorPointers& out,
                   const TensorPointers& workspace) const = 0;

  virtual std::vector<Fp64Check> check_fp64(const HostTensors& inputs, const HostTensors& outputs) const = 0;

  virtual Traffic traffic(Role role) const = 0;

  // A reason not to run this point on `backend` (empty: run it). Recorded as a skip, never a pass:
  // a 2^31-element shape that only the GPU holds, say.
  virtual std::string skip_reason(Backend /*backend*/) const { return {}; }

  // The elements of an output that carry the claim (empty: all). MoE sort compares only the
  // entries below num_valid_ids, for instance.
  virtual std::vector<ElementRange> compared_region(std::size_t /*output*/, const HostTensors& /*outputs*/) const {
    return {};
  }
};

struct KernelCase {
  std::string name;        // "<family>/<variant>", e.g. "fp8_quant/per_1x128"
  std::string family;      // "fp8_quant"
  std::string fusion;      // "F9"
  std::string summary;     // one line: what is fused
  std::string spec;        // where its numeric contract is written
  Claim claim;
  bool deterministic = true;
  std::vector<AxisSpec> axes;
  // Builds the instance for one point; throws InputError for an impossible shape.
  std::function<std::unique_ptr<CaseInstance>(const Point&)> make;

  const AxisSpec* axis(const std::string& name) const;
};

}  // namespace fb
