#include "core/ablation_section.hpp"

#include <cmath>
#include <set>

#include <fmt/format.h>

#include "core/errors.hpp"

namespace fb {
namespace {

using Json = nlohmann::ordered_json;

[[noreturn]] void reject(const std::string& path, const std::string& key, const std::string& why) {
  throw InputError(fmt::format("{}: ablation.{}: {}", path, key, why));
}

void only_known(const Json& obj, const std::set<std::string>& known, const std::string& path, const std::string& where) {
  for (const auto& item : obj.items())
    if (!known.count(item.key())) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      reject(path, (where.empty() ? "" : where + ".") + item.key().substr(0, 80), "unknown key (known: " + list + ")");
    }
}

std::int64_t integer(const Json& v, const std::string& path, const std::string& key, std::int64_t lo, std::int64_t hi) {
  if (!v.is_number_integer() && !v.is_number_unsigned())
    reject(path, key, fmt::format("must be an integer in [{}, {}]", lo, hi));
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
    reject(path, key, fmt::format("must be an integer in [{}, {}]", lo, hi));
  const std::int64_t x = v.get<std::int64_t>();
  if (x < lo || x > hi) reject(path, key, fmt::format("must be an integer in [{}, {}], got {}", lo, hi, x));
  return x;
}

std::int64_t multiple(const Json& obj, const char* name, std::int64_t of, std::int64_t hi, const std::string& path,
                      bool required, std::int64_t fallback = 0) {
  const std::string key = std::string("layer.") + name;
  if (!obj.contains(name)) {
    if (required) reject(path, key, "missing");
    return fallback;
  }
  const std::int64_t x = integer(obj.at(name), path, key, of, hi);
  if (x % of != 0) reject(path, key, fmt::format("must be a multiple of {}, got {}", of, x));
  return x;
}

std::vector<std::int64_t> rows_list(const Json& v, const std::string& path, const std::string& key, std::int64_t hi) {
  if (!v.is_array() || v.empty()) reject(path, key, "must be a non-empty list of row counts");
  if (v.size() > 64) reject(path, key, "more than 64 points");
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::int64_t x = integer(v[i], path, fmt::format("{}[{}]", key, i), 1, hi);
    for (std::int64_t y : out)
      if (y == x) reject(path, fmt::format("{}[{}]", key, i), fmt::format("{} is listed twice", x));
    out.push_back(x);
  }
  return out;
}

std::optional<double> constant(const Json& obj, const char* name, const std::string& path) {
  if (!obj.contains(name)) return std::nullopt;
  const Json& v = obj.at(name);
  const std::string key = std::string("constants_us.") + name;
  if (!v.is_number()) reject(path, key, "must be a number of microseconds");
  const double x = v.get<double>();
  if (!std::isfinite(x) || x < 0 || x > 1e9) reject(path, key, "must be a finite number of microseconds in [0, 1e9]");
  return x;
}

}  // namespace

AblationSection parse_ablation_section(const Json& section, const Json& model, const std::string& path) {
  if (!section.is_object()) throw InputError(fmt::format("{}: ablation: must be an object", path));
  only_known(section,
             {"layer", "decode_rows", "tokens_per_step", "prefill_tokens", "moe_layers", "dense_layers", "rounds",
              "constants_us"},
             path, "");
  AblationSection s;
  if (!section.contains("layer") || !section.at("layer").is_object()) reject(path, "layer", "missing or not an object");
  const Json& l = section.at("layer");
  only_known(l,
             {"hidden", "experts", "topk", "moe_inter", "shared_inter", "qkv_out", "o_proj_in", "fp8", "router_split_k",
              "sort_block", "gemm_slices"},
             path, "layer");
  constexpr std::int64_t kDim = std::int64_t{1} << 20;
  s.layer.hidden = multiple(l, "hidden", 128, kDim, path, true);
  s.layer.experts = multiple(l, "experts", 32, 256, path, true);
  s.layer.topk = multiple(l, "topk", 1, 8, path, true);
  if (s.layer.topk > s.layer.experts) reject(path, "layer.topk", "more than the experts");
  s.layer.moe_inter = multiple(l, "moe_inter", 32, kDim, path, true);
  s.layer.shared_inter = multiple(l, "shared_inter", 16, kDim, path, true);
  s.layer.qkv_out = multiple(l, "qkv_out", 128, kDim, path, true);
  s.layer.o_proj_in = multiple(l, "o_proj_in", 128, kDim, path, true);
  s.layer.router_split_k = multiple(l, "router_split_k", 1, 64, path, false, 4);
  if (s.layer.hidden % (s.layer.router_split_k * 8) != 0)
    reject(path, "layer.router_split_k", "hidden / router_split_k must be a multiple of 8");
  s.layer.sort_block = multiple(l, "sort_block", 16, 128, path, false, 32);
  s.layer.gemm_slices = multiple(l, "gemm_slices", 1, 254, path, false, 2);
  if (s.layer.gemm_slices > std::min(s.layer.hidden, s.layer.o_proj_in) / 128)
    reject(path, "layer.gemm_slices", "more than the K blocks of the qkv or o_proj GEMM");
  if (l.contains("fp8")) {
    const Json& f = l.at("fp8");
    if (!f.is_string() || (f != "e4m3fn" && f != "e4m3fnuz")) reject(path, "layer.fp8", "must be \"e4m3fn\" or \"e4m3fnuz\"");
    s.layer.fp8 = f.get<std::string>();
  }
  constexpr std::int64_t kMaxRows = 1 << 20;
  if (section.contains("decode_rows")) s.decode_rows = rows_list(section.at("decode_rows"), path, "decode_rows", 1 << 16);
  if (section.contains("prefill_tokens"))
    s.prefill_tokens = rows_list(section.at("prefill_tokens"), path, "prefill_tokens", kMaxRows);
  if (s.decode_rows.empty() && s.prefill_tokens.empty())
    reject(path, "decode_rows", "neither decode_rows nor prefill_tokens: no point to run");
  if (section.contains("tokens_per_step"))
    s.tokens_per_step = integer(section.at("tokens_per_step"), path, "tokens_per_step", 1, 64);
  for (std::size_t i = 0; i < s.decode_rows.size(); ++i)
    if (s.decode_rows[i] % s.tokens_per_step != 0)
      reject(path, fmt::format("decode_rows[{}]", i),
             fmt::format("{} rows is not a whole number of requests at {} tokens per step", s.decode_rows[i],
                         s.tokens_per_step));
  if (section.contains("moe_layers")) {
    s.moe_layers = integer(section.at("moe_layers"), path, "moe_layers", 1, 100000);
  } else if (model.is_object() && model.contains("moe_layers") && model.at("moe_layers").is_number_integer()) {
    s.moe_layers = integer(model.at("moe_layers"), path, "moe_layers (from model.moe_layers)", 1, 100000);
  } else {
    reject(path, "moe_layers", "missing, and the scenario's model has no integer moe_layers");
  }
  if (section.contains("dense_layers")) s.dense_layers = integer(section.at("dense_layers"), path, "dense_layers", 0, 100000);
  else if (model.is_object() && model.contains("dense_layers") && model.at("dense_layers").is_number_integer())
    s.dense_layers = integer(model.at("dense_layers"), path, "dense_layers (from model.dense_layers)", 0, 100000);
  if (section.contains("rounds")) {
    const Json& r = section.at("rounds");
    if (!r.is_object()) reject(path, "rounds", "must be an object {\"decode\": N, \"prefill\": N}");
    only_known(r, {"decode", "prefill"}, path, "rounds");
    if (r.contains("decode")) s.decode_rounds = static_cast<int>(integer(r.at("decode"), path, "rounds.decode", 3, 100000));
    if (r.contains("prefill"))
      s.prefill_rounds = static_cast<int>(integer(r.at("prefill"), path, "rounds.prefill", 3, 100000));
  }
  if (section.contains("constants_us")) {
    const Json& c = section.at("constants_us");
    if (!c.is_object()) reject(path, "constants_us", "must be an object");
    only_known(c, {"attention_per_layer", "dense_layer", "lm_head"}, path, "constants_us");
    s.constants.attention_per_layer_us = constant(c, "attention_per_layer", path);
    s.constants.dense_layer_us = constant(c, "dense_layer", path);
    s.constants.lm_head_us = constant(c, "lm_head", path);
  }
  return s;
}

}  // namespace fb
