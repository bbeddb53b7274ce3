"""Host memory (python/cujit/cudadrv/host_memory.py) on the fake driver (tests/fake_cuda): pinned, mapped and
managed arrays with numba-cuda's options, their layouts, views and copies, pinned()/mapped(), and kernels that
take mapped and managed arrays in place. The fake maps mapped memory at a second address, so a kernel given
the host address instead of the device one would fail."""

import os
import pathlib
import textwrap

from script_runs import run_script

PRELUDE = textwrap.dedent("""
    import ctypes, gc, os, warnings
    import numpy as np
    from cujit import cuda
    from cujit.cudadrv import launch, modules

    fake = ctypes.CDLL(os.environ["CUJIT_CUDA_DRIVER"])
    fake.fake_param.restype = ctypes.c_ulonglong
    for name in ("fake_last_host_alloc_flags", "fake_last_register_flags", "fake_last_managed_flags"):
        getattr(fake, name).restype = ctypes.c_uint

    def raises(cls, text, call, *args, **kwargs):
        try:
            call(*args, **kwargs)
        except cls as e:
            assert text in str(e), e
            return
        raise AssertionError(f"no {cls.__name__} for {text}")

    def device_ptr(a):
        return a.__cuda_array_interface__["data"][0]

    def host_ptr(a):
        return a.__array_interface__["data"][0]

    SAXPY = ("float32[::1]", "float32", "float32[::1]", "float32[::1]")   # r = a * x + y, in the fake
    kernels = modules.load_module("host-memory", open(os.environ["KERNELS_PTX"], "rb").read() + b"\\0")
""")


def run(fake_driver, body):
    env = dict(
        os.environ,
        CUJIT_CUDA_DRIVER=fake_driver,
        NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS="0",
        KERNELS_PTX=str(pathlib.Path(__file__).parents[1] / "data" / "runtime_kernels.ptx"),
    )
    env.pop("NUMBA_CUDA_MEMORY_MANAGER", None)
    proc = run_script(PRELUDE + textwrap.dedent(body), "_host_memory.py", env)
    assert proc.stdout.strip().endswith("OK"), proc.stdout[-3000:] + proc.stderr[-3000:]


def test_pinned_arrays(fake_driver):
    run(
        fake_driver,
        """
        a = cuda.pinned_array((3, 4), dtype=np.float32)
        assert type(a) is np.ndarray and a.shape == (3, 4) and a.dtype == np.float32 and a.flags.c_contiguous
        assert fake.fake_live_host_allocs() == 1 and fake.fake_last_host_alloc_flags() == 0
        a[:] = np.arange(12).reshape(3, 4)
        d = cuda.to_device(a)
        assert (d.copy_to_host() == a).all()
        f = cuda.pinned_array((2, 5), order="F")
        assert f.flags.f_contiguous and f.dtype == np.float64
        s = cuda.pinned_array(4, np.int16, strides=(4,))            # strided: 16 bytes for 4 elements
        assert s.strides == (4,) and s.base.__len__() == 14
        like = cuda.pinned_array_like(np.zeros((3, 2), order="F"))
        assert like.flags.f_contiguous and like.shape == (3, 2)
        odd = cuda.pinned_array_like(np.zeros((2, 3, 4)).transpose(1, 0, 2))
        assert odd.shape == (3, 2, 4) and odd.strides == (32, 96, 8)
        empty = cuda.pinned_array((0, 3))
        assert empty.shape == (0, 3)
        raises(ValueError, "order must be 'C' or 'F'", cuda.pinned_array, 3, order="K")
        raises(ValueError, "negative dimensions", cuda.pinned_array, -1)
        raises(ValueError, "do not match shape", cuda.pinned_array, (2, 2), strides=(8,))
        del a, d, f, s, like, odd
        gc.collect()
        assert fake.fake_live_host_allocs() == 0
        print("OK")
    """,
    )


def test_mapped_arrays(fake_driver):
    run(
        fake_driver,
        """
        m = cuda.mapped_array((4, 3), dtype=np.int32, portable=True, wc=True)
        assert isinstance(m, np.ndarray) and type(m).__name__ == "MappedNDArray"
        assert fake.fake_last_host_alloc_flags() == 2 | 1 | 4      # DEVICEMAP | PORTABLE | WRITECOMBINED
        cuda.mapped_array(2)
        assert fake.fake_last_host_alloc_flags() == 2
        m[:] = np.arange(12).reshape(4, 3)
        assert device_ptr(m) != host_ptr(m)                          # the device's address of the memory
        cai = m.__cuda_array_interface__
        assert cai["shape"] == (4, 3) and cai["strides"] is None and cai["typestr"] == "<i4" and cai["version"] == 3
        assert m.__cuda_memory__ and m.device_ctypes_pointer.value == device_ptr(m)
        d = cuda.as_cuda_array(m)                                    # device reads of the host's writes
        assert (d.copy_to_host() == np.arange(12).reshape(4, 3)).all()
        d.copy_to_device(np.full((4, 3), 7, np.int32))              # device writes, seen by the host
        assert (m == 7).all()
        assert cuda.to_device(m) is not None and cuda.is_cuda_array(m)

        # Views are mapped too (at the same offset on both sides); copies are ordinary host memory.
        v = m[1:, ::2]
        assert type(v).__name__ == "MappedNDArray"
        assert device_ptr(v) - device_ptr(m) == host_ptr(v) - host_ptr(m) == 12
        assert v.__cuda_array_interface__["strides"] == (12, 8)
        for other in (m.copy(), m + 1, np.empty_like(m)):
            assert not hasattr(other, "__cuda_array_interface__") and not other.__cuda_memory__
        assert type(np.array(m)) is np.ndarray
        assert (m.copy_to_host() == 7).all() and type(m.copy_to_host()) is np.ndarray

        s = cuda.stream()
        ms = cuda.mapped_array(3, stream=s)
        assert ms.stream is s and ms.__cuda_array_interface__["stream"] == s.handle
        like = cuda.mapped_array_like(np.zeros((2, 3), np.float32, order="F"), portable=True)
        assert type(like).__name__ == "MappedNDArray" and like.flags.f_contiguous and like.dtype == np.float32
        assert fake.fake_last_host_alloc_flags() == 3
        empty = cuda.mapped_array(0)
        assert empty.__cuda_array_interface__["data"][0] == 0
        print("OK")
    """,
    )


def test_managed_arrays(fake_driver):
    run(
        fake_driver,
        """
        g = cuda.managed_array((2, 3), dtype=np.float32)
        assert type(g).__name__ == "ManagedNDArray" and fake.fake_last_managed_flags() == 1   # ATTACH_GLOBAL
        assert device_ptr(g) == host_ptr(g)                          # one address
        g[:] = 5
        assert (cuda.as_cuda_array(g).copy_to_host() == 5).all()
        h = cuda.managed_array(4, attach_global=False, stream=0, order="F")
        assert fake.fake_last_managed_flags() == 2                   # ATTACH_HOST
        live = fake.fake_live_bytes()
        del g, h
        gc.collect()
        cuda.synchronize()
        assert fake.fake_live_bytes() == live - 24 - 32
        print("OK")
    """,
    )


def test_kernels_take_mapped_and_managed_arrays_in_place(fake_driver):
    run(
        fake_driver,
        """
        r = cuda.mapped_array(8, np.float32)
        x = cuda.managed_array(8, np.float32)
        y = cuda.mapped_array(8, np.float32)
        x[:] = np.arange(8)
        y[:] = 1
        with warnings.catch_warnings():
            warnings.simplefilter("error")                            # no implicit host copies
            launch.launch(kernels.get_function("saxpy"), SAXPY, 1, 8, 0, 0, (r, 2.0, x, y))
        cuda.synchronize()
        assert (r == 2 * np.arange(8) + 1).all(), r

        # A cujit kernel, through the dispatcher: the device addresses reach the kernel's parameters.
        @cuda.jit
        def k(a, b):
            a[0] = b[0]

        fake.fake_capture_params(14, (ctypes.c_int * 14)(*([8] * 14)))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            k[1, 1](r[2:], x)
        got = [fake.fake_param(i) for i in range(14)]
        assert got[4] == device_ptr(r) + 8 and got[4] != host_ptr(r) + 8, (got, device_ptr(r), host_ptr(r))
        assert got[2:4] == [6, 4] and got[5:7] == [6, 4]
        assert got[11] == device_ptr(x) and got[12:14] == [8, 4]
        print("OK")
    """,
    )


def test_pinned_and_mapped_context_managers(fake_driver):
    run(
        fake_driver,
        """
        a = np.arange(10, dtype=np.float64)
        b = np.zeros((3, 4), np.int32)
        with cuda.pinned(a, b):
            assert fake.fake_live_registrations() == 2 and fake.fake_last_register_flags() == 0
            d = cuda.to_device(a)
        assert fake.fake_live_registrations() == 0
        with cuda.pinned(a):                                         # pinning again works at once
            pass
        with cuda.mapped(a) as da:
            assert isinstance(da, cuda.DeviceNDArray) and fake.fake_last_register_flags() == 2
            assert (da.copy_to_host() == a).all()
            da.copy_to_device(np.ones(10))
        assert (a == 1).all() and fake.fake_live_registrations() == 0
        with cuda.mapped(a, b[:, 1:], stream=cuda.stream()) as (da, db):
            assert db.shape == (3, 3) and db.strides == (16, 4)
            launch.launch(kernels.get_function("saxpy"), SAXPY, 1, 3, 0, 0,
                          (cuda.mapped_array(3, np.float32), 1.0, np.ones(3, np.float32), np.ones(3, np.float32)))
        with cuda.mapped(np.zeros(0)) as empty:
            assert empty.size == 0
        with cuda.pinned(bytearray(64)):
            pass
        raises(TypeError, "takes only the keyword 'stream'", lambda: cuda.mapped(a, portable=True).__enter__())
        raises(TypeError, "cuda.pinned takes host arrays", lambda: cuda.pinned([1, 2]).__enter__())
        print("OK")
    """,
    )


def test_device_array_members(fake_driver):
    run(
        fake_driver,
        """
        host = np.arange(10.0)
        d = cuda.to_device(host)
        parts = list(d.split(4))
        assert [p.shape for p in parts] == [(4,), (4,), (2,)]
        assert [list(p.copy_to_host()) for p in parts] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
        assert parts[1].ptr == d.ptr + 32
        s = cuda.stream()
        assert all(p.stream is s for p in d.split(3, stream=s)) and len(list(d.split(10))) == 1
        assert list(cuda.device_array(0).split(3)) == []
        raises(ValueError, "only support 1d array", d.reshape(2, 5).split, 2)
        raises(ValueError, "only support unit stride", d[::2].split, 2)
        raises(ValueError, "positive section size", d.split, 0)

        q = cuda.to_device(np.arange(6.0).reshape(1, 3, 1, 2))
        assert q.squeeze().shape == (3, 2) and (q.squeeze().copy_to_host() == np.arange(6.0).reshape(3, 2)).all()
        assert q.squeeze(axis=0).shape == (3, 1, 2) and q.squeeze((0, -2)).shape == (3, 2)
        assert q.squeeze(stream=s).stream is s
        raises(ValueError, "size not equal to one", q.squeeze, 1)
        raises(IndexError, "out of bounds", q.squeeze, 7)

        arg = d[2:6].as_cuda_arg()
        assert isinstance(arg, cuda.MemoryPointer) and arg.ptr == d.ptr + 16 and arg.size == 32
        assert arg.device_ctypes_pointer.value == d.ptr + 16

        # IPC: the fake opens handles in the process that made them (it has one address space).
        import pickle
        handle = pickle.loads(pickle.dumps(d[3:].get_ipc_handle()))
        with handle as opened:
            assert (opened.copy_to_host() == host[3:]).all() and fake.fake_open_ipc_mappings() == 1
        assert fake.fake_open_ipc_mappings() == 0
        raw = d.get_ipc_handle()._ipc_handle.handle
        assert isinstance(raw, bytes) and len(raw) == 64
        with cuda.open_ipc_array(raw, shape=(2, 2), dtype=np.float64, offset=16) as view:
            assert (view.copy_to_host() == host[2:6].reshape(2, 2)).all()
        with cuda.open_ipc_array(list(raw), 3, "f8") as first:
            assert list(first.copy_to_host()) == [0.0, 1.0, 2.0]
        ipc_handle = pickle.loads(pickle.dumps(d.get_ipc_handle()._ipc_handle))
        mem = ipc_handle.open(cuda.current_context())
        assert isinstance(mem, cuda.MemoryPointer) and mem.size == 80
        raises(ValueError, "already opened", ipc_handle.open, cuda.current_context())
        ipc_handle.close()
        raises(ValueError, "IpcHandle not opened", ipc_handle.close)
        arr = pickle.loads(pickle.dumps(d.get_ipc_handle()._ipc_handle)).open_array(cuda.current_context(), (5, 2),
                                                                                    np.float64)
        assert (arr.copy_to_host() == host.reshape(5, 2)).all()
        raises(ValueError, "opening IpcHandle from original process", d.get_ipc_handle()._ipc_handle.open,
               cuda.current_context())
        print("OK")
    """,
    )


def test_ipc_handles_of_another_device_are_staged(fake_driver, monkeypatch):
    """A handle made on device 0, opened with device 1 current: mapped in device 0's context and copied into
    device 1's memory (numba's open_staged). The fake's devices share a PCI location, so each is given its own."""
    monkeypatch.setenv("CUJIT_FAKE_DEVICES", "2")
    run(
        fake_driver,
        """
        from cujit.cudadrv import ipc
        import pickle
        ipc.device_identity = lambda device_id: {"pci_domain_id": 0, "pci_bus_id": device_id, "pci_device_id": 0}
        host = np.arange(12.0)
        with cuda.gpus[0]:
            d = cuda.to_device(host)
            handle = pickle.dumps(d[4:].get_ipc_handle())
        with cuda.gpus[1]:
            with pickle.loads(handle) as opened:
                assert opened._context.device_id == 1 and opened.ptr != d.ptr + 32
                assert (opened.copy_to_host() == host[4:]).all()
            assert fake.fake_open_ipc_mappings() == 0            # the mapping closed once the copy was made
        print("OK")
    """,
    )
