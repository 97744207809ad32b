#include "reports/report_merge.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/shard.hpp"

namespace fb {
namespace {

using Json = nlohmann::ordered_json;

struct ShardReport {
  const NamedReport* report = nullptr;
  Shard shard;
  const Json* units = nullptr;  // cases or points
};

Shard shard_of(const NamedReport& r) {
  const Json& m = r.json["methodology"];
  if (!m.contains("shard")) return Shard{};
  if (!m["shard"].is_string()) throw InputError(r.path + ": $.methodology.shard: is not a string 'I/N'");
  try {
    return parse_shard(m["shard"].get<std::string>());
  } catch (const InputError& e) {
    throw InputError(r.path + ": $.methodology.shard: " + e.what());
  }
}

// Methodology keys that describe the shard, not the run.
Json run_methodology(Json m) {
  for (const char* key : {"points", "points_total", "shard", "cpu_emulation_threads"}) m.erase(key);
  return m;
}

// The first key path where two values differ ("" when equal).
std::string first_difference(const Json& a, const Json& b, const std::string& at) {
  if (a.is_object() && b.is_object()) {
    for (const auto& [k, v] : a.items()) {
      if (!b.contains(k)) return at + "." + k;
      if (std::string d = first_difference(v, b[k], at + "." + k); !d.empty()) return d;
    }
    for (const auto& [k, v] : b.items())
      if (!a.contains(k)) return at + "." + k;
    return "";
  }
  return a == b ? "" : at;
}

// The value at a key path of first_difference ("(absent)" when missing), shortened for a message.
std::string value_text(const Json& root, const std::string& at, const std::string& base) {
  const Json* v = &root;
  std::size_t pos = base.size();
  while (pos < at.size()) {
    const std::size_t next = std::min(at.find('.', pos + 1), at.size());
    const std::string key = at.substr(pos + 1, next - pos - 1);
    if (!v->is_object() || !v->contains(key)) return "(absent)";
    v = &(*v)[key];
    pos = next;
  }
  std::string text = v->dump();
  return text.size() > 60 ? text.substr(0, 57) + "..." : text;
}

void require_same(const NamedReport& first, const NamedReport& other, const Json& a, const Json& b, const std::string& at,
                  const std::string& what) {
  const std::string d = first_difference(a, b, at);
  if (d.empty()) return;
  throw InputError(fmt::format("{}: {}: {} differs from {} in {}: shards of one run share {}", other.path, d,
                               value_text(b, d, at), value_text(a, d, at), first.path, what));
}

std::vector<std::string> argv_without_shard(const Json& argv) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string a = argv[i].is_string() ? argv[i].get<std::string>() : argv[i].dump();
    if (a == "--shard") {
      ++i;
      continue;
    }
    if (a.starts_with("--shard=")) continue;
    out.push_back(a);
  }
  return out;
}

std::int64_t expected_count(std::int64_t total, const Shard& s) {
  return total > s.index ? (total - 1 - s.index) / s.count + 1 : 0;
}

Json case_summary(const Json& cases) {
  int pass = 0, fail = 0, error = 0, skipped = 0, mistrusted = 0;
  for (const Json& c : cases) {
    const std::string o = c["outcome"].get<std::string>();
    pass += o == "pass";
    fail += o == "fail";
    error += o == "error";
    skipped += o == "skipped";
    mistrusted += o == "mistrusted";
  }
  return Json{{"cases", cases.size()}, {"pass", pass},       {"fail", fail},
              {"error", error},        {"skipped", skipped}, {"mistrusted", mistrusted}};
}

}  // namespace

Json merge_shard_reports(const std::vector<NamedReport>& reports) {
  if (reports.empty()) throw InputError("merge: no shard reports given");
  check_comparable(reports);
  const bool ablation = is_ablation(reports.front().json);
  const char* units_key = ablation ? "points" : "cases";

  // Every shard once, all of one N.
  std::vector<ShardReport> shards;
  for (const NamedReport& r : reports) shards.push_back(ShardReport{&r, shard_of(r), &r.json[units_key]});
  const std::int64_t n = shards.front().shard.count;
  for (const ShardReport& s : shards)
    if (s.shard.count != n)
      throw InputError(fmt::format("{}: $.methodology.shard: {} is not one of {} shards ({} is {})", s.report->path,
                                   s.shard.text(), n, shards.front().report->path, shards.front().shard.text()));
  std::sort(shards.begin(), shards.end(), [](const ShardReport& a, const ShardReport& b) { return a.shard.index < b.shard.index; });
  for (std::size_t i = 1; i < shards.size(); ++i)
    if (shards[i].shard.index == shards[i - 1].shard.index)
      throw InputError(fmt::format("{}: $.methodology.shard: shard {} is given twice (also {})", shards[i].report->path,
                                   shards[i].shard.text(), shards[i - 1].report->path));
  if (static_cast<std::int64_t>(shards.size()) != n) {
    std::set<std::int64_t> have;
    for (const ShardReport& s : shards) have.insert(s.shard.index);
    std::string missing;
    for (std::int64_t i = 0; i < n; ++i)
      if (!have.count(i)) missing += (missing.empty() ? "" : ", ") + fmt::format("{}/{}", i, n);
    throw InputError(fmt::format("merge: shard {} missing: a run of {} shards needs each shard's report once", missing, n));
  }

  // One run: the same everything but the shard.
  const NamedReport& first = *shards.front().report;
  for (const ShardReport& s : shards) {
    const NamedReport& r = *s.report;
    require_same(first, r, first.json["schema_version"], r.json["schema_version"], "$.schema_version", "one schema version");
    Json fs = first.json["scenario"], rs = r.json["scenario"];
    fs.erase("path");
    rs.erase("path");
    require_same(first, r, fs, rs, "$.scenario", "one scenario");
    require_same(first, r, run_methodology(first.json["methodology"]), run_methodology(r.json["methodology"]), "$.methodology",
                 "one seed, filters and methodology");
    require_same(first, r, first.json.value("backend", Json()).value("name", Json()),
                 r.json.value("backend", Json()).value("name", Json()), "$.backend.name", "one backend");
    require_same(first, r, first.json["run"].value("command", Json()), r.json["run"].value("command", Json()), "$.run.command",
                 "one command");
    require_same(first, r, first.json["run"]["build"], r.json["run"]["build"], "$.run.build", "one build");
    require_same(first, r, first.json["run"].value("knobs", Json()), r.json["run"].value("knobs", Json()), "$.run.knobs",
                 "one set of FUSEBENCH_* knobs");
    const Json fd = first.json["device"], rd = r.json["device"];
    if (fd.is_null() != rd.is_null())
      throw InputError(fmt::format("{}: $.device: {} where {} has {}: shards of one run share a backend", r.path,
                                   rd.is_null() ? "none" : "a GPU", first.path, fd.is_null() ? "none" : "a GPU"));
    if (!fd.is_null()) {
      require_same(first, r, fd["name"], rd["name"], "$.device.name", "one device model (use compare --merge across GPU sets)");
      require_same(first, r, fd["arch"], rd["arch"], "$.device.arch", "one device model");
    }
    if (ablation) require_same(first, r, first.json.value("model", Json()), r.json.value("model", Json()), "$.model", "one model");
  }

  // Every shard complete: its count of points is the count its share of the order holds.
  std::int64_t total = 0;
  for (const ShardReport& s : shards) total += static_cast<std::int64_t>(s.units->size());
  const Json& m0 = first.json["methodology"];
  if (m0.contains("points_total")) {
    if (!m0["points_total"].is_number_integer() || m0["points_total"].get<std::int64_t>() < 0)
      throw InputError(first.path + ": $.methodology.points_total: is not a whole number");
    total = m0["points_total"].get<std::int64_t>();
  }
  for (const ShardReport& s : shards)
    require_same(first, *s.report, m0.value("points_total", Json()), s.report->json["methodology"].value("points_total", Json()),
                 "$.methodology.points_total", "one unsharded point count");
  for (const ShardReport& s : shards) {
    const std::int64_t want = expected_count(total, s.shard), have = static_cast<std::int64_t>(s.units->size());
    if (want != have)
      throw InputError(fmt::format("{}: $.{}: shard {} holds {} {}, its share of the run's {} is {} (did the run stop early?)",
                                   s.report->path, units_key, s.shard.text(), have, units_key, total, want));
  }

  // The unsharded order: point p is shard p mod N's (p / N)-th.
  Json units = Json::array();
  for (std::int64_t p = 0; p < total; ++p) units.push_back((*shards[p % n].units)[p / n]);

  Json merged = first.json;
  merged[units_key] = std::move(units);
  Json& m = merged["methodology"];
  m["points"] = total;
  if (m.contains("points_total")) m["points_total"] = total;
  if (m.contains("shard")) m["shard"] = "0/1";
  if (ablation) {
    Json summary = first.json.value("summary", Json::object());
    for (auto& [k, v] : summary.items()) {
      if (!v.is_number_integer()) continue;
      std::int64_t sum = 0;
      for (const ShardReport& s : shards) {
        const Json& ss = s.report->json.value("summary", Json::object());
        if (ss.contains(k) && ss[k].is_number_integer()) sum += ss[k].get<std::int64_t>();
      }
      v = sum;
    }
    summary["points"] = total;
    merged["summary"] = std::move(summary);
  } else {
    merged["summary"] = case_summary(merged["cases"]);
  }

  // Run-level fields.
  Json& run = merged["run"];
  std::string started = run["started_at"].get<std::string>(), finished = run.value("finished_at", "");
  double wall = 0;
  std::vector<std::string> hosts;
  Json per_shard = Json::array();
  for (const ShardReport& s : shards) {
    const Json& r = s.report->json["run"];
    started = std::min(started, r["started_at"].get<std::string>());
    if (r.contains("finished_at") && r["finished_at"].is_string()) finished = std::max(finished, r["finished_at"].get<std::string>());
    if (r.contains("wall_s") && r["wall_s"].is_number()) wall += r["wall_s"].get<double>();
    const Json host = r.value("host", Json::object());
    if (host.contains("hostname") && host["hostname"].is_string()) {
      const std::string h = host["hostname"].get<std::string>();
      if (std::find(hosts.begin(), hosts.end(), h) == hosts.end()) hosts.push_back(h);
    }
    Json one{{"shard", s.shard.text()},
             {"argv", r.value("argv", Json::array())},
             {"started_at", r["started_at"]},
             {"finished_at", r.value("finished_at", Json())},
             {"wall_s", r.value("wall_s", Json())},
             {"host", host},
             {"device_ordinal", s.report->json["device"].is_object() ? s.report->json["device"].value("ordinal", Json()) : Json()}};
    if (s.report->json.contains("environment")) one["environment"] = s.report->json["environment"];
    per_shard.push_back(std::move(one));
  }
  run["started_at"] = started;
  if (run.contains("finished_at")) run["finished_at"] = finished;
  if (run.contains("wall_s")) run["wall_s"] = wall;
  if (run.contains("argv") && run["argv"].is_array()) run["argv"] = argv_without_shard(run["argv"]);
  if (run.contains("host") && run["host"].is_object() && !hosts.empty()) {
    std::string joined;
    for (const std::string& h : hosts) joined += (joined.empty() ? "" : ", ") + h;
    run["host"]["hostname"] = joined;
  }
  if (n > 1) run["shards"] = std::move(per_shard);
  return merged;
}

}  // namespace fb
