// numba-cuda's extra-includes example: headers found through the extra search paths.
#include <add.cuh>
#include <mul.cuh>

extern "C" __device__ int saxpy(float* r, float a, float x, float y) {
  *r = myadd(mymul(a, x), y);
  return 0;
}
