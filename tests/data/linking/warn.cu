// NVRTC warns: a variable declared but never referenced.
extern "C" __device__ int noisy(int* r, int x) {
  int unused;
  *r = x;
  return 0;
}
