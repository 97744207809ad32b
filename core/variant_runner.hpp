// Runs one case instance's variants on a backend: uploads inputs (weights once), poisons outputs
// before each run, launches, and brings outputs back. Shared by verify (correctness) and bench
// (timing), so both exercise exactly the same path.
#pragma once

#include <vector>

#include "core/buffers.hpp"
#include "core/kernel_case.hpp"

namespace fb {

class VariantRunner {
 public:
  VariantRunner(const CaseInstance& instance, std::size_t variants, Backend backend, void* stream);

  // Adds one set of inputs (bench rotates among several to defeat the cache). The first set must
  // hold the prepared weights; later sets take only their activations from `inputs` and get a
  // device copy of the first set's weights (the same bytes, prepared once). Returns its index.
  std::size_t add_input_set(const HostTensors& inputs);

  void poison_outputs(Poison pattern);
  // Launches `variant` on input set `set` without waiting (GPU) or runs it to completion (CPU).
  void launch(VariantId variant, std::size_t set = 0);
  void synchronize();
  // Poison, run, wait, download.
  HostTensors run(VariantId variant, Poison poison, std::size_t set = 0);

  std::size_t input_sets() const { return inputs_.size(); }
  Backend backend() const { return backend_; }
  void* stream() const { return stream_; }

 private:
  const CaseInstance& instance_;
  Backend backend_;
  void* stream_;
  std::vector<TensorSpec> input_specs_;
  std::vector<BufferSet> inputs_;
  BufferSet outputs_;
  std::vector<BufferSet> workspaces_;
};

// Host tensors for a later input set: weight tensors get no storage (generate() must not touch them).
HostTensors allocate_activations(const std::vector<TensorSpec>& specs);

}  // namespace fb
