# Build provenance for reports: git sha and dirty flag (refreshed at every build), compiler and
# build type. Produces the object library fusebench_build_info.
set(FUSEBENCH_BUILD_INFO_CPP ${PROJECT_BINARY_DIR}/generated/build_info.cpp)
add_custom_target(fusebench_git_info
  COMMAND ${CMAKE_COMMAND}
    -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
    -DOUTPUT=${FUSEBENCH_BUILD_INFO_CPP}
    -DVERSION=${PROJECT_VERSION}
    -DBUILD_TYPE=${CMAKE_BUILD_TYPE}
    "-DCOMPILER=${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}"
    -DGPU_BACKEND=${FUSEBENCH_GPU_BACKEND}
    "-DGPU_COMPILER=${CMAKE_CUDA_COMPILER_ID}${CMAKE_HIP_COMPILER_ID} ${CMAKE_CUDA_COMPILER_VERSION}${CMAKE_HIP_COMPILER_VERSION}"
    "-DGPU_ARCHS=${CMAKE_CUDA_ARCHITECTURES}${CMAKE_HIP_ARCHITECTURES}"
    -P ${PROJECT_SOURCE_DIR}/cmake/write_build_info.cmake
  BYPRODUCTS ${FUSEBENCH_BUILD_INFO_CPP}
  COMMENT "Recording git state for reports")
add_library(fusebench_build_info OBJECT ${FUSEBENCH_BUILD_INFO_CPP})
add_dependencies(fusebench_build_info fusebench_git_info)
target_link_libraries(fusebench_build_info PRIVATE fusebench_options)
