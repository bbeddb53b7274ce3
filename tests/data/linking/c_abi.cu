// C-ABI functions of every shape a declaration can take.
extern "C" __device__ float times2(float x) { return x * 2.0f; }
extern "C" __device__ int const42() { return 42; }
extern "C" __device__ double fma3(double a, double b, double c) { return a * b + c; }
extern "C" __device__ void set42(int* p) { *p = 42; }
extern "C" __device__ void scale_in_place(float* p, int n, float s) {
  for (int i = 0; i < n; ++i) p[i] *= s;
}
