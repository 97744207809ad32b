// `--shard I/N`: a deterministic split of a run's points over N processes started by any launcher
// (a Slurm job array, a Kubernetes indexed Job, mpirun, a shell loop over visible devices).
// Point number p (its position in the run's full, unsharded order) belongs to shard p mod N, so
// every point lands in exactly one shard and the shards' reports merge back into the unsharded
// order (`fusebench merge`).
#pragma once

#include <cstdint>
#include <string>

namespace fb {

struct Shard {
  std::int64_t index = 0;  // I, 0 <= I < N
  std::int64_t count = 1;  // N >= 1; 1 = no sharding

  bool contains(std::int64_t ordinal) const { return ordinal % count == index; }
  bool active() const { return count > 1; }
  std::string text() const;  // "I/N"
};

// Parses "I/N" (decimal, 0 <= I < N <= 65536); InputError naming the problem otherwise.
Shard parse_shard(const std::string& text);

}  // namespace fb
