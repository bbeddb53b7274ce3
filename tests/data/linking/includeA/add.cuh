template <typename T> __device__ T myadd(T a, T b) { return a + b; }
