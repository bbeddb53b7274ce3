/* A stand-in for libcuda.so.1 that runs on the host, so the runtime's GPU test suite can run on machines
 * without a GPU: CUJIT_CUDA_DRIVER=<this library> python -m pytest tests/test_runtime_gpu.py
 *
 * It exports the Driver API entry points cujit resolves, with the driver's checks that matter to the runtime
 * (a current context for memory, stream and module calls; device pointers that are live allocations; launch
 * limits of the kernel), "device" memory in host memory, and host versions of the kernels of
 * tests/test_runtime_gpu.py that read their parameters in numba's kernel ABI from the launch's parameter
 * pointers. fake_live_* report what is still allocated or loaded, for leak checks.
 *
 * Build: cc -shared -fPIC -O1 -o libfakecuda.so tests/fake_cuda/fake_libcuda.c -lpthread */
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum {
  OK = 0, INVALID_VALUE = 1, OUT_OF_MEMORY = 2, NO_DEVICE = 100, INVALID_DEVICE = 101, INVALID_IMAGE = 200,
  INVALID_CONTEXT = 201, INVALID_HANDLE = 400, NOT_FOUND = 500, ILLEGAL_ADDRESS = 700
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int initialized;

/* ---- errors ---- */
static const char *name_of(CUresult r) {
  switch (r) {
    case OK: return "CUDA_SUCCESS";
    case INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
    case OUT_OF_MEMORY: return "CUDA_ERROR_OUT_OF_MEMORY";
    case NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
    case INVALID_DEVICE: return "CUDA_ERROR_INVALID_DEVICE";
    case INVALID_IMAGE: return "CUDA_ERROR_INVALID_IMAGE";
    case INVALID_CONTEXT: return "CUDA_ERROR_INVALID_CONTEXT";
    case INVALID_HANDLE: return "CUDA_ERROR_INVALID_HANDLE";
    case NOT_FOUND: return "CUDA_ERROR_NOT_FOUND";
    case ILLEGAL_ADDRESS: return "CUDA_ERROR_ILLEGAL_ADDRESS";
    default: return NULL;
  }
}
CUresult cuGetErrorName(CUresult r, const char **out) {
  *out = name_of(r);
  return *out ? OK : INVALID_VALUE;
}
CUresult cuGetErrorString(CUresult r, const char **out) {
  *out = name_of(r) ? "fake driver error" : NULL;
  return *out ? OK : INVALID_VALUE;
}

/* ---- init, devices, contexts ---- */
CUresult cuInit(unsigned flags) {
  initialized = 1;
  return flags == 0 ? OK : INVALID_VALUE;
}
CUresult cuDriverGetVersion(int *v) { *v = 13000; return OK; }
/* CUJIT_FAKE_DEVICES=n (1 to 8, default 1) pretends n GPUs, each with its own primary context, so the
 * multi-device paths run without GPUs (tests/runtime/test_multi_device.py). */
#define MAX_DEVICES 8
static int device_count(void) {
  const char *env = getenv("CUJIT_FAKE_DEVICES");
  int n = env ? atoi(env) : 1;
  return n < 1 ? 1 : n > MAX_DEVICES ? MAX_DEVICES : n;
}
#define CHECK_DEVICE(dev) do { if ((dev) < 0 || (dev) >= device_count()) return INVALID_DEVICE; } while (0)
CUresult cuDeviceGetCount(int *n) { *n = device_count(); return OK; }
CUresult cuDeviceGet(int *dev, int ordinal) {
  CHECK_DEVICE(ordinal);
  *dev = ordinal;
  return OK;
}
CUresult cuDeviceGetName(char *name, int len, int dev) {
  CHECK_DEVICE(dev);
  if (dev == 0) strncpy(name, "cujit fake GPU", (size_t)len);
  else snprintf(name, (size_t)len, "cujit fake GPU %d", dev);
  return OK;
}
CUresult cuDeviceTotalMem_v2(size_t *bytes, int dev) { *bytes = (size_t)16 << 30; return OK; }
CUresult cuDeviceGetUuid_v2(unsigned char *uuid, int dev) {
  CHECK_DEVICE(dev);
  for (int i = 0; i < 16; ++i) uuid[i] = (unsigned char)(0xa0 + i + dev);
  return OK;
}
CUresult cuDeviceGetAttribute(int *v, int attr, int dev) {
  CHECK_DEVICE(dev);
  switch (attr) {
    case 1: case 2: case 3: *v = 1024; break;
    case 4: *v = 64; break;
    case 5: *v = 2147483647; break;
    case 6: case 7: *v = 65535; break;
    case 8: *v = 49152; break;
    case 9: *v = 65536; break;
    case 10: *v = 32; break;
    case 12: *v = 65536; break;
    case 16: *v = 132; break;
    case 31: case 33: case 41: case 95: *v = 1; break;
    case 39: *v = 2048; break;
    case 75: *v = 9; break;
    case 97: *v = 232448; break;
    default:
      if (attr > 200) return INVALID_VALUE;
      *v = 0;
  }
  return OK;
}

typedef struct { int device; } Context;
static Context primaries[MAX_DEVICES] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}};
static __thread Context *current; /* the top of this thread's context stack */
/* Modules loaded and cujit kernels launched, by the device of the context current at the time. */
static int loads_on[MAX_DEVICES], launches_on[MAX_DEVICES];
int fake_loads_on(int dev) { return __atomic_load_n(&loads_on[dev], __ATOMIC_RELAXED); }
int fake_launches_on(int dev) { return __atomic_load_n(&launches_on[dev], __ATOMIC_RELAXED); }

CUresult cuDevicePrimaryCtxRetain(Context **ctx, int dev) {
  CHECK_DEVICE(dev);
  *ctx = &primaries[dev];
  return OK;
}
CUresult cuCtxSetCurrent(Context *ctx) { current = ctx; return OK; }
/* More contexts on device 0, for the per-context logic (a module and a setup per context). */
CUresult cuCtxCreate_v2(Context **ctx, unsigned flags, int dev) {
  CHECK_DEVICE(dev);
  *ctx = calloc(1, sizeof **ctx);
  (*ctx)->device = dev;
  return OK;
}
CUresult cuCtxDestroy_v2(Context *ctx) {
  if (ctx >= primaries && ctx < primaries + MAX_DEVICES) return INVALID_VALUE;
  if (current == ctx) current = NULL;
  free(ctx);
  return OK;
}
CUresult cuCtxGetCurrent(Context **ctx) { *ctx = current; return OK; }
CUresult cuCtxGetDevice(int *dev) {
  if (!current) return INVALID_CONTEXT;
  *dev = current->device;
  return OK;
}
CUresult cuCtxSynchronize(void) { return current ? OK : INVALID_CONTEXT; }
#define NEED_CONTEXT() do { if (!current) return INVALID_CONTEXT; } while (0)

/* ---- memory ---- */
typedef struct Alloc { char *base; size_t size; struct Alloc *next; } Alloc;
static Alloc *allocs;
static long long live_bytes;
static const long long total_bytes = 16LL << 30;

static int covered(CUdeviceptr p, size_t n) { /* [p, p+n) inside a live allocation; lock held */
  for (Alloc *a = allocs; a; a = a->next)
    if ((char *)p >= a->base && (char *)p + n <= a->base + a->size) return 1;
  return 0;
}
static int check_range(CUdeviceptr p, size_t n) {
  pthread_mutex_lock(&lock);
  int ok = covered(p, n);
  pthread_mutex_unlock(&lock);
  return ok;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
  NEED_CONTEXT();
  if (n == 0) return INVALID_VALUE;
  pthread_mutex_lock(&lock);
  if (live_bytes + (long long)n > total_bytes) { pthread_mutex_unlock(&lock); return OUT_OF_MEMORY; }
  Alloc *a = malloc(sizeof *a);
  a->base = malloc(n);
  a->size = n;
  a->next = allocs;
  allocs = a;
  live_bytes += (long long)n;
  *p = (CUdeviceptr)a->base;
  pthread_mutex_unlock(&lock);
  return OK;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  NEED_CONTEXT();
  pthread_mutex_lock(&lock);
  for (Alloc **a = &allocs; *a; a = &(*a)->next) {
    if ((*a)->base == (char *)p) {
      Alloc *dead = *a;
      *a = dead->next;
      live_bytes -= (long long)dead->size;
      free(dead->base);
      free(dead);
      pthread_mutex_unlock(&lock);
      return OK;
    }
  }
  pthread_mutex_unlock(&lock);
  return INVALID_VALUE;
}
CUresult cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size, CUdeviceptr p) {
  NEED_CONTEXT();
  pthread_mutex_lock(&lock);
  for (Alloc *a = allocs; a; a = a->next) {
    if ((char *)p >= a->base && (char *)p < a->base + a->size) {
      if (base) *base = (CUdeviceptr)a->base;
      if (size) *size = a->size;
      pthread_mutex_unlock(&lock);
      return OK;
    }
  }
  pthread_mutex_unlock(&lock);
  return INVALID_VALUE;
}
CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total) {
  NEED_CONTEXT();
  *free_bytes = (size_t)(total_bytes - live_bytes);
  *total = (size_t)total_bytes;
  return OK;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *h, size_t n) {
  NEED_CONTEXT();
  if (!check_range(d, n)) return INVALID_VALUE;
  memcpy((void *)d, h, n);
  return OK;
}
CUresult cuMemcpyDtoH_v2(void *h, CUdeviceptr d, size_t n) {
  NEED_CONTEXT();
  if (!check_range(d, n)) return INVALID_VALUE;
  memcpy(h, (void *)d, n);
  return OK;
}
CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) {
  NEED_CONTEXT();
  if (!check_range(d, n) || !check_range(s, n)) return INVALID_VALUE;
  memmove((void *)d, (void *)s, n);
  return OK;
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *h, size_t n, void *s) { return cuMemcpyHtoD_v2(d, h, n); }
CUresult cuMemcpyDtoHAsync_v2(void *h, CUdeviceptr d, size_t n, void *s) { return cuMemcpyDtoH_v2(h, d, n); }
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr src, size_t n, void *s) { return cuMemcpyDtoD_v2(d, src, n); }
CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) {
  NEED_CONTEXT();
  if (!check_range(d, n)) return INVALID_VALUE;
  memset((void *)d, v, n);
  return OK;
}
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, void *s) { return cuMemsetD8_v2(d, v, n); }

/* ---- streams ---- */
static int live_streams;
CUresult cuStreamCreate(void **s, unsigned flags) {
  NEED_CONTEXT();
  *s = malloc(16);
  __atomic_add_fetch(&live_streams, 1, __ATOMIC_SEQ_CST);
  return OK;
}
CUresult cuStreamGetFlags(void *s, unsigned *flags) { NEED_CONTEXT(); *flags = 0; return OK; }

/* Events order streams; the fake runs everything at once, so it only counts the waits. An event keeps its
 * flags and the time it was recorded at (for cuEventElapsedTime, in the events section below). */
typedef struct { unsigned flags; int recorded; double ms; Context *ctx; } Event;
static int stream_waits, live_events;
static double now_ms(void);
CUresult cuEventCreate(void **e, unsigned flags) {
  NEED_CONTEXT();
  Event *ev = calloc(1, sizeof *ev);
  ev->flags = flags;
  ev->ctx = current;
  *e = ev;
  __atomic_add_fetch(&live_events, 1, __ATOMIC_SEQ_CST);
  return OK;
}
CUresult cuEventRecord(void *e, void *s) {
  NEED_CONTEXT();
  Event *ev = e;
  if (ev->ctx != current) return INVALID_HANDLE; /* the driver: the event's context must be current */
  ev->recorded = 1;
  ev->ms = now_ms();
  return OK;
}
CUresult cuEventDestroy_v2(void *e) {
  free(e);
  __atomic_sub_fetch(&live_events, 1, __ATOMIC_SEQ_CST);
  return OK;
}
CUresult cuStreamWaitEvent(void *s, void *e, unsigned flags) { NEED_CONTEXT(); ++stream_waits; return OK; }
int fake_stream_waits(void) { return stream_waits; }

CUresult cuStreamDestroy_v2(void *s) {
  if ((uintptr_t)s <= 2) return INVALID_HANDLE;
  free(s);
  __atomic_sub_fetch(&live_streams, 1, __ATOMIC_SEQ_CST);
  return OK;
}
CUresult cuStreamSynchronize(void *s) { NEED_CONTEXT(); return OK; }
CUresult cuStreamQuery(void *s) { NEED_CONTEXT(); return OK; }

/* ---- libraries, modules, kernels ---- */
struct Library;
typedef struct Kernel {
  struct Library *lib;
  const char *name;
  int max_threads;
  int max_dynamic_shared;
  int carveout;
} Kernel;

#define NKERNELS 7
static const char *kernel_names[NKERNELS] = {"saxpy", "affine2d", "scalars", "reverse_shared", "read_magic",
                                             "bounded", "slow_add"};
typedef struct Library {
  Kernel kernels[NKERNELS];
  Kernel other;          /* any other name (a kernel cujit compiled): launches do nothing */
  char other_name[1024];
  int magic; /* the library's __device__ int magic (in "device" memory) */
} Library;
static int live_libraries;

static CUresult load(Library **out, const void *image) {
  NEED_CONTEXT();
  const char *text = image;
  static const unsigned char fatbin_magic[4] = {0x50, 0xed, 0x55, 0xba};
  if (!(memcmp(text, "\x7f" "ELF", 4) == 0 || memcmp(text, fatbin_magic, 4) == 0 || strstr(text, ".entry") != NULL))
    return INVALID_IMAGE;
  Library *lib = calloc(1, sizeof *lib);
  for (int i = 0; i < NKERNELS; ++i) {
    lib->kernels[i].lib = lib;
    lib->kernels[i].name = kernel_names[i];
    lib->kernels[i].max_threads = strcmp(kernel_names[i], "bounded") == 0 ? 128 : 1024;
    lib->kernels[i].max_dynamic_shared = 49152;
    lib->kernels[i].carveout = -1;
  }
  pthread_mutex_lock(&lock); /* `magic` must look like device memory for copies into it */
  Alloc *a = malloc(sizeof *a);
  a->base = (char *)&lib->magic;
  a->size = sizeof lib->magic;
  a->next = allocs;
  allocs = a;
  pthread_mutex_unlock(&lock);
  __atomic_add_fetch(&live_libraries, 1, __ATOMIC_SEQ_CST);
  __atomic_add_fetch(&loads_on[current->device], 1, __ATOMIC_RELAXED);
  *out = lib;
  return OK;
}
static CUresult unload(Library *lib) {
  pthread_mutex_lock(&lock);
  for (Alloc **a = &allocs; *a; a = &(*a)->next) {
    if ((*a)->base == (char *)&lib->magic) {
      Alloc *dead = *a;
      *a = dead->next;
      free(dead);
      break;
    }
  }
  pthread_mutex_unlock(&lock);
  free(lib);
  __atomic_sub_fetch(&live_libraries, 1, __ATOMIC_SEQ_CST);
  return OK;
}
static CUresult find_kernel(Kernel **out, Library *lib, const char *name) {
  for (int i = 0; i < NKERNELS; ++i) {
    if (strcmp(lib->kernels[i].name, name) == 0) {
      *out = &lib->kernels[i];
      return OK;
    }
  }
  if (strncmp(name, "_Z", 2) != 0 || strlen(name) >= sizeof lib->other_name) return NOT_FOUND;
  strcpy(lib->other_name, name); /* a mangled name: one of cujit's kernels */
  lib->other = (Kernel){lib, lib->other_name, 1024, 49152, -1};
  *out = &lib->other;
  return OK;
}
static CUresult find_global(CUdeviceptr *p, size_t *n, Library *lib, const char *name) {
  if (strcmp(name, "magic") != 0) return NOT_FOUND;
  *p = (CUdeviceptr)&lib->magic;
  *n = sizeof lib->magic;
  return OK;
}

CUresult cuLibraryLoadData(Library **lib, const void *code, void *o, void **ov, unsigned n, void *lo, void **lov,
                           unsigned ln) { return load(lib, code); }
CUresult cuLibraryUnload(Library *lib) { return unload(lib); }
CUresult cuLibraryGetKernel(Kernel **k, Library *lib, const char *name) { return find_kernel(k, lib, name); }
CUresult cuLibraryGetGlobal(CUdeviceptr *p, size_t *n, Library *lib, const char *name) {
  return find_global(p, n, lib, name);
}
CUresult cuKernelGetFunction(Kernel **f, Kernel *k) { NEED_CONTEXT(); *f = k; return OK; }
CUresult cuModuleLoadData(Library **lib, const void *image) { return load(lib, image); }
CUresult cuModuleUnload(Library *lib) { return unload(lib); }
CUresult cuModuleGetFunction(Kernel **k, Library *lib, const char *name) { NEED_CONTEXT(); return find_kernel(k, lib, name); }
CUresult cuModuleGetGlobal_v2(CUdeviceptr *p, size_t *n, Library *lib, const char *name) {
  NEED_CONTEXT();
  return find_global(p, n, lib, name);
}

CUresult cuFuncGetAttribute(int *v, int attr, Kernel *k) {
  switch (attr) {
    case 0: *v = k->max_threads; break;
    case 4: *v = 16; break;
    case 5: *v = 80; break;
    case 6: *v = 90; break;
    case 8: *v = k->max_dynamic_shared; break;
    case 9: *v = k->carveout; break;
    default: *v = 0;
  }
  return OK;
}
CUresult cuFuncSetAttribute(Kernel *k, int attr, int value) {
  NEED_CONTEXT();
  if (attr == 9) {
    if (value < -1 || value > 100) return INVALID_VALUE;
    k->carveout = value;
    return OK;
  }
  if (attr != 8) return INVALID_VALUE;
  if (value > 232448) return INVALID_VALUE;
  k->max_dynamic_shared = value;
  return OK;
}

/* ---- launches: the test kernels on the host, reading numba's kernel ABI ---- */
#define P(T, i) (*(T *)params[i])
typedef struct { char *data; long long nitems, itemsize, shape[2], strides[2]; } Arr;

static int array_at(void **params, int first, int ndim, Arr *a) { /* 0 when the memory is not live */
  if (P(void *, first) != NULL || P(void *, first + 1) != NULL) return 0; /* meminfo, parent */
  a->nitems = P(long long, first + 2);
  a->itemsize = P(long long, first + 3);
  a->data = P(char *, first + 4);
  long long lo = 0, hi = 0;
  for (int d = 0; d < ndim; ++d) {
    a->shape[d] = P(long long, first + 5 + d);
    a->strides[d] = P(long long, first + 5 + ndim + d);
    long long span = (a->shape[d] - 1) * a->strides[d];
    if (span < 0) lo += span; else hi += span;
  }
  return a->nitems == 0 || check_range((CUdeviceptr)(a->data + lo), (size_t)(hi - lo + a->itemsize));
}
#define AT1(T, a, i) (*(T *)((a).data + (i) * (a).strides[0]))
#define AT2(T, a, i, j) (*(T *)((a).data + (i) * (a).strides[0] + (j) * (a).strides[1]))

/* ---- parameter capture: a test names the sizes of a cujit kernel's parameters; its launches copy them ---- */
static int capture_count, capture_sizes[1024], launches_of_others;
static unsigned long long captured[1024];
void fake_capture_params(int n, const int *sizes) {
  capture_count = n < 1024 ? n : 1024;
  memcpy(capture_sizes, sizes, sizeof(int) * (size_t)capture_count);
  launches_of_others = 0;
}
unsigned long long fake_param(int i) { return captured[i]; } /* zero-extended from its size */
int fake_launches(void) { return __atomic_load_n(&launches_of_others, __ATOMIC_RELAXED); }

/* A launch's parameters given as one buffer (cuLaunchKernel's `extra`: CU_LAUNCH_PARAM_BUFFER_POINTER 1,
 * CU_LAUNCH_PARAM_BUFFER_SIZE 2, CU_LAUNCH_PARAM_END 0) as the pointer array the kernels below read: each parameter
 * at the C rule's offset (aligned to its size) for the sizes a test captures, else 8 bytes each (what the named
 * kernels take through the fast path: arrays and 8-byte or trailing scalars). 0 for a malformed `extra`. */
static int params_from_extra(void **extra, void **out, int max) {
  char *buf = NULL;
  size_t size = (size_t)-1;
  for (int i = 0; extra[i] != NULL; i += 2) {
    if (extra[i] == (void *)1) buf = (char *)extra[i + 1];
    else if (extra[i] == (void *)2) size = *(size_t *)extra[i + 1];
    else return 0;
  }
  if (buf == NULL || size == (size_t)-1) return 0;
  size_t offset = 0;
  for (int i = 0; i < max; ++i) {
    size_t n = i < capture_count ? (size_t)capture_sizes[i] : 8;
    offset = (offset + n - 1) / n * n;
    out[i] = offset < size ? buf + offset : NULL;
    offset += n;
  }
  return 1;
}

CUresult cuLaunchKernel(Kernel *k, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void *stream, void **params, void **extra) {
  NEED_CONTEXT();
  void *from_extra[1024];
  if (params != NULL && extra != NULL) return INVALID_VALUE; /* one or the other, as the driver says */
  if (extra != NULL) {
    if (!params_from_extra(extra, from_extra, 1024)) return INVALID_VALUE;
    params = from_extra;
  }
  if (!gx || !gy || !gz || !bx || !by || !bz || bx > 1024 || by > 1024 || bz > 64 || gy > 65535 || gz > 65535)
    return INVALID_VALUE;
  if ((long long)bx * by * bz > k->max_threads || (int)shared > k->max_dynamic_shared) return INVALID_VALUE;
  long long nx = (long long)gx * bx, ny = (long long)gy * by;
  Arr a, b, c;
  const char *name = k->name;
  if (strcmp(name, "saxpy") == 0) {
    if (!array_at(params, 0, 1, &a) || !array_at(params, 8, 1, &b) || !array_at(params, 15, 1, &c))
      return ILLEGAL_ADDRESS;
    float alpha = P(float, 7);
    for (long long i = 0; i < nx && i < a.shape[0]; ++i) AT1(float, a, i) = alpha * AT1(float, b, i) + AT1(float, c, i);
  } else if (strcmp(name, "affine2d") == 0) {
    if (!array_at(params, 0, 2, &a) || !array_at(params, 9, 2, &b)) return ILLEGAL_ADDRESS;
    for (long long i = 0; i < ny && i < a.shape[0]; ++i)
      for (long long j = 0; j < nx && j < a.shape[1]; ++j)
        AT2(double, a, i, j) = 2.0 * AT2(double, b, i, j) + 1000.0 * i + j;
  } else if (strcmp(name, "scalars") == 0) {
    if (!array_at(params, 0, 1, &a) || a.shape[0] < 18) return ILLEGAL_ADDRESS;
    double *out = (double *)a.data;
    out[0] = P(signed char, 7); out[1] = P(unsigned short, 8); out[2] = P(int, 9); out[3] = (double)P(long long, 10);
    out[4] = (double)P(unsigned long long, 11); out[5] = P(unsigned short, 12); out[6] = P(float, 13);
    out[7] = P(double, 14); out[8] = P(unsigned char, 15) ? 1.0 : 0.0; out[9] = P(double, 16);
    out[10] = P(double, 17); out[11] = P(int, 18); out[12] = P(float, 19);
    out[13] = (double)a.nitems; out[14] = (double)a.itemsize; out[15] = (double)a.shape[0];
    out[16] = (double)a.strides[0]; out[17] = 1.0; /* array_at checked meminfo and parent are null */
  } else if (strcmp(name, "reverse_shared") == 0) {
    if (!array_at(params, 0, 1, &a) || !array_at(params, 7, 1, &b)) return ILLEGAL_ADDRESS;
    long long n = b.shape[0];
    if ((long long)shared < n * 4) return ILLEGAL_ADDRESS; /* the kernel would overrun its shared memory */
    for (long long i = 0; i < n; ++i) ((float *)a.data)[i] = ((float *)b.data)[n - 1 - i];
  } else if (strcmp(name, "read_magic") == 0) {
    if (!array_at(params, 0, 1, &a)) return ILLEGAL_ADDRESS;
    ((int *)a.data)[0] = k->lib->magic;
  } else if (strcmp(name, "bounded") == 0) {
    if (!array_at(params, 0, 1, &a)) return ILLEGAL_ADDRESS;
    for (unsigned t = 0; t < bx; ++t) ((int *)a.data)[t] = (int)t;
  } else if (k == &k->lib->other) {
    for (int i = 0; i < capture_count; ++i) {
      captured[i] = 0;
      memcpy(&captured[i], params[i], (size_t)capture_sizes[i]);
    }
    __atomic_fetch_add(&launches_of_others, 1, __ATOMIC_RELAXED);  /* launches come from many threads at once */
    __atomic_fetch_add(&launches_on[current->device], 1, __ATOMIC_RELAXED);
  } else if (strcmp(name, "slow_add") == 0) {
    if (!array_at(params, 0, 1, &a)) return ILLEGAL_ADDRESS;
    float v = P(float, 7);
    int iters = P(int, 8);
    for (long long i = 0; i < nx && i < a.shape[0]; ++i) {
      float acc = ((float *)a.data)[i];
      for (int it = 0; it < iters && it < 4; ++it) acc = acc * 0.999999f + 0.000001f * acc;
      ((float *)a.data)[i] = acc + v;
    }
  }
  return OK;
}
CUresult cuLaunchCooperativeKernel(Kernel *k, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                   unsigned bz, unsigned shared, void *stream, void **params) {
  return cuLaunchKernel(k, gx, gy, gz, bx, by, bz, shared, stream, params, NULL);
}

/* ---- for leak checks ---- */
long long fake_live_bytes(void) { return live_bytes; }
int fake_live_libraries(void) { return live_libraries; }
int fake_live_streams(void) { return live_streams; }

/* ---- the host runtime API: the context stack, events, the profiler (tests/runtime/test_events.py,
 * test_multi_device.py) ---- */
#include <time.h>
#define NOT_READY 600
#define CONTEXT_STACK_DEPTH 64
static __thread Context *stack_below[CONTEXT_STACK_DEPTH]; /* the contexts under `current` */
static __thread int stack_depth;

CUresult cuCtxPushCurrent_v2(Context *ctx) {
  if (!ctx) return INVALID_CONTEXT;
  if (current) {
    if (stack_depth == CONTEXT_STACK_DEPTH) return OUT_OF_MEMORY;
    stack_below[stack_depth++] = current;
  }
  current = ctx;
  return OK;
}
CUresult cuCtxPopCurrent_v2(Context **ctx) {
  if (!current) return INVALID_CONTEXT;
  if (ctx) *ctx = current;
  current = stack_depth ? stack_below[--stack_depth] : NULL;
  return OK;
}
int fake_context_depth(void) { return current ? stack_depth + 1 : 0; }
int fake_current_device(void) { return current ? current->device : -1; }

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}
/* fake_events_pending(1): queries answer CUDA_ERROR_NOT_READY, as for work still running. */
static int events_pending;
void fake_events_pending(int pending) { events_pending = pending; }
int fake_live_events(void) { return live_events; }

CUresult cuEventSynchronize(void *e) { NEED_CONTEXT(); return e ? OK : INVALID_HANDLE; }
CUresult cuEventQuery(void *e) {
  NEED_CONTEXT();
  if (!e) return INVALID_HANDLE;
  return events_pending && ((Event *)e)->recorded ? NOT_READY : OK;
}
CUresult cuEventElapsedTime_v2(float *ms, void *start, void *end) {
  NEED_CONTEXT();
  Event *a = start, *b = end;
  if (!a || !b || (a->flags & 2) || (b->flags & 2) || !a->recorded || !b->recorded) return INVALID_HANDLE;
  if (events_pending) return NOT_READY;
  *ms = (float)(b->ms - a->ms);
  return OK;
}

static int profiling;
CUresult cuProfilerStart(void) { NEED_CONTEXT(); profiling = 1; return OK; }
CUresult cuProfilerStop(void) { NEED_CONTEXT(); profiling = 0; return OK; }
int fake_profiling(void) { return profiling; }

/* ---- host memory, managed memory, IPC (tests/runtime/test_host_memory.py, test_memory_managers.py) ----
 * Mapped cuMemHostAlloc memory is one memory file mapped twice: the host address and another "device" address
 * (the one cuMemHostGetDevicePointer gives), so a runtime that hands a kernel the host address is caught. The
 * device side of mapped memory joins the live allocations, so copies and the test kernels accept it; it is
 * not counted in fake_live_bytes. Managed memory is device memory (cuMemAlloc's) with one address. IPC
 * handles open in the process that made them only: the fake has one address space. */
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#define HOST_ALREADY_REGISTERED 712
#define HOST_NOT_REGISTERED 713
enum { HOSTALLOC_DEVICEMAP = 2, HOSTREGISTER_DEVICEMAP = 2 };

typedef struct Host { char *host, *device; size_t size; int registered; struct Host *next; } Host;
static Host *hosts;
static int live_host_allocs, live_registrations, open_ipc_mappings;
static unsigned last_host_alloc_flags, last_register_flags, last_managed_flags;
int fake_live_host_allocs(void) { return live_host_allocs; }
int fake_live_registrations(void) { return live_registrations; }
int fake_open_ipc_mappings(void) { return open_ipc_mappings; }
unsigned fake_last_host_alloc_flags(void) { return last_host_alloc_flags; }
unsigned fake_last_register_flags(void) { return last_register_flags; }
unsigned fake_last_managed_flags(void) { return last_managed_flags; }

static void track_device(char *base, size_t n) { /* lock held */
  Alloc *a = malloc(sizeof *a);
  a->base = base;
  a->size = n;
  a->next = allocs;
  allocs = a;
}
static void untrack_device(char *base) { /* lock held; the memory itself belongs to the caller */
  for (Alloc **a = &allocs; *a; a = &(*a)->next) {
    if ((*a)->base == base) {
      Alloc *dead = *a;
      *a = dead->next;
      free(dead);
      return;
    }
  }
}
static Host *find_host(const char *p, int registered) { /* the block containing p; lock held */
  for (Host *h = hosts; h; h = h->next)
    if (h->registered == registered && p >= h->host && p < h->host + h->size) return h;
  return NULL;
}

CUresult cuMemHostAlloc(void **out, size_t n, unsigned flags) {
  NEED_CONTEXT();
  if (n == 0 || flags > 7) return INVALID_VALUE;
  int fd = (int)syscall(SYS_memfd_create, "fake_cuda_host", 0);
  if (fd < 0 || ftruncate(fd, (off_t)n) != 0) return OUT_OF_MEMORY;
  char *host = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  char *device = (flags & HOSTALLOC_DEVICEMAP) ? mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : NULL;
  close(fd);
  if (host == MAP_FAILED || device == MAP_FAILED) return OUT_OF_MEMORY;
  Host *h = calloc(1, sizeof *h);
  h->host = host;
  h->device = device;
  h->size = n;
  pthread_mutex_lock(&lock);
  h->next = hosts;
  hosts = h;
  if (device) track_device(device, n);
  ++live_host_allocs;
  last_host_alloc_flags = flags;
  pthread_mutex_unlock(&lock);
  *out = host;
  return OK;
}
static CUresult drop_host(void *p, int registered) {
  pthread_mutex_lock(&lock);
  for (Host **h = &hosts; *h; h = &(*h)->next) {
    if ((*h)->host == (char *)p && (*h)->registered == registered) {
      Host *dead = *h;
      *h = dead->next;
      if (dead->device) untrack_device(dead->device);
      if (registered) {
        --live_registrations;
      } else {
        --live_host_allocs;
        munmap(dead->host, dead->size);
        if (dead->device) munmap(dead->device, dead->size);
      }
      free(dead);
      pthread_mutex_unlock(&lock);
      return OK;
    }
  }
  pthread_mutex_unlock(&lock);
  return registered ? HOST_NOT_REGISTERED : INVALID_VALUE;
}
CUresult cuMemFreeHost(void *p) { NEED_CONTEXT(); return drop_host(p, 0); }
CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned flags) {
  NEED_CONTEXT();
  if (!p || n == 0 || flags > 15) return INVALID_VALUE;
  pthread_mutex_lock(&lock);
  for (Host *h = hosts; h; h = h->next) {
    if (h->registered && (char *)p < h->host + h->size && h->host < (char *)p + n) {
      pthread_mutex_unlock(&lock);
      return HOST_ALREADY_REGISTERED;
    }
  }
  Host *h = calloc(1, sizeof *h);
  h->host = p;
  h->device = (flags & HOSTREGISTER_DEVICEMAP) ? p : NULL; /* registered memory keeps its address (UVA) */
  h->size = n;
  h->registered = 1;
  h->next = hosts;
  hosts = h;
  if (h->device) track_device(h->device, n);
  ++live_registrations;
  last_register_flags = flags;
  pthread_mutex_unlock(&lock);
  return OK;
}
CUresult cuMemHostUnregister(void *p) { NEED_CONTEXT(); return drop_host(p, 1); }
CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned flags) {
  NEED_CONTEXT();
  if (flags != 0) return INVALID_VALUE;
  pthread_mutex_lock(&lock);
  Host *h = find_host(p, 0);
  if (!h) h = find_host(p, 1);
  CUresult rc = h && h->device ? OK : INVALID_VALUE;
  if (rc == OK) *d = (CUdeviceptr)(h->device + ((char *)p - h->host));
  pthread_mutex_unlock(&lock);
  return rc;
}
CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned flags) {
  if (flags != 1 && flags != 2) return INVALID_VALUE; /* CU_MEM_ATTACH_GLOBAL or CU_MEM_ATTACH_HOST */
  CUresult rc = cuMemAlloc_v2(p, n);
  if (rc == OK) last_managed_flags = flags;
  return rc;
}

typedef struct { char magic[8]; long long pid; CUdeviceptr base; unsigned long long size; char pad[32]; } IpcHandle;
CUresult cuIpcGetMemHandle(IpcHandle *h, CUdeviceptr d) {
  CUdeviceptr base = 0;
  size_t size = 0;
  CUresult rc = cuMemGetAddressRange_v2(&base, &size, d);
  if (rc != OK) return rc;
  if (base != d) return INVALID_VALUE; /* the driver wants the allocation's base */
  memset(h, 0, sizeof *h);
  memcpy(h->magic, "FAKEIPC", 8);
  h->pid = (long long)getpid();
  h->base = base;
  h->size = size;
  return OK;
}
CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *d, IpcHandle h, unsigned flags) {
  NEED_CONTEXT();
  if (memcmp(h.magic, "FAKEIPC", 8) != 0 || flags > 1) return INVALID_VALUE;
  if (h.pid != (long long)getpid() || !check_range(h.base, (size_t)h.size)) return INVALID_HANDLE;
  __atomic_add_fetch(&open_ipc_mappings, 1, __ATOMIC_SEQ_CST);
  *d = h.base;
  return OK;
}
CUresult cuIpcCloseMemHandle(CUdeviceptr d) {
  NEED_CONTEXT();
  if (__atomic_load_n(&open_ipc_mappings, __ATOMIC_SEQ_CST) == 0) return INVALID_VALUE;
  __atomic_sub_fetch(&open_ipc_mappings, 1, __ATOMIC_SEQ_CST);
  return OK;
}
