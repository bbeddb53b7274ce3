// The driver's floor for benchmarks/launch_overhead.py: host time per cuLaunchKernel of a 1x32 grid with no
// arguments, 4 (3 pointers and a float), 16 pointers and 8 scalars (int64, float64), best of 3 x 20 000
// launches. Prints "k0 us k4 us k16 us k8 us".
#include <cuda.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>

extern "C" __global__ void k0() {}
extern "C" __global__ void k4(float* a, float* b, float* c, float x) {
  if (threadIdx.x > 1024) a[0] = b[0] + c[0] * x;
}
extern "C" __global__ void k16(float* a0, float* a1, float* a2, float* a3, float* a4, float* a5, float* a6, float* a7,
                               float* a8, float* a9, float* a10, float* a11, float* a12, float* a13, float* a14,
                               float* a15) {
  if (threadIdx.x > 1024) a0[0] = a15[0];
}

extern "C" __global__ void k8(long long p, double q, long long r, double s, long long t, double u, long long v,
                              double w) {
  if (threadIdx.x > 1024 && p + q + r + s + t + u + v + w > 1e300) asm volatile("trap;");
}

static double time_launches(const void* symbol, void** params) {
  cudaFunction_t fn;
  cudaGetFuncBySymbol(&fn, symbol);
  CUfunction f = reinterpret_cast<CUfunction>(fn);
  for (int i = 0; i < 200; ++i) cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr);
  cuCtxSynchronize();
  const int n = 20000;
  double best = 1e30;
  for (int round = 0; round < 3; ++round) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr);
    cuCtxSynchronize();
    double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / n;
    if (us < best) best = us;
  }
  return best;
}

int main() {
  cudaFree(nullptr);  // the runtime's context, current for the driver calls
  float* buf;
  cudaMalloc(&buf, 16 * 1024 * sizeof(float));
  float x = 2.0f;
  float* p[16];
  for (int i = 0; i < 16; ++i) p[i] = buf + i * 1024;
  void* none[1] = {nullptr};
  void* four[4] = {&p[0], &p[1], &p[2], &x};
  void* sixteen[16];
  for (int i = 0; i < 16; ++i) sixteen[i] = &p[i];
  long long ints[4] = {1, 3, 5, 7};
  double reals[4] = {2.0, 4.0, 6.0, 8.0};
  void* eight[8] = {&ints[0], &reals[0], &ints[1], &reals[1], &ints[2], &reals[2], &ints[3], &reals[3]};
  std::printf("k0 %.3f k4 %.3f k16 %.3f k8 %.3f\n", time_launches((const void*)k0, none),
              time_launches((const void*)k4, four), time_launches((const void*)k16, sixteen),
              time_launches((const void*)k8, eight));
  return 0;
}
