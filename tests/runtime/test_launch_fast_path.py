"""The C++ launch fast path (cpp/bindings/py_launch.cpp) without a GPU: on the fake driver (tests/fake_cuda),
launches of cujit kernels copy their parameters, so each argument kind's packing is checked against numba's
kernel layout, with the type key the launch chose, the errors that name an argument, and the ordering of CAI
producer streams."""

import os
import textwrap

import pytest

from cujit import _core
from script_runs import run_script

PRELUDE = textwrap.dedent('''
    import ctypes, os, struct, threading
    import numpy as np
    from cujit import cuda
    from cujit.errors import TypingError

    fake = ctypes.CDLL(os.environ["CUJIT_CUDA_DRIVER"])
    fake.fake_param.restype = ctypes.c_ulonglong

    def capture(sizes):
        fake.fake_capture_params(len(sizes), (ctypes.c_int * len(sizes))(*sizes))

    def params(n):
        return [fake.fake_param(i) for i in range(n)]

    ARRAY_1D = [8] * 7

    def array_params(ptr, shape, strides, itemsize):
        n = int(np.prod(shape)) if shape else 1
        return [0, 0, n, itemsize, ptr] + list(shape) + list(strides)

    class CAI:
        """A foreign device array: any __cuda_array_interface__ dict."""
        def __init__(self, **desc):
            self.__cuda_array_interface__ = dict(desc, version=desc.get("version", 3))

    class DLTensor(ctypes.Structure):
        _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                    ("ndim", ctypes.c_int32), ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                    ("lanes", ctypes.c_uint16), ("shape", ctypes.POINTER(ctypes.c_int64)),
                    ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]

    class DLManaged(ctypes.Structure):
        _fields_ = [("tensor", DLTensor), ("ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]

    def raises(cls, text, call, *args):
        """Asserts that call(*args) raises `cls` with `text` in its message; returns the message."""
        try:
            call(*args)
        except cls as e:
            assert text in str(e), e
            return str(e)
        raise AssertionError(f"no {cls.__name__} for {text}")

    ctypes.pythonapi.PyCapsule_New.restype = ctypes.py_object
    ctypes.pythonapi.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    kept = []

    def dlpack_capsule(ptr, shape, strides=None, device_type=2, code=2, bits=32):
        """A DLPack capsule ("dltensor") describing device memory, as a producer would export it."""
        shape_arr = (ctypes.c_int64 * len(shape))(*shape)
        strides_arr = (ctypes.c_int64 * len(shape))(*strides) if strides is not None else None
        t = DLManaged(DLTensor(ptr, device_type, 0, len(shape), code, bits, 1, shape_arr,
                               strides_arr if strides_arr is not None else None, 0), None, None)
        kept.extend([shape_arr, strides_arr, t])
        return ctypes.pythonapi.PyCapsule_New(ctypes.addressof(t), b"dltensor", None)
''')


def run(fake_driver, body):
    """Runs PRELUDE + body as a script (cujit compiles functions from their source) on the fake driver."""
    env = dict(os.environ, CUJIT_CUDA_DRIVER=fake_driver, NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS="0")
    proc = run_script(PRELUDE + textwrap.dedent(body), "_fastpath.py", env)
    assert proc.stdout.strip().endswith("OK"), proc.stdout[-2000:]


def test_each_argument_kind_packs_in_numbas_layout(fake_driver):
    run(
        fake_driver,
        """
        @cuda.jit
        def k(a, b, c, x, t, z, flag):
            a[0] = b[0] + c[0, 0] + x + t[0] + t[1] + z.real
            if flag:
                a[1] = 0

        dev = cuda.to_device(np.arange(4, dtype=np.float32))
        backing = cuda.device_array(16, np.float32)
        foreign = CAI(shape=(3,), typestr="<f4", data=(backing.ptr + 8, False), strides=(8,), stream=None)
        capsule = dlpack_capsule(backing.ptr, (2, 3))
        capture(ARRAY_1D + ARRAY_1D + [8] * 9 + [4, 8, 8, 8, 8, 1])
        k[1, 1](dev, foreign, capsule, np.float32(2.5), (7, 0.25), 1 + 2j, True)
        assert fake.fake_launches() == 1
        got = params(7 + 7 + 9 + 6)
        assert got[:7] == array_params(dev.ptr, (4,), (4,), 4)
        assert got[7:14] == array_params(backing.ptr + 8, (3,), (8,), 4)
        assert got[14:23] == array_params(backing.ptr, (2, 3), (12, 4), 4)
        as_bits = lambda fmt, v: int.from_bytes(struct.pack(fmt, v), "little")
        assert got[23:] == [as_bits("<f", 2.5), 7, as_bits("<d", 0.25), as_bits("<d", 1.0), as_bits("<d", 2.0), 1]
        (sig,) = k.signatures
        assert [str(t) for t in sig] == ["array(float32, 1d, C)", "array(float32, 1d, A)", "array(float32, 2d, C)",
                                         "float32", "Tuple(int64, float64)", "complex128", "bool"], sig
        assert len(k._launch_table) == 1
        for _ in range(3):                                # served from the table
            k[1, 1](dev, foreign, capsule, np.float32(2.5), (7, 0.25), 1 + 2j, True)
        assert len(k._launch_table) == 1 and fake.fake_launches() == 4
        k[1, 1](dev, foreign, capsule, np.float32(2.5), (7, 0.25), 1 + 2j, 0)   # int: a second specialisation
        assert len(k._launch_table) == 2 and len(k.signatures) == 2
        print("OK")
    """,
    )


def test_eager_signatures_convert_and_refuse(fake_driver):
    run(
        fake_driver,
        """
        @cuda.jit("void(float64[:], float64, int16)")
        def k(a, x, n):
            a[0] = x + n

        dev = cuda.to_device(np.zeros(4))
        capture(ARRAY_1D + [8, 2])
        k[1, 1](dev, 3, 70000)                                   # int -> float64, int -> int16 (wraps)
        got = params(9)
        assert got[7] == int.from_bytes(struct.pack("<d", 3.0), "little") and got[8] == 70000 & 0xFFFF
        message = raises(TypeError, "No matching definition", k[1, 1], cuda.to_device(np.zeros(4, np.int32)), 1.0, 1)
        assert "@cuda.jit function 'k' at " in message, message
        assert message.endswith("launches only its compiled signature (it compiles no other at launch):\\n"
                                "    (array(float64, 1d, A), float64, int16)"), message
        assert "kernel argument 2 ('n') of @cuda.jit function 'k'" in raises(TypingError, "type list", k[1, 1], dev,
                                                                              1.0, [1])
        print("OK")
    """,
    )


def test_errors_name_the_argument(fake_driver):
    run(
        fake_driver,
        """
        @cuda.jit
        def k(a, b):
            a[0] = b[0]

        dev = cuda.to_device(np.zeros(4, np.float32))
        ptr = dev.ptr
        cases = [
            (CAI(shape=(4,), typestr="<f4", data=(ptr, False), mask=object()), NotImplementedError, "masked"),
            (CAI(shape=(4,), typestr=">f4", data=(ptr, False)), TypeError, "big-endian"),
            (CAI(shape=(4,), typestr="<f4", data=(ptr, False), stream=0), ValueError, "'stream' is 0"),
            (np.zeros(4, np.float32).__dlpack__(), TypeError, "not in GPU memory"),
            (dlpack_capsule(ptr, (4,), code=4, bits=16), TypeError, "unsupported DLPack dtype"),
        ]
        for bad, cls, text in cases:
            assert "kernel argument 1" in raises(cls, text, k[1, 1], dev, bad)
        where = f"@cuda.jit function 'k' at {__file__}:{k.py_func.__code__.co_firstlineno}"
        for big in (2**64, -2**63 - 1):
            raises(ValueError, f"kernel argument 1 ('b') of {where}: Int value is too large", k[1, 1], dev, big)
        raises(TypeError, f"{where} is launched with positional arguments only, got keyword argument(s) ('b',)",
               lambda: k[1, 1](dev, b=dev))
        raises(TypeError, f"{where} takes 2 arguments (a, b) but 1 was given", k[1, 1], dev)
        raises(TypingError, f"kernel argument 1 ('b') of {where}: cannot pass a value of type list", k[1, 1], dev,
               [1.0])
        print("OK")
    """,
    )


def test_producer_streams_are_ordered_before_the_launch(fake_driver):
    run(
        fake_driver,
        """
        @cuda.jit
        def k(a, b):
            a[0] = b[0]

        dev = cuda.to_device(np.zeros(4, np.float32))
        producer, consumer = cuda.stream(), cuda.stream()
        def on(stream):
            return CAI(shape=(4,), typestr="<f4", data=(dev.ptr, False), stream=stream)
        waits = fake.fake_stream_waits
        k[1, 1](dev, on(producer.handle))                     # blocking producer, legacy default consumer
        k[1, 1, consumer](dev, on(1))                         # legacy producer, blocking consumer
        k[1, 1, consumer](dev, on(consumer.handle))           # the same stream
        assert waits() == 0
        k[1, 1, consumer](dev, on(producer.handle))           # two streams: an event orders them
        assert waits() == 1
        k[1, 1, consumer](dev, on(None))                      # no stream named: nothing to order
        assert waits() == 1
        print("OK")
    """,
    )


def test_dlpack_exchange_tables_are_read_in_c(fake_driver):
    run(
        fake_driver,
        """
        from cujit import _core
        from cujit.cudadrv import driver as drv
        tensors = {}                 # id(obj) -> DLTensor the producer exports
        FROM_OBJECT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(DLTensor))
        WORK_STREAM = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p))
        current = {"stream": None}

        @FROM_OBJECT
        def from_object(obj, out):
            if obj not in tensors:
                return -1
            out[0] = tensors[obj]
            return 0

        @WORK_STREAM
        def work_stream(device_type, device_id, out):
            out[0] = current["stream"]
            return 0

        class Table(ctypes.Structure):
            _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("prev", ctypes.c_void_p),
                        ("alloc", ctypes.c_void_p), ("to_managed", ctypes.c_void_p), ("to_py", ctypes.c_void_p),
                        ("dltensor", FROM_OBJECT), ("stream", WORK_STREAM)]

        table = Table(1, 3, None, None, None, None, from_object, work_stream)
        old_table = Table(2, 0, None, None, None, None, from_object, work_stream)   # a major cujit does not read

        class Producer:                                         # DLPack 1.3: a capsule on the class
            __dlpack_c_exchange_api__ = ctypes.pythonapi.PyCapsule_New(ctypes.addressof(table),
                                                                        b"dlpack_exchange_api", None)
            def __init__(self, ptr, shape, strides=None, code=2, bits=32, device_type=2):
                shape_arr = (ctypes.c_int64 * len(shape))(*shape)
                strides_arr = (ctypes.c_int64 * len(shape))(*strides) if strides is not None else None
                kept.extend([shape_arr, strides_arr])
                tensors[id(self)] = DLTensor(ptr, device_type, 0, len(shape), code, bits, 1, shape_arr,
                                             strides_arr, 0)
                self.__cuda_array_interface__ = dict(shape=tuple(shape), typestr="<f4", data=(ptr, False),
                                                     version=2)

        class OldProducer(Producer):                            # DLPack 1.2: an integer; here an unknown major
            __dlpack_c_exchange_api__ = None
            __c_dlpack_exchange_api__ = ctypes.addressof(old_table)

        assert _core.launch.reader_of(Producer) == "DLPack exchange"
        assert _core.launch.reader_of(OldProducer) == "protocols"

        @cuda.jit
        def k(a, b):
            a[0] = b[0, 0]

        dev = cuda.to_device(np.zeros(4, np.float32))
        backing = cuda.device_array(64, np.float32)
        capture(ARRAY_1D + [8] * 9)
        k[1, 1](dev, Producer(backing.ptr + 16, (3, 2), strides=(4, 1)))
        assert params(16)[7:] == array_params(backing.ptr + 16, (3, 2), (16, 4), 4)
        k[1, 1](dev, Producer(backing.ptr, (2, 5)))              # no strides: C order
        assert params(16)[7:] == array_params(backing.ptr, (2, 5), (20, 4), 4)
        assert sorted(str(sig[1]) for sig in k.signatures) == ["array(float32, 2d, A)", "array(float32, 2d, C)"]
        failing = Producer(backing.ptr, (2, 2))
        del tensors[id(failing)]                                 # the export fails: its CAI is read instead
        k[1, 1](dev, failing)
        assert params(16)[7:] == array_params(backing.ptr, (2, 2), (8, 4), 4)
        waits = fake.fake_stream_waits
        producer, consumer = cuda.stream(), cuda.stream()
        current["stream"] = producer.handle
        k[1, 1, consumer](dev, Producer(backing.ptr, (2, 2)))    # ordered after the producer's work stream
        assert waits() == 1
        current["stream"] = None                                  # the legacy default stream orders itself
        k[1, 1, consumer](dev, Producer(backing.ptr, (2, 2)))
        assert waits() == 1
        bf16 = Producer(backing.ptr, (2, 2), code=4, bits=16)    # bfloat16 is left to the CAI: '<f4' here
        k[1, 1](dev, bf16)
        assert params(16)[7:] == array_params(backing.ptr, (2, 2), (8, 4), 4)
        print("OK")
    """,
    )


# A stand-in for CuPy: classes with the C layout of CuPy's Cython ndarray and MemoryPointer (launch_cupy.cpp),
# their C fields written through ctypes, their attributes in Python, and `cupy.cuda.stream` exporting
# get_current_stream_ptr as CuPy's __pyx_capi__ does.
FAKE_CUPY = """
    import sys, types
    ctypes.pythonapi.PyType_FromSpec.restype = ctypes.py_object

    class Slot(ctypes.Structure):
        _fields_ = [("slot", ctypes.c_int), ("pfunc", ctypes.c_void_p)]

    class Spec(ctypes.Structure):
        _fields_ = [("name", ctypes.c_char_p), ("basicsize", ctypes.c_int), ("itemsize", ctypes.c_int),
                    ("flags", ctypes.c_uint), ("slots", ctypes.POINTER(Slot))]

    def c_class(name, basicsize):
        spec = Spec(name, basicsize, 0, (1 << 18) | (1 << 10), (Slot * 1)(Slot(0, None)))
        kept.append(spec)
        ctypes.pythonapi.PyType_FromSpec.argtypes = [ctypes.POINTER(Spec)]
        return ctypes.pythonapi.PyType_FromSpec(ctypes.byref(spec))

    def poke(obj, offset, ctype, value):
        ctypes.memmove(id(obj) + offset, ctypes.byref(ctype(value)), ctypes.sizeof(ctype))

    def poke_vector(obj, offset, values):
        items = (ctypes.c_ssize_t * max(len(values), 1))(*values)
        kept.append(items)
        begin = ctypes.addressof(items)
        for i, v in enumerate((begin, begin + 8 * len(values), begin + 8 * len(values))):
            poke(obj, offset + 8 * i, ctypes.c_void_p, v)

    class MemoryPointer(c_class(b"fakecupy.MemoryPointer", 48)):
        def __init__(self, ptr, device_id, c_ptr=None):
            self.ptr, self.device_id = ptr, device_id
            poke(self, 24, ctypes.c_void_p, ptr if c_ptr is None else c_ptr)
            poke(self, 32, ctypes.c_int, device_id)

    class ndarray(c_class(b"fakecupy._ndarray_base", 128)):
        def __init__(self, ptr, shape, strides, dtype=np.float32, c_shape=None):
            self.data, self.shape, self.strides = MemoryPointer(ptr, 0), tuple(shape), tuple(strides)
            self.dtype = np.dtype(dtype)
            poke_vector(self, 40, shape if c_shape is None else c_shape)
            poke_vector(self, 64, strides)
            poke(self, 104, ctypes.c_void_p, id(self.dtype))
            poke(self, 112, ctypes.c_void_p, id(self.data))

    current = {"stream": 0}
    STREAM_PTR = ctypes.CFUNCTYPE(ctypes.c_ssize_t)(lambda: current["stream"])
    capi = {"get_current_stream_ptr": ctypes.pythonapi.PyCapsule_New(
        ctypes.cast(STREAM_PTR, ctypes.c_void_p).value, b"intptr_t (void)", None)}
    cupy = types.ModuleType("cupy")
    cupy.ndarray = ndarray
    cupy.cuda = types.SimpleNamespace(stream=types.SimpleNamespace(__pyx_capi__=capi))
    sys.modules["cupy"] = cupy

    @cuda.jit
    def k(a, b):
        a[0] = b[0, 0]

    dev = cuda.to_device(np.zeros(4, np.float32))
    backing = cuda.device_array(64, np.float32)
"""


def test_cupy_arrays_are_read_in_place_once_their_layout_is_confirmed(fake_driver):
    run(
        fake_driver,
        textwrap.dedent(FAKE_CUPY)
        + textwrap.dedent("""
        from cujit import _core
        capture(ARRAY_1D + [8] * 9)
        assert _core.launch.reader_of(ndarray) == "cupy"
        k[1, 1](dev, ndarray(backing.ptr + 16, (3, 2), (16, 4)))     # read by attributes, the layout confirmed
        assert params(16)[7:] == array_params(backing.ptr + 16, (3, 2), (16, 4), 4)
        assert _core.launch.reader_of(ndarray) == "cupy (in place)"
        x = ndarray(backing.ptr, (2, 5), (4, 8))
        del x.data, x.shape, x.strides                              # only the C fields are left to read
        k[1, 1](dev, x)
        assert params(16)[7:] == array_params(backing.ptr, (2, 5), (4, 8), 4)
        assert sorted(str(sig[1]) for sig in k.signatures) == ["array(float32, 2d, A)", "array(float32, 2d, F)"]
        k[1, 1](dev, ndarray(backing.ptr, (2, 2), (8, 4), dtype=np.int16))   # a new dtype: a new kernel
        assert len(k.signatures) == 3

        side, consumer = cuda.stream(), cuda.stream()               # CuPy's current stream, from its C function
        waits = fake.fake_stream_waits
        before = waits()
        current["stream"] = side.handle
        k[1, 1, consumer](dev, ndarray(backing.ptr, (2, 2), (8, 4)))
        assert waits() == before + 1
        current["stream"] = 0                                        # the legacy default stream: nothing to order
        k[1, 1, consumer](dev, ndarray(backing.ptr, (2, 2), (8, 4)))
        assert waits() == before + 1
        print("OK")
    """),
    )


def test_cupy_arrays_of_another_layout_are_read_by_their_attributes(fake_driver):
    run(
        fake_driver,
        textwrap.dedent(FAKE_CUPY)
        + textwrap.dedent("""
        from cujit import _core
        capture(ARRAY_1D + [8] * 9)
        k[1, 1](dev, ndarray(backing.ptr, (4, 4), (4, 4), c_shape=(7, 7)))   # shape == strides: no verdict
        assert params(16)[7:] == array_params(backing.ptr, (4, 4), (4, 4), 4)
        assert _core.launch.reader_of(ndarray) == "cupy"
        k[1, 1](dev, ndarray(backing.ptr, (3, 4), (16, 4)))
        assert _core.launch.reader_of(ndarray) == "cupy (in place)"
        print("OK")
    """),
    )
    run(
        fake_driver,
        textwrap.dedent(FAKE_CUPY)
        + textwrap.dedent("""
        from cujit import _core
        capture(ARRAY_1D + [8] * 9)
        k[1, 1](dev, ndarray(backing.ptr, (3, 2), (16, 4), c_shape=(3, 9)))   # the C fields disagree
        assert params(16)[7:] == array_params(backing.ptr, (3, 2), (16, 4), 4)
        assert _core.launch.reader_of(ndarray) == "cupy"
        k[1, 1](dev, ndarray(backing.ptr, (2, 5), (20, 4), c_shape=(1, 1)))   # attributes, from now on
        assert params(16)[7:] == array_params(backing.ptr, (2, 5), (20, 4), 4)
        print("OK")
    """),
    )


def test_device_arrays_are_read_from_the_view_kept_in_the_object(fake_driver):
    run(
        fake_driver,
        """
        import copy, weakref
        from cujit import _core
        from cujit.cudadrv.devicearray import DeviceNDArray

        assert issubclass(DeviceNDArray, _core.launch.DeviceArrayBase)
        @cuda.jit
        def k(a, b, t):
            a[0] = b[0, 0] + t[0][0] + t[1][0]

        a = cuda.to_device(np.zeros(4, np.float32))
        b = cuda.to_device(np.ones((3, 5), np.float64, order="F"))
        t = (cuda.to_device(np.zeros(2, np.int32)), cuda.to_device(np.zeros(6, np.int32)))
        capture(ARRAY_1D + [8] * 9 + ARRAY_1D + ARRAY_1D)
        expect = (array_params(a.ptr, (4,), (4,), 4) + array_params(b.ptr, (3, 5), (8, 24), 8)
                  + array_params(t[0].ptr, (2,), (4,), 4) + array_params(t[1].ptr, (6,), (4,), 4))
        for _ in range(3):                                    # the first launch makes the views, the others read them
            k[1, 1](a, b, t)
            assert params(7 + 9 + 7 + 7) == expect
        assert fake.fake_launches() == 3
        c = copy.copy(a)                                      # a copy makes its own view
        capture(ARRAY_1D + [8] * 9 + ARRAY_1D + ARRAY_1D)
        k[1, 1](c, b, t)
        assert params(7) == array_params(c.ptr, (4,), (4,), 4) and fake.fake_launches() == 1
        (sig,) = k.signatures
        assert [str(x) for x in sig] == ["array(float32, 1d, C)", "array(float64, 2d, F)",
                                         "UniTuple(array(int32, 1d, C) x 2)"], sig
        gone = weakref.ref(c)                                 # an array with a view is freed as any other
        del c
        assert gone() is None
        class Other:
            pass
        raises(TypeError, "must derive from launch.DeviceArrayBase", _core.launch.register_types, Other, np.ndarray, {})
        print("OK")
    """,
    )


def test_configuration_threads_and_the_python_path(fake_driver):
    run(
        fake_driver,
        """
        @cuda.jit
        def k(a, x):
            a[0] = x

        configured = k[[2, 1], [32], 0, 0]                   # lists as numba accepts them
        assert configured.griddim == (2, 1, 1) and configured.blockdim == (32, 1, 1)
        assert configured.dispatcher is k and configured.sharedmem == 0
        dev = cuda.to_device(np.zeros(4, np.float32))
        capture(ARRAY_1D + [4])
        errors = []
        def worker():
            try:
                for _ in range(200):
                    k[4, 32](dev, np.float32(1.0))
            except Exception as e:  # noqa: BLE001
                errors.append(e)
        threads = [threading.Thread(target=worker) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors and fake.fake_launches() == 1600, (errors, fake.fake_launches())
        host = np.zeros(4, np.float32)                        # a host array: copied in and back by Python
        k[1, 1](host, np.float32(1.0))
        assert len(k._launch_table) == 1
        print("OK")
    """,
    )


def test_typeof_of_foreign_arrays_is_the_fast_paths():
    from cujit import typeof

    class Foreign:
        __cuda_array_interface__ = {
            "shape": (4, 3),
            "typestr": "<i2",
            "data": (0x1000, True),
            "strides": (2, 8),
            "version": 2,
        }

    assert str(typeof(Foreign())) == "readonly array(int16, 2d, F)"
    assert _core.types.array_layout([0, 3], [4, 100], 4) == "C"  # empty arrays are C-contiguous
    assert _core.types.array_layout([3, 1], [4, 100], 4) == "C"  # length-1 dimensions do not count
    assert _core.types.array_layout([3, 2], [4, 12], 4) == "F"
    assert _core.types.array_layout([3, 2], None, 4) == "C"
    assert _core.types.array_layout([3, 2], [16, 4], 4) == "A"


@pytest.mark.parametrize("typestr", ["<f4", "|b1", "<c16", "<u8"])
def test_foreign_dtypes(typestr):
    from cujit import typeof
    import numpy as np

    class Foreign:
        __cuda_array_interface__ = {"shape": (5,), "typestr": typestr, "data": (0x1000, False), "version": 3}

    assert typeof(Foreign()).dtype == typeof(np.zeros(1, np.dtype(typestr))).dtype


def test_one_contiguity_rule_for_device_arrays_and_launch_types():
    """DeviceNDArray's layout and contiguity are the C++ rule the launch types use (numpy's: an empty array is
    contiguous in both orders, length-1 dimensions do not count)."""
    import numpy as np
    from cujit.cudadrv.devicearray import _is_contiguous

    for shape, strides in [
        ((0, 3), (4, 100)),
        ((3, 1), (4, 100)),
        ((3, 2), (4, 12)),
        ((3, 2), (16, 4)),
        ((3, 2), (8, 4)),
        ((1, 1), (7, 9)),
    ]:
        layout = _core.types.array_layout(list(shape), list(strides), 4)
        c, f = _is_contiguous(shape, strides, 4, "C"), _is_contiguous(shape, strides, 4, "F")
        assert layout == ("C" if c else "F" if f else "A"), (shape, strides)
        view = np.lib.stride_tricks.as_strided(np.zeros(64, np.float32), shape, strides)
        assert (c, f) == (view.flags.c_contiguous, view.flags.f_contiguous), (shape, strides)


def test_scalar_typeof_is_the_fast_paths():
    """typeof of Python and numpy scalars is the launch path's rule, subclasses of int, float and complex typed
    as their base (numba's typeof dispatches on the class hierarchy)."""
    import enum
    import numpy as np
    import cujit.cudadrv.launch  # noqa: F401  (registers numpy's scalar types with the fast path)
    from cujit import typeof

    class Flag(enum.IntEnum):
        ON = 1

    class Ratio(float):
        pass

    cases = [
        (True, "bool"),
        (7, "int64"),
        (2**63, "uint64"),
        (2.5, "float64"),
        (1j, "complex128"),
        (np.float32(1), "float32"),
        (np.int16(1), "int16"),
        (np.bool_(True), "bool"),
        (Flag.ON, "int64"),
        (Ratio(0.5), "float64"),
    ]
    for value, name in cases:
        assert str(typeof(value)) == name, value
        assert str(_core.launch.scalar_type(value)) == name, value
    with pytest.raises(ValueError, match="Int value is too large"):
        typeof(2**64)
    assert _core.launch.scalar_type("text") is None


def test_a_typing_error_is_raised_from_the_launch(fake_driver):
    run(
        fake_driver,
        """
        import traceback
        import cujit

        @cuda.jit
        def bad(a):
            a[0] = a.nosuch

        package = os.path.dirname(cujit.__file__) + os.sep
        for arg in (cuda.to_device(np.zeros(4)), np.zeros(4)):   # the fast path's miss, the Python path
            error = raises(TypingError, "Unknown attribute 'nosuch'", bad[1, 1], arg)
            try:
                bad[1, 1](arg)
            except TypingError as e:
                frames = traceback.extract_tb(e.__traceback__)
            ours = [f for f in frames if f.filename.startswith(package)]
            assert len(ours) == 1 and ours[0] == frames[-1] and frames[-2].filename == __file__, frames
            assert f"{__file__}:" in error and "^^^" in error
        print("OK")
    """,
    )
