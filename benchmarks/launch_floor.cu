// The driver's floor for benchmarks/launch_overhead.py: host time per cuLaunchKernel of a 1x32 grid with no
// arguments, 4 (3 pointers and a float), 16 pointers and 8 scalars (int64, float64); and with the parameters
// numba's kernel ABI passes for the array cases (a 1-D array is 7 parameters: meminfo, parent, nitems, itemsize,
// data, shape, stride): 22 (3 arrays and a float) and 112 (16 arrays). The driver copies each parameter, so these
// are the floor for a numba-cuda or cujit kernel taking arrays.
// As a program: best of 3 x 20 000 launches of each, printed as "k0 us k4 us k16 us k8 us k22 us k112 us".
// As a library (-DLAUNCH_FLOOR_LIBRARY -shared), loaded into a benchmark's process so that the floor and the
// library under test are timed alternately on the same context: launch_floor_us(arguments, n) launches the
// kernel with that many parameters (0, 4, 16, 8, 22 or 112) n times and returns µs per launch, or -1 for another
// count.
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

#define ARRAY_1D(A) \
  long long m##A, long long p##A, long long n##A, long long i##A, long long d##A, long long s##A, long long t##A
extern "C" __global__ void k22(ARRAY_1D(0), ARRAY_1D(1), ARRAY_1D(2), float x) {
  if (threadIdx.x > 1024) reinterpret_cast<float*>(d0)[0] = x;
}
extern "C" __global__ void k112(ARRAY_1D(0), ARRAY_1D(1), ARRAY_1D(2), ARRAY_1D(3), ARRAY_1D(4), ARRAY_1D(5),
                                ARRAY_1D(6), ARRAY_1D(7), ARRAY_1D(8), ARRAY_1D(9), ARRAY_1D(10), ARRAY_1D(11),
                                ARRAY_1D(12), ARRAY_1D(13), ARRAY_1D(14), ARRAY_1D(15)) {
  if (threadIdx.x > 1024) reinterpret_cast<float*>(d0)[0] = reinterpret_cast<float*>(d15)[0];
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
  long long arrays[16][7];  // numba's 1-D array parameters, each pointing at one of p
  void* twenty_two[22];
  void* one_twelve[112];
  Arguments() {
    float* buf;
    cudaMalloc(&buf, 16 * 1024 * sizeof(float));
    for (int i = 0; i < 16; ++i) p[i] = buf + i * 1024;
    four[0] = &p[0], four[1] = &p[1], four[2] = &p[2], four[3] = &x;
    for (int i = 0; i < 16; ++i) sixteen[i] = &p[i];
    for (int i = 0; i < 4; ++i) eight[2 * i] = &ints[i], eight[2 * i + 1] = &reals[i];
    for (int a = 0; a < 16; ++a) {
      const long long fields[7] = {0, 0, 1024, 4, reinterpret_cast<long long>(p[a]), 1024, 4};
      for (int f = 0; f < 7; ++f) arrays[a][f] = fields[f], one_twelve[7 * a + f] = &arrays[a][f];
    }
    for (int i = 0; i < 21; ++i) twenty_two[i] = one_twelve[i];
    twenty_two[21] = &x;
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
  static const CUfunction k[6] = {function_of((const void*)k0),  function_of((const void*)k4),
                                  function_of((const void*)k16), function_of((const void*)k8),
                                  function_of((const void*)k22), function_of((const void*)k112)};
  static const int counts[6] = {0, 4, 16, 8, 22, 112};
  int which = -1;
  for (int i = 0; i < 6; ++i)
    if (counts[i] == arguments) which = i;
  if (which < 0) return -1.0;
  void** const params_of[6] = {args.none, args.four, args.sixteen, args.eight, args.twenty_two, args.one_twelve};
  void** params = params_of[which];
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
  std::printf("k0 %.3f k4 %.3f k16 %.3f k8 %.3f k22 %.3f k112 %.3f\n", time_launches((const void*)k0, a.none),
              time_launches((const void*)k4, a.four), time_launches((const void*)k16, a.sixteen),
              time_launches((const void*)k8, a.eight), time_launches((const void*)k22, a.twenty_two),
              time_launches((const void*)k112, a.one_twelve));
  return 0;
}
#endif
