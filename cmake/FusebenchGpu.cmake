# GPU backend selection: FUSEBENCH_GPU = auto (default) | cuda | hip | none.
#   auto  CUDA if nvcc works, else HIP if a HIP compiler works, else none (CPU emulation only).
#   cuda  the HIP sources compiled by nvcc through kernels/common/hip_compat.hpp (default arch 90a).
#   hip   the HIP sources compiled for AMD (CMake's HIP language; default arch gfx942).
# Sets FUSEBENCH_GPU_BACKEND to cuda, hip or none.
set(FUSEBENCH_GPU "auto" CACHE STRING "GPU backend: auto, cuda, hip or none")
set_property(CACHE FUSEBENCH_GPU PROPERTY STRINGS auto cuda hip none)

include(CheckLanguage)
set(FUSEBENCH_GPU_BACKEND none)
if(FUSEBENCH_GPU STREQUAL "auto")
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(FUSEBENCH_GPU_BACKEND cuda)
  else()
    check_language(HIP)
    if(CMAKE_HIP_COMPILER)
      set(FUSEBENCH_GPU_BACKEND hip)
    endif()
  endif()
elseif(FUSEBENCH_GPU MATCHES "^(cuda|hip|none)$")
  set(FUSEBENCH_GPU_BACKEND ${FUSEBENCH_GPU})
else()
  message(FATAL_ERROR "FUSEBENCH_GPU must be auto, cuda, hip or none (got '${FUSEBENCH_GPU}')")
endif()

if(FUSEBENCH_GPU_BACKEND STREQUAL "cuda")
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90a)  # H100/H200; pass -DCMAKE_CUDA_ARCHITECTURES=native for others
  endif()
  set(CMAKE_CUDA_STANDARD 17)  # kernel sources are C++17: the oldest dialect every GPU compiler here takes
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
elseif(FUSEBENCH_GPU_BACKEND STREQUAL "hip")
  if(NOT DEFINED CMAKE_HIP_ARCHITECTURES)
    set(CMAKE_HIP_ARCHITECTURES gfx942)  # MI300; gfx950 for MI350
  endif()
  set(CMAKE_HIP_STANDARD 17)
  enable_language(HIP)
  find_package(hip REQUIRED)
endif()

# Recorded in the cache so that scripts (tools/setup.sh, .ci/run) can read what was chosen.
set(FUSEBENCH_GPU_BACKEND_CHOSEN ${FUSEBENCH_GPU_BACKEND} CACHE INTERNAL "GPU backend chosen at configure time")

# Compile the given .hip sources for the selected backend, with the numeric contract's flags
# (docs/numeric-contract.md#one-result-on-every-platform: no contraction, IEEE division and sqrt, no
# flush to zero).
function(fusebench_gpu_sources target)
  if(FUSEBENCH_GPU_BACKEND STREQUAL "cuda")
    set_source_files_properties(${ARGN} PROPERTIES LANGUAGE CUDA)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CUDA>:--fmad=false -prec-div=true -prec-sqrt=true -ftz=false
        -Xcompiler=-ffp-contract=off --expt-relaxed-constexpr>)
  elseif(FUSEBENCH_GPU_BACKEND STREQUAL "hip")
    set_source_files_properties(${ARGN} PROPERTIES LANGUAGE HIP)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:HIP>:-ffp-contract=off -fno-gpu-flush-denormals-to-zero
        -fhip-fp32-correctly-rounded-divide-sqrt>)
  endif()
  target_sources(${target} PRIVATE ${ARGN})
endfunction()
