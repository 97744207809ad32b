#include "reports/report_stats.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "reports/report_reader.hpp"

namespace fb {
namespace {

using Json = nlohmann::ordered_json;

std::string device_text(const Json& report) {
  const Json& d = report["device"];
  return d.is_null() ? std::string("CPU emulation") : d["name"].get<std::string>() + " (" + d["arch"].get<std::string>() + ")";
}

// Rows in first-seen order, one value slot per report (absent where a report lacks the row).
struct Rows {
  std::vector<std::string> order;
  std::map<std::string, std::pair<Json, std::vector<std::optional<double>>>> rows;
  void put(const std::string& key, const Json& label, std::size_t report, std::size_t reports, double value) {
    auto [it, fresh] = rows.try_emplace(key, label, std::vector<std::optional<double>>(reports));
    if (fresh) order.push_back(key);
    it->second.second[report] = value;
  }
};

Json spread_json(const Spread& s) {
  return Json{{"n", s.n}, {"mean", s.mean}, {"sd", s.sd}, {"min", s.min}, {"max", s.max}};
}

Json rows_json(const Rows& rows, const char* value_name) {
  Json out = Json::array();
  for (const std::string& key : rows.order) {
    const auto& [label, values] = rows.rows.at(key);
    std::vector<double> present;
    Json per = Json::array();
    for (const auto& v : values) {
      per.push_back(v ? Json(*v) : Json());
      if (v) present.push_back(*v);
    }
    Json j = label;
    j[value_name] = spread_json(spread_of(present));
    j["per_report"] = std::move(per);
    out.push_back(std::move(j));
  }
  return out;
}

std::string md_table(const Rows& rows, const std::vector<std::string>& label_columns, const std::string& unit, double scale,
                     std::size_t reports) {
  std::string head = "|", rule = "|";
  for (const std::string& c : label_columns) head += " " + c + " |", rule += "---|";
  head += fmt::format(" n | mean {0} | sd {0} | min {0} | max {0} |", unit);
  rule += "---:|---:|---:|---:|---:|";
  for (std::size_t r = 0; r < reports; ++r) head += fmt::format(" #{} |", r + 1), rule += "---:|";
  std::string t = head + "\n" + rule + "\n";
  for (const std::string& key : rows.order) {
    const auto& [label, values] = rows.rows.at(key);
    std::vector<double> present;
    for (const auto& v : values)
      if (v) present.push_back(*v);
    const Spread s = spread_of(present);
    std::string line = "|";
    for (const auto& [k, v] : label.items()) line += " " + (v.is_string() ? v.get<std::string>() : report_point_text(v)) + " |";
    line += fmt::format(" {} | {:.4g} | {:.2g} | {:.4g} | {:.4g} |", s.n, s.mean * scale, s.sd * scale, s.min * scale,
                        s.max * scale);
    for (const auto& v : values) line += v ? fmt::format(" {:.4g} |", *v * scale) : std::string(" - |");
    t += line + "\n";
  }
  return t;
}

}  // namespace

Spread spread_of(const std::vector<double>& values) {
  Spread s;
  s.n = static_cast<int>(values.size());
  if (values.empty()) return s;
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / s.n;
  double sq = 0;
  for (double v : values) sq += (v - s.mean) * (v - s.mean);
  s.sd = s.n > 1 ? std::sqrt(sq / (s.n - 1)) : 0.0;
  s.min = *std::min_element(values.begin(), values.end());
  s.max = *std::max_element(values.begin(), values.end());
  return s;
}

MergeStats merge_statistics(const std::vector<NamedReport>& reports) {
  if (reports.size() < 2)
    throw InputError(fmt::format("--merge: takes two or more reports of one scenario, got {}", reports.size()));
  check_comparable(reports);
  const bool ablation = is_ablation(reports.front().json);
  const std::size_t n = reports.size();
  Rows times, shares;
  for (std::size_t r = 0; r < n; ++r) {
    const Json& j = reports[r].json;
    if (ablation) {
      for (const Json& p : j["points"]) {
        const std::string id = p["id"].get<std::string>();
        for (const Json& c : p["configs"])
          times.put(id + "\x1f" + c["name"].get<std::string>(), Json{{"point", id}, {"config", c["name"]}}, r, n,
                    c["time"]["median_us"].get<double>());
        for (const Json& f : p["fusions"])
          if (f.contains("share") && f["share"].is_number())
            shares.put(f["fusion"].get<std::string>() + "\x1f" + id, Json{{"fusion", f["fusion"]}, {"point", id}}, r, n,
                       f["share"].get<double>());
      }
    } else {
      for (const Json& c : j["cases"])
        for (const Json& t : c.value("timings", Json::array()))
          times.put(c["case"].get<std::string>() + "\x1f" + c["point"].dump() + "\x1f" + c["backend"].get<std::string>() +
                        "\x1f" + t["variant"].get<std::string>() + "\x1f" + t["mode"].get<std::string>(),
                    Json{{"case", c["case"]}, {"point", c["point"]}, {"variant", t["variant"]}, {"mode", t["mode"]}}, r, n,
                    t["time"]["median_us"].get<double>());
    }
  }
  // Shares grouped by fusion, then point, as the original change's table reads.
  if (ablation)
    std::stable_sort(shares.order.begin(), shares.order.end(), [](const std::string& a, const std::string& b) {
      return a.substr(0, a.find('\x1f')) < b.substr(0, b.find('\x1f'));
    });

  MergeStats out;
  Json list = Json::array();
  std::string legend;
  for (std::size_t r = 0; r < n; ++r) {
    const Json& j = reports[r].json;
    list.push_back(Json{{"path", reports[r].path},
                        {"device", device_text(j)},
                        {"started_at", j["run"]["started_at"]},
                        {"git_sha", j["run"]["build"]["git_sha"]}});
    legend += fmt::format("- #{}: `{}`, {} at {} ({})\n", r + 1, reports[r].path, device_text(j),
                          j["run"]["started_at"].get<std::string>(), j["run"]["build"]["git_sha"].get<std::string>().substr(0, 12));
  }
  out.json = Json{{"schema_version", kMergeStatsSchemaVersion},
                  {"report_kind", "merge_stats"},
                  {"merged_kind", report_kind(reports.front().json)},
                  {"scenario", reports.front().json["scenario"]["name"]},
                  {"statistic", "per row: n reports holding it; mean, sample standard deviation, min and max of their medians"},
                  {"reports", std::move(list)},
                  {"times", rows_json(times, "median_us")}};
  if (ablation) out.json["shares"] = rows_json(shares, "share");

  out.markdown = fmt::format("**fusebench merge --stats**: {} reports of scenario `{}`\n\n{}\n",
                             n, reports.front().json["scenario"]["name"].get<std::string>(), legend);
  if (ablation) {
    out.markdown += "### Share of each fusion (off - on) / on, % (mean of the reports)\n\n" +
                    md_table(shares, {"fusion", "point"}, "%", 100.0, n) + "\n";
    out.markdown += "### Step time per configuration, median us\n\n" + md_table(times, {"point", "config"}, "us", 1.0, n);
  } else {
    out.markdown += "### Median time per case, variant and mode, us\n\n" +
                    md_table(times, {"case", "point", "variant", "mode"}, "us", 1.0, n);
  }
  return out;
}

}  // namespace fb
