// nvcc -O3 reference kernels for benchmarks/kernels.py: the same saxpy and
// 16x16 shared-memory tiled matmul as the Python kernels, timed with CUDA
// events (average of back-to-back runs). Prints one JSON object.
#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                                                  \
  do {                                                                            \
    cudaError_t e = (x);                                                          \
    if (e != cudaSuccess) {                                                       \
      std::fprintf(stderr, "%s failed: %s\n", #x, cudaGetErrorString(e));        \
      std::exit(1);                                                               \
    }                                                                             \
  } while (0)

constexpr int TPB = 16;
constexpr int GRID_STRIDE_BLOCKS = 1056;  // 8 blocks of 256 threads per SM of an H100/H200 (132 SMs)

__global__ void saxpy(float* r, float a, const float* x, const float* y, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) r[i] = a * x[i] + y[i];
}

// The grid-stride loop numba's documentation recommends, on a fixed grid.
__global__ void saxpy_grid_stride(float* r, float a, const float* x, const float* y, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
    r[i] = a * x[i] + y[i];
}

__global__ void fast_matmul(const float* A, const float* B, float* C, int n, int k, int m) {
  __shared__ float sA[TPB][TPB];
  __shared__ float sB[TPB][TPB];
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int tx = threadIdx.x, ty = threadIdx.y;
  float tmp = 0.f;
  for (int i = 0; i < gridDim.x; ++i) {
    sA[ty][tx] = 0;
    sB[ty][tx] = 0;
    if (y < n && tx + i * TPB < k) sA[ty][tx] = A[y * k + tx + i * TPB];
    if (x < m && ty + i * TPB < k) sB[ty][tx] = B[(ty + i * TPB) * m + x];
    __syncthreads();
    for (int j = 0; j < TPB; ++j) tmp += sA[ty][j] * sB[j][tx];
    __syncthreads();
  }
  if (y < n && x < m) C[y * m + x] = tmp;
}

constexpr int RED_TPB = 256;
constexpr int BINS = 256;

__global__ void block_sum(const float* x, float* out, long n) {
  __shared__ float s[RED_TPB];
  int tid = threadIdx.x;
  float acc = 0.f;
  for (long i = blockIdx.x * (long)blockDim.x + tid; i < n; i += (long)gridDim.x * blockDim.x) acc += x[i];
  s[tid] = acc;
  __syncthreads();
  for (int half = RED_TPB / 2; half > 0; half /= 2) {
    if (tid < half) s[tid] += s[tid + half];
    __syncthreads();
  }
  if (tid == 0) atomicAdd(out, s[0]);
}

__global__ void stencil(const double* a, double* out, int rows, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;  // (as cuda.grid(2): x is the first index)
  int j = blockIdx.y * blockDim.y + threadIdx.y;
  if (i > 0 && i < rows - 1 && j > 0 && j < cols - 1)
    out[i * cols + j] =
        0.2 * (a[i * cols + j] + a[(i - 1) * cols + j] + a[(i + 1) * cols + j] + a[i * cols + j - 1] + a[i * cols + j + 1]);
}

__global__ void histogram(const unsigned char* data, int* bins, long n) {
  __shared__ int h[BINS];
  int tid = threadIdx.x;
  h[tid] = 0;
  __syncthreads();
  for (long i = blockIdx.x * (long)blockDim.x + tid; i < n; i += (long)gridDim.x * blockDim.x) atomicAdd(&h[data[i]], 1);
  __syncthreads();
  atomicAdd(&bins[tid], h[tid]);
}

// Average time of `runs` back-to-back launches (after a warm-up), as the Python
// side measures its kernels.
template <typename Launch>
float average_ms(Launch launch, int runs) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  for (int w = 0; w < 3; ++w) launch();
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaEventRecord(start));
  for (int r = 0; r < runs; ++r) launch();
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  return ms / runs;
}

int main(int argc, char** argv) {
  long n = argc > 1 ? std::atol(argv[1]) : (1L << 26);
  int size = argc > 2 ? std::atoi(argv[2]) : 2048;
  int runs = argc > 3 ? std::atoi(argv[3]) : 50;
  float *r, *x, *y;
  CHECK(cudaMalloc(&r, n * 4));
  CHECK(cudaMalloc(&x, n * 4));
  CHECK(cudaMalloc(&y, n * 4));
  CHECK(cudaMemset(x, 0, n * 4));
  CHECK(cudaMemset(y, 0, n * 4));
  int threads = 256;
  long blocks = (n + threads - 1) / threads;
  float saxpy_ms = average_ms([&] { saxpy<<<blocks, threads>>>(r, 2.0f, x, y, n); }, runs);
  float stride_ms = average_ms([&] { saxpy_grid_stride<<<GRID_STRIDE_BLOCKS, threads>>>(r, 2.0f, x, y, n); }, runs);
  float *A, *B, *C;
  size_t bytes = (size_t)size * size * 4;
  CHECK(cudaMalloc(&A, bytes));
  CHECK(cudaMalloc(&B, bytes));
  CHECK(cudaMalloc(&C, bytes));
  CHECK(cudaMemset(A, 0, bytes));
  CHECK(cudaMemset(B, 0, bytes));
  dim3 block(TPB, TPB), grid((size + TPB - 1) / TPB, (size + TPB - 1) / TPB);
  float mm_ms = average_ms([&] { fast_matmul<<<grid, block>>>(A, B, C, size, size, size); }, runs / 5 + 1);
  float* total;
  CHECK(cudaMalloc(&total, 4));
  float sum_ms = average_ms([&] { block_sum<<<GRID_STRIDE_BLOCKS, RED_TPB>>>(x, total, n); }, runs);
  double *sa, *so;  // the stencil on size x size float64 (A's bytes reused, twice as many)
  CHECK(cudaMalloc(&sa, bytes * 2));
  CHECK(cudaMalloc(&so, bytes * 2));
  CHECK(cudaMemset(sa, 0, bytes * 2));
  dim3 sblock(16, 16);
  float stencil_ms = average_ms([&] { stencil<<<grid, sblock>>>(sa, so, size, size); }, runs);
  int* bins;
  CHECK(cudaMalloc(&bins, BINS * 4));
  float hist_ms = average_ms(
      [&] { histogram<<<GRID_STRIDE_BLOCKS, BINS>>>(reinterpret_cast<const unsigned char*>(x), bins, n); }, runs);
  std::printf("{\"saxpy_ms\": %.5f, \"grid_stride_ms\": %.5f, \"matmul_ms\": %.5f, \"sum_ms\": %.5f, "
              "\"stencil_ms\": %.5f, \"histogram_ms\": %.5f, \"n\": %ld, \"size\": %d}\n",
              saxpy_ms, stride_ms, mm_ms, sum_ms, stencil_ms, hist_ms, n, size);
  return 0;
}
