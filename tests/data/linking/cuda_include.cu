// CUDA headers are on NVRTC's include path.
#include <cuda_device_runtime_api.h>
#include <cooperative_groups.h>

extern "C" __device__ int block_rank(int* r) {
  *r = static_cast<int>(cooperative_groups::this_thread_block().thread_rank());
  return 0;
}
