// `fusebench merge`: the reports of one run's shards (`--shard I/N`, core/shard.hpp) joined into
// the report the unsharded run writes. Shard I's k-th point is point I + k N of the unsharded
// order, so the cases (or ablation points) interleave back into that order; the summary is
// recomputed. The shards must be one run: one schema version, report kind, scenario, methodology
// (seed, filters, every knob), backend, build and device model, each shard exactly once and
// complete. Run-level fields that may differ are merged so:
//   run.started_at / finished_at: the earliest start and the latest finish;
//   run.wall_s: the sum of the shards' wall times (the work, as one process would have spent it);
//   run.argv: the first shard's, less its --shard option; run.host.hostname: the distinct names;
//   device, environment, cpu_emulation_threads: the first shard's;
//   run.shards: each shard's own argv, times, host, device ordinal and environment.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "reports/report_reader.hpp"

namespace fb {

// InputError naming the file and the JSON path when the shards are not one complete run.
nlohmann::ordered_json merge_shard_reports(const std::vector<NamedReport>& shards);

}  // namespace fb
