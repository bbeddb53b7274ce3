// The driver's floor for benchmarks/launch_overhead.py: host time per cuLaunchKernel of a 1x32 grid with no
// arguments, 4 (3 pointers and a float) and 16 pointers, best of 3 x 20 000 launches. Prints "k0 us k4 us k16 us".
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
  std::printf("k0 %.3f k4 %.3f k16 %.3f\n", time_launches((const void*)k0, none), time_launches((const void*)k4, four),
              time_launches((const void*)k16, sixteen));
  return 0;
}
