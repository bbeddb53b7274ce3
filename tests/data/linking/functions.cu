// numba-cuda's FFI documentation example: device functions in numba's ABI
// (int status, the result through the first pointer).
extern "C" __device__ int mul_f32_f32(float* return_value, float x, float y) {
  *return_value = x * y;
  return 0;
}

extern "C" __device__ int sum_reduce(float* return_value, float* array, int n) {
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) sum += array[i];
  *return_value = sum;
  return 0;
}
