// One function in each ABI a declaration can name: C (the value returned) and numba's (a status returned,
// the value through the first pointer).
extern "C" __device__ double forms_times2(double x) { return 2.0 * x; }
extern "C" __device__ int forms_times2_numba(double* result, double x) {
  *result = 2.0 * x;
  return 0;
}
