#include "core/role_runner.hpp"

#include "core/device.hpp"

namespace fb {

RoleRunner::RoleRunner(const CaseInstance& instance, Backend backend, void* stream)
    : instance_(instance),
      backend_(backend),
      stream_(stream),
      outputs_(backend, instance.outputs()),
      workspace_fused_(backend, instance.workspace(Role::fused)),
      workspace_chain_(backend, instance.workspace(Role::chain)) {}

std::size_t RoleRunner::add_input_set(const HostTensors& inputs) {
  inputs_.emplace_back(backend_, instance_.inputs());
  inputs_.back().upload(inputs);
  return inputs_.size() - 1;
}

void RoleRunner::poison_outputs(Poison pattern) { outputs_.poison(pattern, stream_); }

void RoleRunner::launch(Role role, std::size_t set) {
  BufferSet& workspace = role == Role::fused ? workspace_fused_ : workspace_chain_;
  instance_.run(role, ExecContext{backend_, stream_}, inputs_.at(set).pointers(), outputs_.pointers(),
                workspace.pointers());
}

void RoleRunner::synchronize() {
  if (backend_ == Backend::gpu) gpu::synchronize(stream_);
}

HostTensors RoleRunner::run(Role role, Poison poison, std::size_t set) {
  poison_outputs(poison);
  launch(role, set);
  synchronize();
  HostTensors out = allocate_host(instance_.outputs());
  outputs_.download(out);
  return out;
}

}  // namespace fb
