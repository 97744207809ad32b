// The scenario's ablation section: defaults, moe_layers from the model, and one-line errors.
#include <gtest/gtest.h>

#include "core/ablation_section.hpp"
#include "core/errors.hpp"

namespace fb {
namespace {

using Json = nlohmann::ordered_json;

Json section() {
  return Json::parse(R"({"layer": {"hidden": 512, "experts": 32, "topk": 2, "moe_inter": 128, "shared_inter": 256,
                                  "qkv_out": 256, "o_proj_in": 256},
                        "decode_rows": [3, 24], "tokens_per_step": 3, "prefill_tokens": [320]})");
}

std::string error_of(const Json& s, const Json& model = Json::object()) {
  try {
    parse_ablation_section(s, model, "s.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(AblationSection, ParsesWithDefaultsAndTakesMoeLayersFromTheModel) {
  const AblationSection s = parse_ablation_section(section(), Json{{"moe_layers", 57}, {"dense_layers", 3}}, "s.json");
  EXPECT_EQ(s.layer.hidden, 512);
  EXPECT_EQ(s.layer.fp8, "e4m3fn");
  EXPECT_EQ(s.layer.router_split_k, 4);
  EXPECT_EQ(s.moe_layers, 57);
  EXPECT_EQ(s.dense_layers, 3);
  EXPECT_EQ(s.decode_rounds, 30);
  EXPECT_EQ(s.prefill_rounds, 10);
  EXPECT_FALSE(s.constants.complete());
}

TEST(AblationSection, BadInputNamesTheKey) {
  Json s = section();
  EXPECT_EQ(error_of(s), "s.json: ablation.moe_layers: missing, and the scenario's model has no integer moe_layers");
  s["moe_layers"] = 57;
  Json t = s;
  t["layer"]["hiden"] = 1;
  EXPECT_NE(error_of(t).find("s.json: ablation.layer.hiden: unknown key"), std::string::npos);
  t = s;
  t["decode_rows"] = Json::array({3, 4});
  EXPECT_EQ(error_of(t), "s.json: ablation.decode_rows[1]: 4 rows is not a whole number of requests at 3 tokens per step");
  t = s;
  t["layer"]["hidden"] = 500;
  EXPECT_EQ(error_of(t), "s.json: ablation.layer.hidden: must be a multiple of 128, got 500");
  t = s;
  t["constants_us"] = Json{{"attention", 3}};
  EXPECT_NE(error_of(t).find("ablation.constants_us.attention: unknown key"), std::string::npos);
  t = s;
  t["constants_us"] = Json{{"lm_head", -1}};
  EXPECT_NE(error_of(t).find("ablation.constants_us.lm_head: must be a finite number"), std::string::npos);
  t = s;
  t["decode_rows"] = Json::array({3, 3});
  EXPECT_NE(error_of(t).find("decode_rows[1]: 3 is listed twice"), std::string::npos);
  t = s;
  t.erase("decode_rows");
  t.erase("prefill_tokens");
  EXPECT_NE(error_of(t).find("no point to run"), std::string::npos);
  t = s;
  t["layer"]["fp8"] = "e5m2";
  EXPECT_NE(error_of(t).find("ablation.layer.fp8: must be"), std::string::npos);
}

}  // namespace
}  // namespace fb
