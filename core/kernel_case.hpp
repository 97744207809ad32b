// The kernel case: what a family registers, and what the runners verify and time.
//
// A case is data (name, family, fusion id, axes) plus its variants, the claims between them, and a
// factory. A variant is one way to compute the case's outputs: the fused kernel, the unfused chain
// it replaces, a memset-free launch, a small-M kernel, a vendor library. For one point of its axes
// the factory returns a CaseInstance, which knows the tensors, makes seeded inputs (and prepared
// weights), runs any variant on either backend, checks outputs against its fp64 reference and
// counts the work each variant must do. Runners, CLI and reports only ever talk to this interface,
// so a new family touches none of them (docs/adding-a-family.md).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/axes.hpp"
#include "core/check_result.hpp"
#include "core/tensor.hpp"
#include "reference/metrics/bitwise_compare.hpp"
#include "reference/metrics/bound.hpp"

namespace fb {

enum class Backend { cpu, gpu };
const char* backend_name(Backend b);

// What one set of outputs promises about another: the same bytes, or a named derived bound.
struct Claim {
  enum class Kind { bitwise, bound };
  Kind kind = Kind::bitwise;
  Bound bound;  // for Kind::bound
  std::string text() const;
  static Claim bitwise() { return {}; }
  static Claim within(Bound b) { return {Kind::bound, std::move(b)}; }
};

// The least work a variant must do: each input read once, each output written once, and the
// arithmetic it cannot avoid (2*M*N*K for a GEMM; 0 for a memory-bound kernel).
struct Work {
  std::int64_t read_bytes = 0;
  std::int64_t write_bytes = 0;
  double flops = 0.0;
  std::int64_t bytes() const { return read_bytes + write_bytes; }
};

// Where a variant runs: host memory and the CPU emulation, or device memory and a stream.
struct ExecContext {
  Backend backend = Backend::cpu;
  void* stream = nullptr;  // hipStream_t / cudaStream_t on the GPU backend
};

// Pointers to a variant's tensors, in the order the instance declared them.
struct TensorPointers {
  std::vector<void*> items;
  template <class T>
  T* get(std::size_t i) const {
    return static_cast<T*>(items.at(i));
  }
};

// Index of a variant in KernelCase::variants.
using VariantId = std::size_t;

// One way to compute the case's outputs.
struct VariantSpec {
  std::string name;              // "fused", "chain", "memset", "prezeroed", "small_m", "exact", "vendor"...
  std::string summary;           // one line: what runs
  int launches = 1;              // kernel launches (memsets included) one call makes on the GPU
  bool deterministic = true;     // same bytes on every run on one device (checked: repeat, bitwise)
  // This variant's GPU outputs against its CPU emulation: bitwise (deterministic kernels in a
  // written IEEE order), or a derived bound (matrix units whose accumulation the CPU cannot follow;
  // `emulation_note` says why). A variant with no emulation (a vendor library) sets has_emulation
  // false: it is checked against fp64 and its pair claims only.
  Claim emulation;
  std::string emulation_note;
  bool has_emulation = true;
  // The outputs this variant writes; empty: every output. One that writes fewer (a vendor library
  // or the block-scale GEMM's `direct` kernel writing C without the split-K buffer) is checked on
  // those alone: emulation, repeat, unwritten and fingerprints skip the rest, and its pairs may
  // name only outputs both sides write (the registry test holds every case to that).
  std::vector<std::string> writes = {};
  bool writes_output(const std::string& output) const;
};

// A claim between two variants, checked on every verified point: `variant` against `reference`,
// on the named outputs (empty: every output). Bench reports reference time / variant time for it.
struct PairClaim {
  std::string variant;
  std::string reference;
  Claim claim;
  std::vector<std::string> outputs;
};

// The part of a point that the CPU checks (emulation, fp64) cover when the whole point would cost
// more than the run's check budget: a seeded subset of the case's check units (output rows; for
// MoE, experts and their rows). Variants are still compared with each other over whole outputs.
struct CheckSubset {
  bool full = true;                 // every unit (the rest of the fields unused)
  std::string unit = "rows";        // what a unit is, for the report
  std::int64_t total = 0;           // units in the point
  std::uint64_t seed = 0;
  std::vector<std::int64_t> units;  // ascending, the units checked
  bool covers(std::int64_t unit) const;
};

class CaseInstance {
 public:
  virtual ~CaseInstance() = default;

  // Inputs: tensors marked `weight` (TensorSpec::weight) are prepared once per point by
  // prepare_weights() (quantized, re-laid-out, scales computed; untimed) and shared by every
  // variant, input set and sample; the others are activations, made by generate() for each set.
  virtual std::vector<TensorSpec> inputs() const = 0;
  virtual std::vector<TensorSpec> outputs() const = 0;
  virtual std::vector<TensorSpec> workspace(VariantId) const { return {}; }

  // Fill the activation inputs (already allocated from inputs()) from the point's distribution.
  virtual void generate(std::uint64_t seed, HostTensors& inputs) const = 0;
  // Fill the weight inputs; runs once per point, before generate(), on input set 0 only.
  virtual void prepare_weights(std::uint64_t /*seed*/, HostTensors& /*inputs*/) const {}
  virtual std::string distribution_text() const = 0;

  virtual void run(VariantId variant, const ExecContext& ctx, const TensorPointers& in, const TensorPointers& out,
                   const TensorPointers& workspace) const = 0;

  // fp64 checks of one variant's outputs. With a partial subset, only its units of `outputs` hold
  // results (the rest is unspecified): check those alone.
  virtual std::vector<Fp64Check> check_fp64(const HostTensors& inputs, const HostTensors& outputs,
                                            const CheckSubset& subset) const = 0;
  // The same for a case whose variants round differently enough to need bounds of their own (the
  // MoE GEMMs' fast variant); the runner calls this, and by default every variant shares one.
  virtual std::vector<Fp64Check> check_variant_fp64(VariantId /*variant*/, const HostTensors& inputs,
                                                    const HostTensors& outputs, const CheckSubset& subset) const {
    return check_fp64(inputs, outputs, subset);
  }

  // Checks that relate several variants beyond a pair claim (F6: the fold's fp64 error is no
  // worse than the chain's). outputs[v] is variant v's outputs, nullptr where it did not run.
  virtual std::vector<CheckResult> case_checks(const HostTensors& /*inputs*/,
                                               const std::vector<const HostTensors*>& /*outputs*/,
                                               const CheckSubset& /*subset*/) const {
    return {};
  }

  virtual Work work(VariantId variant) const = 0;
  // Kernel launches one call of `variant` makes at this point (0: VariantSpec::launches).
  virtual int launches(VariantId /*variant*/) const { return 0; }

  // A reason not to run this point on `backend` (empty: run it). Recorded as a skip, never a pass:
  // a 2^31-element shape that only the GPU holds, say.
  virtual std::string skip_reason(Backend /*backend*/) const { return {}; }
  // A reason not to run one variant (no vendor library in this build, a shape the vendor refuses).
  virtual std::string variant_skip_reason(VariantId /*variant*/, Backend /*backend*/) const { return {}; }
  // The form `variant` launches at this point on `backend` where a host-side rule (the point's shape,
  // a FUSEBENCH_* knob) picks among several, e.g. "tile 128x192"; empty where there is one form.
  // Reports record it per variant, and compare names a change, so two runs that launched different
  // kernels for the same point say so.
  virtual std::string launch_config(VariantId /*variant*/, Backend /*backend*/) const { return {}; }

  // The elements of an output that carry the claims (empty: all), as defined by a reference
  // variant's outputs. MoE sort compares only the entries below num_valid_ids, for instance.
  virtual std::vector<ElementRange> compared_region(std::size_t /*output*/, const HostTensors& /*outputs*/) const {
    return {};
  }

  // ---- Check budget. A case whose CPU checks can be cut into units says how many there are and
  // what a whole point costs; past the budget the runner picks a seeded subset of units.
  virtual std::int64_t check_units() const { return 0; }  // 0: always checked whole
  virtual std::string check_unit_name() const { return "rows"; }
  // CPU operations (multiply-adds, roughly) of emulating one variant plus its fp64 reference,
  // over the whole point.
  virtual double check_cost() const { return 0.0; }
  // The CPU emulation of `variant`, on the subset's units only (writes only their elements).
  virtual void emulate_subset(VariantId /*variant*/, const HostTensors& /*inputs*/, HostTensors& /*outputs*/,
                              const CheckSubset& /*subset*/) const {}
  // The elements of output `output` that the subset's units cover (empty: the whole output, for
  // outputs that are not cut into units and that emulate_subset() computes whole).
  virtual std::vector<ElementRange> subset_region(std::size_t /*output*/, const CheckSubset& /*subset*/) const {
    return {};
  }
};

struct KernelCase {
  std::string name;     // "<family>/<kind>", e.g. "fp8_quant/per_1x128"
  std::string family;   // "fp8_quant"
  std::string fusion;   // "F9"
  std::string summary;  // one line: what is fused
  std::string spec;     // where its numeric contract is written (docs/numeric-contract.md#...)
  std::vector<VariantSpec> variants;
  std::vector<PairClaim> pairs;
  std::vector<AxisSpec> axes;
  // Builds the instance for one point; throws InputError for an impossible shape.
  std::function<std::unique_ptr<CaseInstance>(const Point&)> make;

  const AxisSpec* axis(const std::string& name) const;
  // Throws std::out_of_range naming the variant.
  VariantId variant_id(const std::string& name) const;
  bool deterministic() const;  // every variant is
  std::string claims_text() const;    // "fused~chain bitwise; small_m~general err/ulp/max <= 1"
  std::string variants_text() const;  // "fused, chain"
};

// The classic two-variant case: `fused` (variant 0) and `chain` (variant 1), fused claimed against
// the chain bitwise or within a bound.
enum FusedChain : VariantId { kFused = 0, kChain = 1 };
std::vector<VariantSpec> fused_and_chain(std::string fused_summary, std::string chain_summary, int fused_launches = 1,
                                         int chain_launches = 2);

}  // namespace fb
