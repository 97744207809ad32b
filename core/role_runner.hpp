// Runs one case instance's roles on a backend: uploads inputs once, poisons outputs before each
// run, launches, and brings outputs back. Shared by verify (correctness) and bench (timing), so
// both exercise exactly the same path.
#pragma once

#include <vector>

#include "core/buffers.hpp"
#include "core/kernel_case.hpp"

namespace fb {

class RoleRunner {
 public:
  RoleRunner(const CaseInstance& instance, Backend backend, void* stream);

  // Adds one set of inputs (bench rotates among several to defeat the cache). Returns its index.
  std::size_t add_input_set(const HostTensors& inputs);

  void poison_outputs(Poison pattern);
  // Launches `role` on input set `set` without waiting (GPU) or runs it to completion (CPU).
  void launch(Role role, std::size_t set = 0);
  void synchronize();
  // Poison, run, wait, download.
  HostTensors run(Role role, Poison poison, std::size_t set = 0);

  Backend backend() const { return backend_; }
  void* stream() const { return stream_; }

 private:
  const CaseInstance& instance_;
  Backend backend_;
  void* stream_;
  std::vector<BufferSet> inputs_;
  BufferSet outputs_;
  BufferSet workspace_fused_;
  BufferSet workspace_chain_;
};

}  // namespace fb
