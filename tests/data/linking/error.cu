extern "C" __device__ int broken(int* r, int x) {
  SYNTAX ERROR HERE
  return 0;
}
