# fusebench_options: what every target of the project compiles with.
add_library(fusebench_options INTERFACE)
target_include_directories(fusebench_options INTERFACE ${PROJECT_SOURCE_DIR})
target_compile_definitions(fusebench_options INTERFACE
  FUSEBENCH_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
  FUSEBENCH_HAS_GPU=$<IF:$<STREQUAL:${FUSEBENCH_GPU_BACKEND},none>,0,1>)
# No floating-point contraction anywhere (docs/numeric-contract.md#one-result-on-every-platform):
# a*b+c stays two roundings unless the source writes an fma.
target_compile_options(fusebench_options INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-ffp-contract=off -fno-fast-math -Wall -Wextra -Wno-unknown-pragmas>)
