// The driver's floor for benchmarks/launch_overhead.py: host time per cuLaunchKernel of a 1x32 grid with no
// arguments, 4 (3 pointers and a float), 16 pointers and 8 scalars (int64, float64).
// As a program: best of 3 x 20 000 launches of each, printed as "k0 us k4 us k16 us k8 us".
// As a library (-DLAUNCH_FLOOR_LIBRARY -shared), loaded into a benchmark's process so that the floor and the
// library under test are timed alternately on the same context: launch_floor_us(arguments, n) launches the
// kernel with that many arguments (0, 4, 16 or 8) n times and returns µs per launch, or -1 for another count.
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

namespace {

struct Arguments {
  float x = 2.0f;
  float* p[16];
  long long ints[4] = {1, 3, 5, 7};
  double reals[4] = {2.0, 4.0, 6.0, 8.0};
  void* none[1] = {nullptr};
  void* four[4];
  void* sixteen[16];
  void* eight[8];
  Arguments() {
    float* buf;
    cudaMalloc(&buf, 16 * 1024 * sizeof(float));
    for (int i = 0; i < 16; ++i) p[i] = buf + i * 1024;
    four[0] = &p[0], four[1] = &p[1], four[2] = &p[2], four[3] = &x;
    for (int i = 0; i < 16; ++i) sixteen[i] = &p[i];
    for (int i = 0; i < 4; ++i) eight[2 * i] = &ints[i], eight[2 * i + 1] = &reals[i];
  }
};

CUfunction function_of(const void* symbol) {
  cudaFunction_t fn;
  cudaGetFuncBySymbol(&fn, symbol);
  return reinterpret_cast<CUfunction>(fn);
}

}  // namespace

#ifdef LAUNCH_FLOOR_LIBRARY
extern "C" double launch_floor_us(int arguments, int n) {
  static Arguments args;  // made on the first call, on the caller's (primary) context
  static const CUfunction k[4] = {function_of((const void*)k0), function_of((const void*)k4),
                                  function_of((const void*)k16), function_of((const void*)k8)};
  const int which = arguments == 0 ? 0 : arguments == 4 ? 1 : arguments == 16 ? 2 : arguments == 8 ? 3 : -1;
  if (which < 0) return -1.0;
  void** params = which == 0 ? args.none : which == 1 ? args.four : which == 2 ? args.sixteen : args.eight;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) cuLaunchKernel(k[which], 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr);
  cuCtxSynchronize();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / n;
}
#else
static double time_launches(const void* symbol, void** params) {
  CUfunction f = function_of(symbol);
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
  Arguments a;
  std::printf("k0 %.3f k4 %.3f k16 %.3f k8 %.3f\n", time_launches((const void*)k0, a.none),
              time_launches((const void*)k4, a.four), time_launches((const void*)k16, a.sixteen),
              time_launches((const void*)k8, a.eight));
  return 0;
}
#endif
