# The all-reduce family, and its vendor variant: NCCL (CUDA) or RCCL (HIP) where CMake finds it
# (elsewhere the vendor variant is skipped with its reason).
fusebench_add_family(allreduce)
# OFF for a build that will run where the library found here is absent (every binary links it).
option(FUSEBENCH_NCCL "link NCCL / RCCL, when found, for the all-reduce vendor variant" ON)
if(NOT FUSEBENCH_NCCL)
  # nothing: the vendor variant is skipped with its reason
elseif(FUSEBENCH_GPU_BACKEND STREQUAL "cuda")
  find_path(FUSEBENCH_NCCL_INCLUDE nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} PATH_SUFFIXES include)
  find_library(FUSEBENCH_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
elseif(FUSEBENCH_GPU_BACKEND STREQUAL "hip")
  find_path(FUSEBENCH_NCCL_INCLUDE rccl/rccl.h HINTS /opt/rocm/include)
  find_library(FUSEBENCH_NCCL_LIBRARY rccl HINTS /opt/rocm/lib)
endif()
if(FUSEBENCH_NCCL AND FUSEBENCH_NCCL_INCLUDE AND FUSEBENCH_NCCL_LIBRARY)
  message(STATUS "fusebench: all-reduce vendor variant with ${FUSEBENCH_NCCL_LIBRARY}")
  target_include_directories(fusebench_kernels PRIVATE ${FUSEBENCH_NCCL_INCLUDE})
  target_link_libraries(fusebench_kernels PRIVATE ${FUSEBENCH_NCCL_LIBRARY})
  set_property(SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/allreduce/allreduce_ranks.hip APPEND PROPERTY COMPILE_DEFINITIONS
               FUSEBENCH_HAS_NCCL=1)
endif()
