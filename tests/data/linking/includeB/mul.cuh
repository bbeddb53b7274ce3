template <typename T> __device__ T mymul(T a, T b) { return a * b; }
