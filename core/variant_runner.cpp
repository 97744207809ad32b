#include "core/variant_runner.hpp"

#include "core/device.hpp"

namespace fb {

HostTensors allocate_activations(const std::vector<TensorSpec>& specs) {
  HostTensors t;
  t.reserve(specs.size());
  for (const TensorSpec& s : specs) {
    TensorSpec storage = s;
    if (s.weight) storage.dims = {{"none", 0}};
    t.emplace_back(storage);
    t.back().spec = s;  // keep the declared shape for reports; bytes stay empty
  }
  return t;
}

VariantRunner::VariantRunner(const CaseInstance& instance, std::size_t variants, Backend backend, void* stream)
    : instance_(instance),
      backend_(backend),
      stream_(stream),
      input_specs_(instance.inputs()),
      outputs_(backend, instance.outputs()) {
  workspaces_.reserve(variants);
  for (VariantId v = 0; v < variants; ++v) workspaces_.emplace_back(backend, instance.workspace(v));
}

std::size_t VariantRunner::add_input_set(const HostTensors& inputs) {
  const bool first = inputs_.empty();
  inputs_.emplace_back(backend_, input_specs_);
  BufferSet& set = inputs_.back();
  for (std::size_t i = 0; i < input_specs_.size(); ++i) {
    if (first || !input_specs_[i].weight) {
      set[i].upload(inputs[i]);
    } else {
      set[i].copy_from(inputs_.front()[i], stream_);
    }
  }
  if (backend_ == Backend::gpu) gpu::synchronize(stream_);
  return inputs_.size() - 1;
}

void VariantRunner::poison_outputs(Poison pattern) { outputs_.poison(pattern, stream_); }

void VariantRunner::launch(VariantId variant, std::size_t set) {
  instance_.run(variant, ExecContext{backend_, stream_}, inputs_.at(set).pointers(), outputs_.pointers(),
                workspaces_.at(variant).pointers());
}

void VariantRunner::synchronize() {
  if (backend_ == Backend::gpu) gpu::synchronize(stream_);
}

HostTensors VariantRunner::run(VariantId variant, Poison poison, std::size_t set) {
  poison_outputs(poison);
  launch(variant, set);
  synchronize();
  HostTensors out = allocate_host(instance_.outputs());
  outputs_.download(out);
  return out;
}

}  // namespace fb
