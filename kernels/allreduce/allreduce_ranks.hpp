// Real ranks on one host: one GPU per rank, driven by one process with one thread per GPU (as
// nccl-tests does with -g), peer access enabled between every pair, every rank's buffers mapped
// into every peer's address space. The kernels synchronize the ranks themselves (per-block flags
// written into the peers' memory, allreduce_device.hpp), so one call is one launch per rank and
// captures into a graph; a barrier that waits past its timeout records which peer it waited for,
// and the run ends with a DeviceError (exit 3) naming the rank, never a hang. The host side waits
// for every rank's thread with a timeout too.
//
// Across hosts (one process per GPU under MPI, the NCCL id broadcast through MPI, peer buffers
// shared with the runtime's IPC handles) is not built yet.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/allreduce/allreduce.hpp"

namespace fb {

// Per-rank barrier state, in that rank's device memory: flags[b][p] is the last barrier epoch
// block b of peer p reached (written by the peer); counter[b] is this rank's own epoch for block b;
// error is 0, or 1 + the peer a barrier timed out waiting for.
struct AllreduceSignals {
  std::uint32_t flags[kAllreduceMaxBlocks][kAllreduceMaxRanks];
  std::uint32_t counter[kAllreduceMaxBlocks];
  std::uint32_t error;
};

struct AllreduceBarrierArgs {
  AllreduceSignals* signals[kAllreduceMaxRanks] = {};
  long long timeout_cycles = 0;  // device clock cycles a barrier waits before it gives up
};

// One rank's whole all-reduce in one launch (barriers inside), `blocks` blocks (at most
// kAllreduceMaxBlocks, and no more than can be resident at once: every block may wait on its peers).
void allreduce_rank_launch(const AllreduceParams& p, const AllreduceRankView& view, const AllreduceBarrierArgs& barrier,
                           int blocks, void* stream);

// Devices this process can see (0 in a CPU-only build).
int allreduce_device_count();

struct AllreduceRankOptions {
  double timeout_s = 10.0;  // a barrier or a rank's thread waiting longer ends the run (DeviceError)
  // Fault injection for the tests: this rank launches nothing in run(), as a rank that died would,
  // so its peers' barriers must time out and the run must end with a DeviceError (-1: none).
  int absent_rank = -1;
};

// Ranks 0..R-1 on devices 0..R-1, buffers for up to `max_elements` per rank.
class AllreduceRankGroup {
 public:
  AllreduceRankGroup(int ranks, std::int64_t max_elements, AllreduceRankOptions options = {});
  ~AllreduceRankGroup();
  AllreduceRankGroup(const AllreduceRankGroup&) = delete;
  AllreduceRankGroup& operator=(const AllreduceRankGroup&) = delete;

  int ranks() const;
  // Why the vendor variant cannot run (empty: it can): not built with NCCL/RCCL, or its init failed.
  std::string vendor_unavailable() const;

  // Every rank's input, bf16 [R][n] with n = p.elements(); returns every rank's output [R][n]
  // (outputs poisoned with NaN bytes first). Throws DeviceError when a rank fails or times out.
  std::vector<std::uint16_t> run(const AllreduceParams& p, const std::vector<std::uint16_t>& x);

  // Graph mode, as a serving engine replays decode steps: `calls` back-to-back calls captured into
  // one graph per rank (the inputs as the last run() left them), every rank's thread released
  // together, each graph replayed `replays` times between events on its own stream. Returns the
  // slowest rank's device time per call, in microseconds. Throws DeviceError as run() does.
  double time_graph_us(const AllreduceParams& p, int calls, int replays);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fb
