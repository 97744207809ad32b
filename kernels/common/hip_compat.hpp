// The one portability header: HIP sources build with hipcc on AMD, and with nvcc on NVIDIA through
// the flat map below (HIP runtime name -> CUDA name, only the names this project uses).
//
// It also owns what differs between the two at the device level: the warp/wave width (never assume
// 32 or 64: use warpSize, or lane groups that divide both) and the shuffle syntax.
#pragma once

#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#else
#include <cuda_runtime.h>

// clang-format off
#define hipDeviceAttributeClockRate            cudaDevAttrClockRate
#define hipDeviceAttributeL2CacheSize          cudaDevAttrL2CacheSize
#define hipDeviceAttributeMemoryBusWidth       cudaDevAttrGlobalMemoryBusWidth
#define hipDeviceAttributeMemoryClockRate      cudaDevAttrMemoryClockRate
#define hipDeviceAttributeMultiprocessorCount  cudaDevAttrMultiProcessorCount
#define hipDeviceAttributeWarpSize             cudaDevAttrWarpSize
#define hipDeviceGetAttribute                  cudaDeviceGetAttribute
#define hipDeviceProp_t                        cudaDeviceProp
#define hipDeviceSynchronize                   cudaDeviceSynchronize
#define hipDriverGetVersion                    cudaDriverGetVersion
#define hipError_t                             cudaError_t
#define hipEventCreate                         cudaEventCreate
#define hipEventDestroy                        cudaEventDestroy
#define hipEventElapsedTime                    cudaEventElapsedTime
#define hipEventRecord                         cudaEventRecord
#define hipEvent_t                             cudaEvent_t
#define hipFree                                cudaFree
#define hipFuncAttributeMaxDynamicSharedMemorySize cudaFuncAttributeMaxDynamicSharedMemorySize
#define hipFuncSetAttribute                    cudaFuncSetAttribute
#define hipGraphDestroy                        cudaGraphDestroy
#define hipGraphExecDestroy                    cudaGraphExecDestroy
#define hipGraphExec_t                         cudaGraphExec_t
#define hipGraphInstantiateWithFlags           cudaGraphInstantiateWithFlags
#define hipGraphLaunch                         cudaGraphLaunch
#define hipGraph_t                             cudaGraph_t
#define hipGetDevice                           cudaGetDevice
#define hipGetDeviceCount                      cudaGetDeviceCount
#define hipGetDeviceProperties                 cudaGetDeviceProperties
#define hipGetErrorString                      cudaGetErrorString
#define hipGetLastError                        cudaGetLastError
#define hipMalloc                              cudaMalloc
#define hipMemcpy                              cudaMemcpy
#define hipMemcpyAsync                         cudaMemcpyAsync
#define hipMemcpyDeviceToDevice                cudaMemcpyDeviceToDevice
#define hipMemcpyDeviceToHost                  cudaMemcpyDeviceToHost
#define hipMemcpyHostToDevice                  cudaMemcpyHostToDevice
#define hipMemsetAsync                         cudaMemsetAsync
#define hipRuntimeGetVersion                   cudaRuntimeGetVersion
#define hipSetDevice                           cudaSetDevice
#define hipStreamBeginCapture                  cudaStreamBeginCapture
#define hipStreamCaptureModeRelaxed            cudaStreamCaptureModeRelaxed
#define hipStreamCreateWithFlags               cudaStreamCreateWithFlags
#define hipStreamEndCapture                    cudaStreamEndCapture
#define hipStreamDefault                       cudaStreamDefault
#define hipStreamDestroy                       cudaStreamDestroy
#define hipStreamSynchronize                   cudaStreamSynchronize
#define hipStream_t                            cudaStream_t
#define hipSuccess                             cudaSuccess
// clang-format on
#endif

namespace fb {

// The widest wave the platform runs (AMD: wave64 on CDNA, wave32 on RDNA; NVIDIA: 32), for code
// that must know at compile time whether a group of threads lies within one wave.
#if defined(__HIPCC__)
inline constexpr int kWidestWave = 64;
#else
inline constexpr int kWidestWave = 32;
#endif

// Butterfly exchange inside a wave. Lane masks below 16 keep every exchange inside an aligned group
// of 16 lanes, which exists on both wave32 and wave64.
__device__ inline unsigned shfl_xor_u32(unsigned v, int lane_mask) {
#if defined(__HIPCC__)
  return __shfl_xor(v, lane_mask);
#else
  return __shfl_xor_sync(0xFFFFFFFFu, v, lane_mask);
#endif
}

// Lane `src` of this wave's value (every lane of the wave must take part).
__device__ inline unsigned shfl_u32(unsigned v, int src) {
#if defined(__HIPCC__)
  return __shfl(v, src);
#else
  return __shfl_sync(0xFFFFFFFFu, v, src);
#endif
}

}  // namespace fb
