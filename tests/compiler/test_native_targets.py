"""Native code for every architecture CUDA 13's ptxas accepts (LLVM 22's NVPTX backend): the PTX names the exact
target under the PTX ISA version that target needs, and ptxas assembles it (conftest assembles every PTX a test
makes, for its .target). No GPU is needed."""

import re

import pytest

from cujit import _core, cuda, float32, int32, int64, uint32, void

# (cc as numba-cuda spells it, the .target, the .version): every sm_XY[a|f] of `ptxas --help` for CUDA 13.0.
TARGETS = [
    ((7, 5), "sm_75", "8.0"),
    ((8, 0), "sm_80", "8.0"),
    ((8, 6), "sm_86", "8.0"),
    ((8, 7), "sm_87", "8.0"),
    ((8, 8), "sm_88", "9.0"),
    ((8, 9), "sm_89", "8.0"),
    ((9, 0), "sm_90", "8.0"),
    ((9, 0, "a"), "sm_90a", "8.0"),
    ((10, 0), "sm_100", "8.6"),
    ((10, 0, "a"), "sm_100a", "8.6"),
    ((10, 0, "f"), "sm_100f", "8.8"),
    ((10, 3), "sm_103", "8.8"),
    ((10, 3, "a"), "sm_103a", "8.8"),
    ((10, 3, "f"), "sm_103f", "8.8"),
    ((11, 0), "sm_110", "9.0"),
    ((11, 0, "a"), "sm_110a", "9.0"),
    ((11, 0, "f"), "sm_110f", "9.0"),
    ((12, 0), "sm_120", "8.7"),
    ((12, 0, "a"), "sm_120a", "8.7"),
    ((12, 0, "f"), "sm_120f", "8.8"),
    ((12, 1), "sm_121", "8.8"),
    ((12, 1, "a"), "sm_121a", "8.8"),
    ((12, 1, "f"), "sm_121f", "8.8"),
]
IDS = [target for _, target, _ in TARGETS]


def busy_kernel(out, counts, x):
    """Barriers and their reductions, shared memory, atomics (inc wraps), warp shuffles and libdevice math."""
    tile = cuda.shared.array(128, float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    tile[t] = x[i] if i < x.size else float32(0)
    cuda.syncthreads()
    above = cuda.syncthreads_count(tile[t] > 0)
    v = tile[(t + 1) % 128] + cuda.shfl_down_sync(0xFFFFFFFF, tile[t], 1)
    if cuda.syncthreads_or(v > 1) and i < out.size:
        out[i] = v * float32(above) + cuda.libdevice.sinf(tile[t])
    cuda.atomic.inc(counts, 0, uint32(1000))
    cuda.atomic.add(counts, 1, uint32(1))


SIG = void(float32[::1], uint32[::1], float32[::1])


def version(ptx):
    return re.search(r"^\.version\s+(\S+)", ptx, re.M).group(1)


def target(ptx):
    return re.search(r"^\.target\s+([^\s,]+)", ptx, re.M).group(1)


@pytest.mark.parametrize("cc, arch, isa", TARGETS, ids=IDS)
def test_native_ptx_for_every_architecture(cc, arch, isa):
    ptx, _ = cuda.compile_ptx(busy_kernel, SIG, cc=cc)
    assert target(ptx) == arch and version(ptx) == isa
    assert "bar.sync" in ptx and "atom.global.inc.u32" in ptx and "shfl.sync.down" in ptx
    assert "bar.red.popc.u32" in ptx


@pytest.mark.parametrize("cc, arch, isa", TARGETS, ids=IDS)
def test_device_function_for_every_architecture(cc, arch, isa):
    def scale(x, y):
        return x * y + 1

    ptx, resty = cuda.compile_ptx(scale, (int32, int32), device=True, cc=cc)
    assert resty == int64 and target(ptx) == arch and version(ptx) == isa


@pytest.mark.parametrize(
    "cc",
    [(9, 0), (10, 0), (10, 0, "a"), (10, 3, "f"), (12, 0), (12, 1, "a")],
    ids=["sm_90", "sm_100", "sm_100a", "sm_103f", "sm_120", "sm_121a"],
)
def test_cluster_launch_bounds_on_hopper_and_blackwell(cc):
    """.maxclusterrank (launch_bounds' third value) exists from sm_90: ptxas rejects it below, assembles it here."""

    def kernel(out):
        out[cuda.grid(1)] = cuda.blockIdx.x

    ptx, _ = cuda.compile_ptx(kernel, void(int32[::1]), cc=cc, launch_bounds=(256, 2, 4))
    assert re.search(r"\.maxntid\s+256", ptx) and re.search(r"\.minnctapersm\s+2\b", ptx)
    assert re.search(r"\.maxclusterrank\s+4\b", ptx)


def test_no_raised_target_left():
    """The code is generated for the architecture itself, not sm_90 code under a raised .target."""
    ptx, _ = cuda.compile_ptx(busy_kernel, SIG, cc=(12, 0))
    assert "sm_90" not in ptx and target(ptx) == "sm_120"


def test_supported_archs_reach_blackwell():
    assert _core.supported_archs() == [75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121]


@pytest.mark.parametrize(
    "cc, nearest", [((10, 1), "sm_100"), ((11, 5), "sm_110"), ((12, 9), "sm_121"), ((13, 0), "sm_121")]
)
def test_unknown_minor_versions_take_the_nearest_architecture_below(cc, nearest):
    ptx, _ = cuda.compile_ptx(busy_kernel, SIG, cc=cc)
    assert target(ptx) == nearest


@pytest.mark.parametrize(
    "cc, message",
    [
        ((10, 1, "a"), "Can't use arch-specific compute_101a"),
        ((8, 0, "a"), "arch-specific ('a') targets start at 9.0"),
        ((9, 0, "f"), "family ('f') targets at 10.0"),
        ((12, 0, "x"), "Invalid architecture suffix 'x'"),
    ],
)
def test_suffixes_that_cannot_be_honoured(cc, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        cuda.compile_ptx(busy_kernel, SIG, cc=cc)


def test_atomics_are_device_wide():
    """CUDA's atomics are device-wide: LLVM 22 writes an atomic's scope into PTX, and cujit's is the device's
    (atom.relaxed.gpu: what a plain atom means, and numba-cuda's libNVVM output), never the system's."""

    def kernel(a, f, v):
        cuda.atomic.cas(a, 0, v, v + 1)
        cuda.atomic.max(f, 0, float32(v))
        cuda.atomic.add(a, 1, v)

    ptx, _ = cuda.compile_ptx(kernel, void(int32[::1], float32[::1], int32), cc=(10, 0))
    atoms = re.findall(r"^\s*(atom\.\S+)", ptx, re.M)
    assert "atom.relaxed.gpu.global.cas.b32" in atoms and "atom.global.add.u32" in atoms, atoms
    assert not any(".sys" in a for a in atoms), atoms
