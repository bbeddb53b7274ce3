// A grid-wide barrier: needs a cooperative launch.
#include <cooperative_groups.h>

extern "C" __device__ int grid_barrier(int* status) {
  cooperative_groups::this_grid().sync();
  *status = 0;
  return 0;
}
