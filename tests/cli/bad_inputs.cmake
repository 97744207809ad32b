# The bad-input corpus (issue 13): hostile scenarios, reports, arguments and paths, each with the
# exit code and message fragment fusebench must answer. Labels: cli;bad_input (tools/sanitize.sh
# runs them under ASan + UBSan). tests/cli/README.md has the table of what each did before.
set(BAD ${CMAKE_CURRENT_SOURCE_DIR}/bad_inputs)
set(GEN ${CMAKE_CURRENT_BINARY_DIR}/generated)

function(fb_bad_input name code regex)
  add_test(NAME bad_input.${name} COMMAND ${EXPECT} ${code} "${regex}" ${ARGN})
  set_tests_properties(bad_input.${name} PROPERTIES LABELS "cli;bad_input" TIMEOUT 60)
endfunction()
set(V ${FB} verify --backend cpu)

# ---- scenarios: shapes and sizes (item 2)
fb_bad_input(m_2_62 2 "m_2_62.json: cases.fp8_quant/per_token\\[0\\].M: axis M must be in \\[1, 2147483648\\], got 4611686018427387904"
  ${V} --scenario ${BAD}/m_2_62.json)
fb_bad_input(m_2_40 2 "axis M must be in \\[1, 2147483648\\], got 1099511627776" ${V} --scenario ${BAD}/m_2_40.json)
fb_bad_input(m_u64_max 2 "axis M takes an integer no larger than 2147483648, got 18446744073709551615"
  ${V} --scenario ${BAD}/m_u64_max.json)
fb_bad_input(moe_d_2_62 2 "axis D must be in \\[0, 2147483648\\], got 4611686018427387904"
  ${V} --scenario ${BAD}/moe_d_2_62.json)
fb_bad_input(bytes_overflow 2 "bytes_overflow.json: cases.fp8_quant/per_token\\[0\\]: .*passes 2\\^63"
  ${V} --scenario ${BAD}/bytes_overflow.json)
# 26 TB of inputs: the memory guard (core/memory_guard.hpp) refuses it before anything is allocated.
fb_bad_input(unaffordable 2 "GiB of host memory to verify, .* GiB available" ${V} --scenario ${BAD}/unaffordable.json)

# ---- scenarios: structure (items 3, 7, 8, 10)
fb_bad_input(duplicate_axis 2 "duplicate_axis.json: cases.fp8_quant/per_token.M: duplicate key" ${V} --scenario ${BAD}/duplicate_axis.json)
fb_bad_input(duplicate_case 2 "duplicate_case.json: cases.fp8_quant/per_token: duplicate key" ${V} --scenario ${BAD}/duplicate_case.json)
fb_bad_input(model_too_deep 2 "model.a.b.c.d: nested deeper than 4 levels" ${V} --scenario ${BAD}/model_too_deep.json)
fb_bad_input(trailing_garbage 2 "trailing_garbage.json: malformed JSON: .*expected end of input" ${V} --scenario ${BAD}/trailing_garbage.json)
fb_bad_input(not_utf8 2 "not_utf8.json: malformed JSON: .*ill-formed UTF-8" ${V} --scenario ${BAD}/not_utf8.json)
fb_bad_input(empty_file 2 "empty.json: malformed JSON: .*unexpected end of input" ${V} --scenario ${BAD}/empty.json)
fb_bad_input(top_level_array 2 "top_level_array.json: \\(top level\\): a scenario is a JSON object" ${V} --scenario ${BAD}/top_level_array.json)
fb_bad_input(long_value_excerpt 2 "got 'x{60}\\.\\.\\.'$" ${V} --scenario ${BAD}/long_value.json)
fb_bad_input(scenario_is_directory 2 "bad_inputs: cannot open scenario file \\(it is a directory\\)" ${V} --scenario ${BAD})
fb_bad_input(scenario_dev_zero 2 "/dev/zero: scenario file is larger than the 16777216-byte limit" ${V} --scenario /dev/zero)
fb_bad_input(size_limit_env 2 "ci-quick.json: scenario file is [0-9]+ bytes, past the 100-byte limit"
  env FUSEBENCH_MAX_INPUT_BYTES=100 ${V} --scenario ci-quick)
fb_bad_input(size_limit_env_junk 2 "FUSEBENCH_MAX_INPUT_BYTES=lots: not a positive number of bytes"
  env FUSEBENCH_MAX_INPUT_BYTES=lots ${V} --scenario ci-quick)

# Generated inputs, too large to commit (make_big_inputs.py); each must answer within seconds.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_FOUND)
  add_test(NAME bad_input.generate COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/make_big_inputs.py ${GEN})
  set_tests_properties(bad_input.generate PROPERTIES LABELS "cli;bad_input" FIXTURES_SETUP big_inputs)
  function(fb_big_input name code regex file)
    fb_bad_input(${name} ${code} "${regex}" ${V} --scenario ${GEN}/${file} ${ARGN})
    set_tests_properties(bad_input.${name} PROPERTIES FIXTURES_REQUIRED big_inputs TIMEOUT 30)
  endfunction()
  fb_big_input(deep_model_1e6 2 "model.a.a.a.*: nested deeper than 64 levels" deep_model_1e6.json)
  fb_big_input(deep_model_1e4 2 "nested deeper than 64 levels" deep_model_1e4.json)
  fb_big_input(deep_axis_1e5 2 "cases.fp8_quant/per_token.M: nested deeper than 64 levels" deep_axis_1e5.json)
  fb_big_input(many_keys_model 2 "more than 10000 values in model and workloads" many_keys_model.json)
  fb_big_input(many_keys_sweep 2 "cases.fp8_quant/per_token\\[0\\].k0: unknown axis" many_keys_sweep.json)
  fb_big_input(sweep_2m 2 "2000000 values, more than the 100000 points" sweep_2m.json)
  fb_big_input(sweep_product 2 "sweeps more than 100000 points" sweep_product.json)
  fb_big_input(big_50mb 2 "is 52428[0-9]+ bytes, past the 16777216-byte limit" big_50mb.json)
  # A 20k-value sweep loads in well under a second (it took 1.5 s when de-duplication was quadratic).
  add_test(NAME bad_input.sweep_20k_list COMMAND ${EXPECT} 2 "no point matches --kernel"
    ${V} --scenario ${GEN}/sweep_20k.json --where M=0)
  set_tests_properties(bad_input.sweep_20k_list PROPERTIES LABELS "cli;bad_input" FIXTURES_REQUIRED big_inputs TIMEOUT 10)
endif()

# ---- arguments (items 5, 8)
set(ONE --scenario ci-quick --kernel fp8_quant/per_token --where M=1,K=128,fp8=e4m3fn,scale_format=f32,dist=normal)
fb_bad_input(seed_negative 2 "--seed: a seed is a whole number" ${V} ${ONE} --seed -1)
fb_bad_input(seed_empty 2 "--seed" ${V} ${ONE} --seed "")
fb_bad_input(seed_past_2_64 2 "--seed: a seed is a whole number" ${V} ${ONE} --seed 18446744073709551616)
fb_bad_input(seed_junk 2 "--seed: a seed is a whole number" ${V} ${ONE} --seed 12abc)
fb_bad_input(seed_max_ok 0 "1 cases: 1 pass" ${V} ${ONE} --seed 18446744073709551615)
fb_bad_input(where_axis_twice 2 "--where: axis M is given twice" ${V} --scenario ci-quick --where M=1,M=5)
fb_bad_input(where_option_twice 2 "--where: At Most 1" ${V} --scenario ci-quick --where M=1 --where K=128)
set(B ${FB} bench --backend cpu ${ONE})
fb_bad_input(bench_min_samples_zero 2 "--min-samples: must be in \\[1, 1000000\\]" ${B} --min-samples 0)
fb_bad_input(bench_min_over_max 2 "--max-samples: must be in \\[--min-samples, 1000000\\]" ${B} --min-samples 50 --max-samples 10)
fb_bad_input(bench_noise_nan 2 "--noise-target: must be a number in \\(0, 10\\]" ${B} --noise-target nan)
fb_bad_input(bench_noise_zero 2 "--noise-target" ${B} --noise-target 0)
fb_bad_input(bench_time_cap_negative 2 "--time-cap-ms: must be a number in \\(0, 3600000\\]" ${B} --time-cap-ms -1)
fb_bad_input(bench_warmup_count_negative 2 "--warmup-count: must be in \\[0, 1000000\\]" ${B} --warmup-count -1)
fb_bad_input(bench_warmup_ms_inf 2 "--warmup-ms" ${B} --warmup-ms inf)

# ---- compare's report reader (item 4: the lead's validation, schema 2.0; reports derived from
# tests/reports/golden/base.json with one field broken each)
set(R ${BAD}/reports)
set(GOLD ${PROJECT_SOURCE_DIR}/tests/reports/golden/base.json)
fb_bad_input(report_empty_time 2 "empty_time.json: \\$.cases\\[0\\].timings\\[0\\].time.median_us: missing"
  ${FB} compare ${R}/empty_time.json ${GOLD})
fb_bad_input(report_no_build 2 "no_build.json: \\$.run.build: missing" ${FB} compare ${GOLD} ${R}/no_build.json)
fb_bad_input(report_timing_without_role 2 "timing_without_role.json: \\$.cases\\[0\\].timings\\[0\\].variant: missing"
  ${FB} compare ${R}/timing_without_role.json ${GOLD})
fb_bad_input(report_schema_1 2 "schema_1.json: \\$.schema_version: report schema 1.0" ${FB} compare ${R}/schema_1.json ${GOLD})
fb_bad_input(report_deep 2 "deep.json: " ${FB} compare ${R}/deep.json ${GOLD})
fb_bad_input(report_is_directory 2 "reports" ${FB} compare ${R} ${GOLD})

# ---- compare verdicts, --merge, fusebench merge and --shard (issue 17)
set(SAMPLED ${PROJECT_SOURCE_DIR}/tests/reports/golden/bench_base.json)
set(ABL ${PROJECT_SOURCE_DIR}/tests/reports/golden/ablation_base.json)
fb_bad_input(compare_other_scenario 2 "other_scenario.json: \\$.scenario.name: scenario 'm31-flash-tp4' differs from 'ci-quick' in .*bench_base.json"
  ${FB} compare ${SAMPLED} ${R}/other_scenario.json)
fb_bad_input(compare_other_schema 2 "schema_2_1.json: \\$.schema_version: 2.1.0 differs from 2.0.0 in .*: reports of different schema versions"
  ${FB} compare ${SAMPLED} ${R}/schema_2_1.json)
fb_bad_input(compare_other_kind 2 "ablation_base.json: \\$.report_kind: an ablation report cannot be compared with a verify/bench report"
  ${FB} compare ${SAMPLED} ${ABL})
fb_bad_input(compare_zero_sample 2 "zero_sample.json: \\$.cases\\[0\\].timings\\[1\\].samples_us\\[3\\]: is not a positive number"
  ${FB} compare ${SAMPLED} ${R}/zero_sample.json)
fb_bad_input(compare_ablation_config_without_name 2 "ablation_config_without_name.json: \\$.points\\[1\\].configs\\[0\\].name: missing"
  ${FB} compare ${ABL} ${R}/ablation_config_without_name.json)
fb_bad_input(compare_ablation_check_without_outcome 2 "\\$.points\\[0\\].fusions\\[0\\].check.outcome: missing"
  ${FB} compare ${ABL} ${R}/ablation_check_without_outcome.json)
fb_bad_input(compare_three_reports 2 "compare: takes BASE and HEAD, got 3 reports" ${FB} compare ${SAMPLED} ${SAMPLED} ${SAMPLED})
fb_bad_input(compare_merge_one_report 2 "compare --merge: takes two or more reports, got 1" ${FB} compare --merge ${SAMPLED})
fb_bad_input(compare_alpha_zero 2 "--alpha: must be in \\(0, 1\\), got 0" ${FB} compare ${SAMPLED} ${SAMPLED} --alpha 0)
fb_bad_input(compare_alpha_nan 2 "--alpha: must be in \\(0, 1\\)" ${FB} compare ${SAMPLED} ${SAMPLED} --alpha nan)
fb_bad_input(compare_min_effect_negative 2 "--min-effect: must be a fraction in \\[0, 10\\)" ${FB} compare ${SAMPLED} ${SAMPLED} --min-effect -0.1)
fb_bad_input(compare_min_samples_one 2 "--min-samples: must be in \\[2, 1000000\\], got 1" ${FB} compare ${SAMPLED} ${SAMPLED} --min-samples 1)
fb_bad_input(compare_markdown_over_input 2 "--markdown" ${FB} compare ${SAMPLED} ${ABL} --markdown ${SAMPLED})
fb_bad_input(merge_without_output 2 "merge: -o OUT.json is required \\(or --stats\\)" ${FB} merge ${R}/ablation_shard_0_of_2.json)
fb_bad_input(merge_shard_missing 2 "merge: shard 0/2 missing" ${FB} merge ${R}/ablation_shard_1_of_2.json -o ${OUT}/never.json)
fb_bad_input(merge_shard_twice 2 "ablation_shard_1_of_2.json: \\$.methodology.shard: shard 1/2 is given twice"
  ${FB} merge ${R}/ablation_shard_1_of_2.json ${R}/ablation_shard_1_of_2.json -o ${OUT}/never.json)
fb_bad_input(merge_other_seed 2 "ablation_shard_1_of_2.json: \\$.methodology.seed: 1 differs from 7 in .*ablation_shard_0_of_2_seed_7.json: shards of one run share one seed"
  ${FB} merge ${R}/ablation_shard_1_of_2.json ${R}/ablation_shard_0_of_2_seed_7.json -o ${OUT}/never.json)
fb_bad_input(merge_unsharded_with_shard 2 "ablation_shard_1_of_2.json: \\$.methodology.shard: 1/2 is not one of 1 shards"
  ${FB} merge ${ABL} ${R}/ablation_shard_1_of_2.json -o ${OUT}/never.json)
fb_bad_input(merge_output_over_input 2 "-o" ${FB} merge ${R}/ablation_shard_1_of_2.json ${R}/ablation_shard_0_of_2.json -o ${R}/ablation_shard_0_of_2.json)
fb_bad_input(merge_stats_with_output 2 "merge --stats: writes --json and --markdown, not -o" ${FB} merge --stats ${SAMPLED} ${SAMPLED} -o ${OUT}/never.json)
fb_bad_input(merge_stats_other_kind 2 "\\$.report_kind: an ablation report cannot be compared" ${FB} merge --stats ${SAMPLED} ${ABL})
fb_bad_input(shard_index_past_count 2 "--shard '3/3': I must be in \\[0, N\\)" ${V} ${ONE} --shard 3/3)
fb_bad_input(shard_zero_count 2 "--shard '0/0': N must be between 1 and 65536" ${V} ${ONE} --shard 0/0)
fb_bad_input(shard_junk 2 "--shard 'two': expected I/N" ${V} ${ONE} --shard two)
fb_bad_input(shard_negative 2 "--shard '-1/2': I must be in \\[0, N\\)" ${V} ${ONE} --shard -1/2)
fb_bad_input(shard_empty_runs_nothing 0 "--shard 1/2: 0 of the run's 1 points" ${V} ${ONE} --shard 1/2)

# ---- paths, pipes and special files (items 1, 5, 6, 9, 10): tests/cli/path_checks.sh
foreach(check dev_null fifo fifo_without_reader_keeps_fail_code symlink_followed dangling_symlink directory_up_front
        same_path_twice report_over_scenario compare_over_input stdout_dash sigpipe non_utf8_argument
        repro_quoted_absolute junit_control_characters list_scenarios_json)
  add_test(NAME bad_input.path.${check}
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/path_checks.sh ${FB} ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/paths ${check})
  set_tests_properties(bad_input.path.${check} PROPERTIES LABELS "cli;bad_input" TIMEOUT 120)
endforeach()

# ---- ablate's options and its scenario section (issue 17)
set(A ${FB} ablate --backend cpu --scenario ci-quick)
fb_bad_input(ablate_unknown_fusion 2 "--fusions: 'F9' is not a fusion \\(F1 .. F8\\)" ${A} --fusions F1,F9)
fb_bad_input(ablate_fusion_twice 2 "--fusions: F2 is named twice" ${A} --fusions F2,f2)
fb_bad_input(ablate_no_point 2 "no ablation point matches --points / --where" ${A} --where rows=5)
fb_bad_input(ablate_where_axis 2 "--where: ablate's points have rows, phase and requests, not 'K'" ${A} --where K=3)
fb_bad_input(ablate_unknown_point 2 "--points: 'decode M=4' is not a point of the scenario \\(points: decode M=3, decode M=24, prefill T=160\\)"
  ${A} --points "decode M=4")
fb_bad_input(ablate_bad_shard 2 "shard" ${A} --shard 3/2)
fb_bad_input(ablate_negative_rounds 2 "--rounds: must be 0 \\(the scenario's\\) or in \\[3, 100000\\]" ${A} --rounds -1)
fb_bad_input(ablate_one_round 2 "--rounds: must be 0 \\(the scenario's\\) or in \\[3, 100000\\]" ${A} --rounds 1)
fb_bad_input(ablate_zero_time_cap 2 "--time-cap-ms: must be a number in \\(0, 36000000\\]" ${A} --time-cap-ms 0)
fb_bad_input(ablate_bad_fault 2 "--fault-injection: 'F2' is not a configuration name" ${A} --fault-injection F2)
fb_bad_input(ablate_missing_section 2 "nan_input.json: ablation: missing \\(ablate needs the layer and its points\\)"
  ${FB} ablate --backend cpu --scenario ${IN}/nan_input.json)
fb_bad_input(ablate_section_unknown_key 2 "ablation_unknown_key.json: ablation.layer.hiden: unknown key"
  ${FB} ablate --backend cpu --scenario ${BAD}/ablation_unknown_key.json)
fb_bad_input(ablate_section_rows 2 "ablation_rows.json: ablation.decode_rows\\[0\\]: 4 rows is not a whole number of requests at 3 tokens per step"
  ${FB} ablate --backend cpu --scenario ${BAD}/ablation_rows.json)
fb_bad_input(ablate_unwritable_svg 2 "--svg" ${A} --svg /nonexistent-dir/chart.svg)
