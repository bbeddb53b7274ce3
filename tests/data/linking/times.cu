extern "C" __device__ int times2(float* r, float x) { *r = 2.0f * x; return 0; }
extern "C" __device__ int times3(float* r, float x) { *r = 3.0f * x; return 0; }
