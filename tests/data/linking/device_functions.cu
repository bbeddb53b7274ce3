// Built by the tests into every link kind (.ptx .cubin .fatbin .o .a .ltoir):
// one function in numba's device ABI and one in the C ABI.


extern "C" __device__ int add_from_numba(unsigned int* result, unsigned int a, unsigned int b) {
  *result = a + b;
  return 0;
}

extern "C" __device__ unsigned int add_cabi(unsigned int a, unsigned int b) { return a + b; }
