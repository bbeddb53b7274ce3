// CUDA headers are on NVRTC's include path.
#include <curand_kernel.h>

extern "C" __device__ int first_curand(unsigned int* r, unsigned long long seed) {
  curandState state;
  curand_init(seed, 0, 0, &state);
  *r = curand(&state);
  return 0;
}
