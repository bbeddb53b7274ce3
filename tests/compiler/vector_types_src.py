"""Kernels using CUDA vector types (cuda.float32x4, cuda.float4, ...) and Dim3 values, shared by
test_vector_types.py (PTX without a GPU) and test_gpu_vector_types.py (results against numpy)."""

from cujit import cuda

BASES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64")
NAMES = tuple(f"{base}x{n}" for base in BASES for n in (1, 2, 3, 4))


# ---- storing a vector's components: device functions taking vectors ------------------------------------------


@cuda.jit(device=True)
def put1(res, j, v):
    res[j] = v.x
    return j + 1


@cuda.jit(device=True)
def put2(res, j, v):
    res[j] = v.x
    res[j + 1] = v.y
    return j + 2


@cuda.jit(device=True)
def put3(res, j, v):
    res[j] = v.x
    res[j + 1] = v.y
    res[j + 2] = v.z
    return j + 3


@cuda.jit(device=True)
def put4(res, j, v):
    res[j] = v.x
    res[j + 1] = v.y
    res[j + 2] = v.z
    res[j + 3] = v.w
    return j + 4


def make_readout(name):
    """A kernel building the vector type `name` from a[0], a[1], ... (converted to its base type) and storing
    its components into res."""
    vec = getattr(cuda, name)
    base = getattr(cuda, name[:-2])
    n = int(name[-1])
    if n == 1:

        def readout(res, a):
            put1(res, 0, vec(base(a[0])))
    elif n == 2:

        def readout(res, a):
            put2(res, 0, vec(base(a[0]), base(a[1])))
    elif n == 3:

        def readout(res, a):
            put3(res, 0, vec(base(a[0]), base(a[1]), base(a[2])))
    else:

        def readout(res, a):
            put4(res, 0, vec(base(a[0]), base(a[1]), base(a[2]), base(a[3])))

    return readout


# Which of a[0..3] (`one`, `two`, `three`, `four` below) each vector built by `make_mixed` holds, in order.
MIXED_COMPONENTS = [
    [0],
    [0],
    [1, 2],
    [0, 2],
    [1, 0],
    [0, 0],
    [1, 2],
    [1, 2, 0],
    [0, 1, 2],
    [0, 1, 2],
    [0, 0, 0],
    [1, 2, 0],
    [0, 0, 2],
    [0, 1, 2, 3],
    [1, 2, 1, 2],
    [1, 2, 0, 3],
    [3, 1, 2, 0],
    [0, 1, 2, 0],
    [0, 3, 1, 2],
    [1, 2, 0, 0],
    [0, 1, 2, 3],
    [0, 0, 1, 2],
]


def make_mixed(base_name):
    """A kernel building the vector types of `base_name` from every kind of argument numba-cuda accepts: scalars,
    1-vectors, wider vectors, in every position, and a vector of the same type."""
    v1, v2, v3, v4 = (getattr(cuda, f"{base_name}x{n}") for n in (1, 2, 3, 4))
    base = getattr(cuda, base_name)

    def mixed(res, a):
        one, two, three, four = base(a[0]), base(a[1]), base(a[2]), base(a[3])
        f1 = v1(one)
        f2 = v2(two, three)
        f3 = v3(f2, one)
        f4 = v4(one, two, three, four)
        j = put1(res, 0, f1)
        j = put1(res, j, v1(f1))
        j = put2(res, j, f2)
        j = put2(res, j, v2(f1, three))
        j = put2(res, j, v2(two, f1))
        j = put2(res, j, v2(f1, f1))
        j = put2(res, j, v2(f2))
        j = put3(res, j, f3)
        j = put3(res, j, v3(one, f2))
        j = put3(res, j, v3(f1, two, three))
        j = put3(res, j, v3(f1, f1, f1))
        j = put3(res, j, v3(f3))
        j = put3(res, j, v3(f1, f1, three))
        j = put4(res, j, f4)
        j = put4(res, j, v4(f2, f2))
        j = put4(res, j, v4(f3, four))
        j = put4(res, j, v4(four, f3))
        j = put4(res, j, v4(f1, f2, one))
        j = put4(res, j, v4(one, four, f2))
        j = put4(res, j, v4(f2, f1, f1))
        j = put4(res, j, v4(f4))
        put4(res, j, v4(f1, f1, f2))

    return mixed


def make_through(name, first, second):
    """A kernel passing a `name` vector built from a[0] through second(first(v)) and storing its x."""
    vec = getattr(cuda, name)
    n = int(name[-1])
    if n == 1:

        def through(res, a):
            res[0] = second(first(vec(a[0]))).x
    elif n == 2:

        def through(res, a):
            res[0] = second(first(vec(a[0], a[1]))).x
    elif n == 3:

        def through(res, a):
            res[0] = second(first(vec(a[0], a[1], a[2]))).x
    else:

        def through(res, a):
            res[0] = second(first(vec(a[0], a[1], a[2], a[3]))).x

    return through


# ---- CUDA C names, device functions returning vectors, Optional vectors ---------------------------------------


def aliases(res, a):
    """The CUDA C names users port from: float4, double2, int2, uchar4, short2, long3, ..."""
    f = cuda.float4(a[0], a[1], a[2], a[3])
    d = cuda.double2(a[0], a[1])
    i = cuda.int2(a[0], a[1])
    u = cuda.uchar4(a[0], a[1], a[2], a[3])
    s = cuda.short2(a[2], a[3])
    g = cuda.long3(a[0], a[1], a[2])
    h = cuda.ulonglong2(a[2], a[3])
    c = cuda.char3(a[1], a[2], a[3])
    res[0] = f.x + f.y + f.z + f.w
    res[1] = d.x * d.y
    res[2] = i.x - i.y
    res[3] = u.x + u.y + u.z + u.w
    res[4] = s.x * s.y
    res[5] = g.x + g.y + g.z
    res[6] = h.x + h.y
    res[7] = c.x + c.y + c.z


@cuda.jit(device=True)
def cross(a, b):
    return cuda.float32x3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)


@cuda.jit(device=True)
def dot3(a, b):
    return a.x * b.x + a.y * b.y + a.z * b.z


@cuda.jit(device=True)
def positive_or_none(v):
    if v.x > 0:
        return v
    return None


def cross_products(out, a, b):
    """out[i] = cross(a[i], b[i]) and its dot with a[i]: float32x3 passed to and returned from device functions."""
    i = cuda.grid(1)
    if i < a.shape[0]:
        u = cuda.float32x3(a[i, 0], a[i, 1], a[i, 2])
        v = cuda.float32x3(b[i, 0], b[i, 1], b[i, 2])
        c = cross(u, v)
        out[i, 0] = c.x
        out[i, 1] = c.y
        out[i, 2] = c.z
        out[i, 3] = dot3(c, u)


def optional_vectors(out, a):
    """A device function returning a vector on some paths only (Optional), and vectors through tuples."""
    i = cuda.grid(1)
    if i < a.shape[0]:
        v = cuda.double2(a[i], -a[i])
        w = positive_or_none(v)
        pair = (v, cuda.double2(v.y, v.x))
        first, second = pair
        out[i, 0] = first.x * 2.0 + second.x
        if w is None:
            out[i, 1] = -1.0
        else:
            out[i, 1] = w.y


# ---- vectors by value to and from CUDA C++ (declare_device) ----------------------------------------------------

VECTOR_CU = cuda.CUSource(
    """
extern "C" __device__ float4 scale4(float4 v, float s) { return make_float4(v.x * s, v.y * s, v.z * s, v.w * s); }
extern "C" __device__ int add_d2(double2* r, double2 a, double2 b) {
  *r = make_double2(a.x + b.x, a.y + b.y);
  return 0;
}
extern "C" __device__ uchar2 swap_uc2(uchar2 v) { return make_uchar2(v.y, v.x); }
extern "C" __device__ int sum_s3(int* r, short3 v) { *r = v.x + v.y + v.z; return 0; }
""",
    name="vectors.cu",
)
scale4 = cuda.declare_device("scale4", "float4(float4, float32)", abi="c", link=[VECTOR_CU])
add_d2 = cuda.declare_device("add_d2", "double2(double2, double2)", link=[VECTOR_CU])
swap_uc2 = cuda.declare_device("swap_uc2", "uchar2(uchar2)", abi="c", link=[VECTOR_CU])
sum_s3 = cuda.declare_device("sum_s3", "int32(short3)", link=[VECTOR_CU])


def declared_vectors(f, d, u, s):
    """CUDA C++ functions taking and returning float4, double2, uchar2 and short3 by value."""
    i = cuda.grid(1)
    if i < f.shape[0]:
        v = scale4(cuda.float4(f[i, 0], f[i, 1], f[i, 2], f[i, 3]), 2.0)
        f[i, 0] = v.x
        f[i, 1] = v.y
        f[i, 2] = v.z
        f[i, 3] = v.w
        w = add_d2(cuda.double2(d[i, 0], d[i, 1]), cuda.double2(d[i, 1], 1.0))
        d[i, 0] = w.x
        d[i, 1] = w.y
        c = swap_uc2(cuda.uchar2(u[i, 0], u[i, 1]))
        u[i, 0] = c.x
        u[i, 1] = c.y
        s[i, 3] = sum_s3(cuda.short3(s[i, 0], s[i, 1], s[i, 2]))


# ---- Dim3: cuda.threadIdx and friends as values ----------------------------------------------------------------


@cuda.jit(device=True)
def linear(idx, dim):
    return idx.x + dim.x * (idx.y + dim.y * idx.z)


def dim3_values(out):
    """Each thread's linear thread and block index, computed by a device function from Dim3 values."""
    tid = cuda.threadIdx
    bid = cuda.blockIdx
    block = linear(cuda.blockIdx, cuda.gridDim)
    thread = linear(tid, cuda.blockDim)
    n = cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z
    g = block * n + thread
    out[g, 0] = thread
    out[g, 1] = block
    out[g, 2] = tid.x + tid.y + tid.z
    out[g, 3] = bid.x + bid.y + bid.z


# ---- misuse ---------------------------------------------------------------------------------------------------


def too_few(out):
    v = cuda.float32x4(1.0, 2.0, 3.0)
    out[0] = v.x


def other_base(out):
    v = cuda.float32x2(cuda.int32x2(1, 2))
    out[0] = v.x


def assign_component(out):
    v = cuda.float32x2(1.0, 2.0)
    v.x = 3.0
    out[0] = v.x


def missing_component(out):
    v = cuda.float32x2(1.0, 2.0)
    out[0] = v.z


def vector_arithmetic(out):
    v = cuda.float32x2(1.0, 2.0)
    w = v + v
    out[0] = w.x


def store_vector(out):
    v = cuda.float32x2(1.0, 2.0)
    out[0] = v


def complex_component(out):
    v = cuda.float32x2(1j, 2.0)
    out[0] = v.x


def assign_thread_index(out):
    t = cuda.threadIdx
    t.x = 1
    out[0] = t.x


def index_vector(out):
    v = cuda.float32x2(1.0, 2.0)
    out[0] = v[0]
