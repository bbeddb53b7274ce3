"""Memory managers (python/cujit/cudadrv/memory_managers.py): numba-cuda's EMM plug-in interface and the one
allocation path. On the fake driver (tests/fake_cuda), a counting plug-in sees every device allocation of the
runtime (the driver's live bytes are exactly the plug-in's), host allocations, IPC handles, memory info,
resets and defer_cleanup; NUMBA_CUDA_MEMORY_MANAGER is read as numba-cuda reads it. The pointer and handle
objects are checked without a driver."""

import ast
import os
import pathlib
import pickle
import textwrap

import pytest

from cujit import cuda
from cujit.cudadrv import ipc, memory_managers, memory_pointers
from script_runs import run_script

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "python" / "cujit"

COUNTING_MANAGER = textwrap.dedent('''
    import ctypes, gc, os, pickle
    import numpy as np
    from cujit import cuda, _core

    fake = ctypes.CDLL(os.environ["CUJIT_CUDA_DRIVER"])
    fake.fake_live_bytes.restype = ctypes.c_longlong

    class CountingManager(cuda.GetIpcHandleMixin, cuda.HostOnlyCUDAMemoryManager):
        """Device memory from the C++ allocator, wrapped in MemoryPointers; every call counted."""
        calls = []
        live = {}

        def initialize(self):
            self.calls.append(("initialize",))

        def memalloc(self, size):
            self.calls.append(("memalloc", size))
            block = _core.driver.allocate(size, cuda.current_context()._native)
            self.live[block.ptr] = size
            def release(ptr=block.ptr, block=[block]):
                del self.live[ptr]
                block.clear()
            return cuda.MemoryPointer(cuda.current_context(), ctypes.c_void_p(block.ptr), size, finalizer=release)

        def memhostalloc(self, size, mapped=False, portable=False, wc=False):
            self.calls.append(("memhostalloc", size, mapped, portable, wc))
            return super().memhostalloc(size, mapped, portable, wc)

        def mempin(self, owner, pointer, size, mapped=False):
            self.calls.append(("mempin", size, mapped))
            return super().mempin(owner, pointer, size, mapped)

        def memallocmanaged(self, size, attach_global):
            self.calls.append(("memallocmanaged", size, attach_global))
            return super().memallocmanaged(size, attach_global)

        def get_ipc_handle(self, memory):
            self.calls.append(("get_ipc_handle", memory.size))
            return super().get_ipc_handle(memory)

        def get_memory_info(self):
            self.calls.append(("get_memory_info",))
            return cuda.MemoryInfo(free=123, total=456)

        def reset(self):
            self.calls.append(("reset",))
            super().reset()

        def defer_cleanup(self):
            self.calls.append(("defer_cleanup",))
            return super().defer_cleanup()

        @property
        def interface_version(self):
            return 1

    def kinds(name):
        return [c for c in CountingManager.calls if c[0] == name]
''')


def run(fake_driver, body, env=None):
    environ = dict(
        os.environ,
        CUJIT_CUDA_DRIVER=fake_driver,
        NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS="0",
        CUJIT_CUDA_WARN_ON_IMPLICIT_COPY="0",
        **(env or {}),
    )
    environ.pop("NUMBA_CUDA_MEMORY_MANAGER", None) if "NUMBA_CUDA_MEMORY_MANAGER" not in (env or {}) else None
    proc = run_script(COUNTING_MANAGER + textwrap.dedent(body), "_emm.py", environ)
    assert proc.stdout.strip().endswith("OK"), proc.stdout[-3000:] + proc.stderr[-3000:]


def test_a_counting_manager_sees_every_device_allocation(fake_driver):
    run(
        fake_driver,
        """
        cuda.set_memory_manager(CountingManager)
        kept = []
        kept.append(cuda.device_array((10, 3), np.float32))
        kept.append(cuda.device_array_like(np.zeros((4, 4), order="F")))
        kept.append(cuda.to_device(np.arange(7.0)))
        kept.append(cuda.to_device(np.arange(6.0).reshape(2, 3)[:, ::2]))  # strided host data
        kept.append(cuda.DeviceNDArray((5,), dtype=np.int16))
        kept.append(cuda.current_context().memalloc(100))
        kept.append(cuda.random.create_xoroshiro128p_states(64, seed=1))
        assert kinds("initialize") == [("initialize",)]
        sizes = [c[1] for c in kinds("memalloc")]
        assert sizes[:6] == [120, 128, 56, 32, 10, 100], sizes
        assert len(sizes) == 7, sizes                          # the random states too
        assert fake.fake_live_bytes() == sum(CountingManager.live.values()) > 0

        # Views, reshapes, splits and squeezes allocate nothing.
        before = len(kinds("memalloc"))
        a = kept[0]
        views = [a[1:], a.T, a.reshape(30), a.view(np.int32), a[0].reshape(1, 3, 1).squeeze(), *kept[2].split(3)]
        assert len(kinds("memalloc")) == before

        # The Python launch path's copies of host arrays go through it too.
        dev = cuda.to_device(np.zeros(4, np.float32))
        lib = _core.driver
        ptx = open(os.environ["KERNELS_PTX"], "rb").read() + b"\\0"
        from cujit.cudadrv import launch, modules
        mod = modules.load_module("emm", ptx)
        before = len(kinds("memalloc"))
        x, y = np.ones(4, np.float32), np.full(4, 2, np.float32)
        launch.launch(mod.get_function("saxpy"), ("float32[::1]", "float32", "float32[::1]", "float32[::1]"),
                      1, 4, 0, 0, (dev, 3.0, x, y))
        assert len(kinds("memalloc")) == before + 2            # x and y, copied in
        assert list(dev.copy_to_host()) == [5.0] * 4
        gc.collect()
        cuda.synchronize()                                      # the plug-in's frees reach the driver
        assert fake.fake_live_bytes() == sum(CountingManager.live.values())

        # Dropped arrays go back through the plug-in's finalizer.
        del kept, views, a, dev
        gc.collect()
        cuda.synchronize()
        assert fake.fake_live_bytes() == sum(CountingManager.live.values()) == 0
        print("OK")
    """,
        env={"KERNELS_PTX": str(pathlib.Path(__file__).parents[1] / "data" / "runtime_kernels.ptx")},
    )


def test_host_memory_ipc_info_reset_and_cleanup_go_through_the_manager(fake_driver):
    run(
        fake_driver,
        """
        cuda.set_memory_manager(CountingManager)
        p = cuda.pinned_array(8)
        m = cuda.mapped_array((2, 2), np.int32, portable=True, wc=True)
        g = cuda.managed_array(3, attach_global=False)
        host = np.zeros(16)
        with cuda.pinned(host):
            pass
        with cuda.mapped(host) as d:
            assert isinstance(d, cuda.DeviceNDArray)
        assert kinds("memhostalloc") == [("memhostalloc", 64, False, False, False),
                                         ("memhostalloc", 16, True, True, True)]
        assert kinds("memallocmanaged") == [("memallocmanaged", 24, False)]
        assert kinds("mempin") == [("mempin", 128, False), ("mempin", 128, True)]
        assert kinds("memalloc") == []                          # none of these is device memory

        ctx = cuda.current_context()
        assert ctx.get_memory_info() == (123, 456) and kinds("get_memory_info")
        assert isinstance(ctx.memory_manager, CountingManager)
        arr = cuda.to_device(np.arange(10.0))
        handle = arr[2:].get_ipc_handle()
        assert kinds("get_ipc_handle") == [("get_ipc_handle", 64)]
        with cuda.defer_cleanup():
            assert kinds("defer_cleanup")
        ctx.reset()
        assert kinds("reset") == [("reset",)]
        print("OK")
    """,
    )


def test_plugins_are_checked_and_the_environment_is_read(fake_driver, tmp_path):
    (tmp_path / "my_emm.py").write_text(COUNTING_MANAGER + "\n_numba_memory_manager = CountingManager\n")
    run(
        fake_driver,
        """
        from cujit.cudadrv import memory_managers
        assert memory_managers.memory_manager_class().__name__ == "CountingManager"
        cuda.device_array(4)
        assert len([c for c in memory_managers.memory_manager_class().calls if c[0] == "memalloc"]) == 1
        print("OK")
    """,
        env={"NUMBA_CUDA_MEMORY_MANAGER": "my_emm", "PYTHONPATH": str(tmp_path)},
    )
    run(
        fake_driver,
        """
        try:
            cuda.device_array(4)
        except RuntimeError as e:
            assert "Failed to use memory manager from no_such_emm" in str(e) and "ModuleNotFoundError" in str(e), e
        else:
            raise AssertionError("a missing plug-in module was accepted")
        print("OK")
    """,
        env={"NUMBA_CUDA_MEMORY_MANAGER": "no_such_emm"},
    )
    run(
        fake_driver,
        """
        class Old(CountingManager):
            interface_version = 2
        try:
            cuda.set_memory_manager(Old)
        except RuntimeError as e:
            assert str(e) == "EMM Plugin interface has version 2 - version 1 required", e
        else:
            raise AssertionError
        try:
            cuda.set_memory_manager(42)
        except TypeError as e:
            assert "memory manager class" in str(e)
        else:
            raise AssertionError
        d = cuda.device_array(4)                                # still cujit's own manager
        assert type(d.gpu_data).__name__ == "Allocation"
        print("OK")
    """,
    )


def test_defer_cleanup_holds_device_and_host_frees(fake_driver):
    run(
        fake_driver,
        """
        fake.fake_live_host_allocs.restype = ctypes.c_int
        ctx = cuda.current_context()
        cuda.synchronize()
        base = fake.fake_live_bytes()
        with cuda.defer_cleanup():
            with cuda.defer_cleanup():                          # it nests
                for _ in range(30):
                    cuda.device_array(1000)
                p = cuda.pinned_array(100)
                del p
                gc.collect()
            assert ctx.deallocations_pending() == 30, ctx.deallocations_pending()
            assert fake.fake_live_bytes() == base + 30 * 8000
            assert fake.fake_live_host_allocs() == 1           # its free waits too
            cuda.synchronize()                                  # a flush waits as well
            assert ctx.deallocations_pending() == 30
        assert ctx.deallocations_pending() == 0 and fake.fake_live_bytes() == base
        assert fake.fake_live_host_allocs() == 0
        print("OK")
    """,
    )


def test_the_runtime_allocates_only_through_the_memory_managers():
    """No module but memory_managers calls the C++ allocators (``_core.driver.allocate``, ``host_alloc``,
    ``host_register``, ``alloc_managed``): the one allocation path an external manager replaces."""
    allocators = {"allocate", "host_alloc", "host_register", "alloc_managed"}
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "memory_managers.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in allocators and isinstance(node.ctx, ast.Load):
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno} .{node.attr}")
    assert offenders == []


# ---- the objects, without a driver -------------------------------------------------------------------------


def test_memory_pointer_views_free_and_addresses():
    freed = []
    mem = cuda.MemoryPointer(None, 0x1000, 64, finalizer=lambda: freed.append(1))
    assert mem.device_pointer == 0x1000 and mem.device_pointer.value == 0x1000 and int(mem.handle) == 0x1000
    assert mem.device_pointer_value == 0x1000 and mem.device_ctypes_pointer.value == 0x1000 and mem.ptr == 0x1000
    assert mem.owner is mem and mem.is_managed and mem.size == 64
    view = mem.view(16, 48)
    assert (view.ptr, view.size, view.owner) == (0x1010, 32, mem)
    assert mem.view(8).size == 56
    with pytest.raises(RuntimeError, match="size cannot be negative"):
        mem.view(40, 20)
    mem.free()
    assert freed == [1]
    with pytest.raises(RuntimeError, match="Freeing dead memory"):
        mem.free()
    import ctypes

    assert cuda.MemoryPointer(None, ctypes.c_void_p(0x2000), 8).ptr == 0x2000
    assert cuda.MemoryPointer(None, ctypes.c_uint64(0x3000), 8).ptr == 0x3000
    assert cuda.MemoryPointer(None, 0, 0).device_pointer.value is None
    with pytest.raises(TypeError, match="memory address"):
        cuda.MemoryPointer(None, "0x1000", 8)
    with pytest.raises(RuntimeError, match="non-empty slice into empty slice"):
        cuda.MemoryPointer(None, 0, 0).view(0, 8)


def test_owned_pointers_count_references():
    freed = []
    mem = memory_pointers.AutoFreePointer(None, 0x1000, 64, finalizer=lambda: freed.append(1))
    assert mem.refct == 0
    owned = mem.own()
    other = mem.own()
    assert mem.refct == 2 and owned.ptr == 0x1000 and owned.size == 64
    del owned
    assert freed == []
    del other
    assert freed == [1]


def test_pinned_memory_and_memory_info():
    pinned = cuda.PinnedMemory(None, 0x5000, 32, owner="x", finalizer=None)
    assert pinned.host_pointer == 0x5000 and pinned.owned == "x" and pinned.own() is pinned
    info = cuda.MemoryInfo(free=1, total=2)
    assert info.free == 1 and info.total == 2 and info == (1, 2)


def test_abstract_base_and_context_argument():
    with pytest.raises(TypeError):
        cuda.BaseCUDAMemoryManager(context=None)  # abstract

    class Incomplete(cuda.HostOnlyCUDAMemoryManager):
        def memalloc(self, size):
            return None

    with pytest.raises(TypeError):
        Incomplete(context=None)

    class Complete(cuda.GetIpcHandleMixin, cuda.HostOnlyCUDAMemoryManager):
        def memalloc(self, size):
            return None

        def initialize(self):
            pass

        def get_memory_info(self):
            raise NotImplementedError

        interface_version = 1

    with pytest.raises(RuntimeError, match="requires a context"):
        Complete()
    assert Complete(context=None).context is None
    assert memory_managers.CujitMemoryManager(context=None).interface_version == 1


def test_ipc_handles_pickle_without_their_memory():
    base = object()
    handle = cuda.IpcHandle(base, bytes(range(64)), 100, {"pci_bus_id": 1}, offset=8)
    again = pickle.loads(pickle.dumps(handle))
    assert again.base is None and handle.base is base
    assert (again.handle, again.size, again.source_info, again.offset) == (bytes(range(64)), 100, {"pci_bus_id": 1}, 8)
    with pytest.raises(ValueError, match="opening IpcHandle from original process"):
        handle.open(None)
    with pytest.raises(ValueError, match="IpcHandle not opened"):
        again.close()
    assert cuda.IpcHandle(None, tuple(range(64)), 4).handle == bytes(range(64))
    with pytest.raises(ValueError, match="64 bytes, got 3"):
        cuda.IpcHandle(None, b"abc", 4)
    with pytest.raises(TypeError, match="64 bytes"):
        cuda.IpcHandle(None, 3.5, 4)
    array_handle = ipc.IpcArrayHandle(again, {"shape": (3,), "strides": (8,), "dtype": "f8"})
    assert pickle.loads(pickle.dumps(array_handle))._array_desc["shape"] == (3,)


def test_a_plugin_without_managed_memory_gets_the_drivers(fake_driver):
    run(
        fake_driver,
        """
        class DeviceOnly(cuda.BaseCUDAMemoryManager):
            def memalloc(self, size):
                block = _core.driver.allocate(size, cuda.current_context()._native)
                return cuda.MemoryPointer(self.context, block.ptr, size, finalizer=[block].clear)

            def memhostalloc(self, size, mapped, portable, wc):
                raise NotImplementedError

            def mempin(self, owner, pointer, size, mapped):
                raise NotImplementedError

            def initialize(self):
                pass

            def get_ipc_handle(self, memory):
                raise NotImplementedError

            def get_memory_info(self):
                raise NotImplementedError

            def reset(self):
                pass

            def defer_cleanup(self):
                import contextlib
                return contextlib.nullcontext()

            interface_version = 1

        cuda.set_memory_manager(DeviceOnly)
        g = cuda.managed_array(4)
        g[:] = 2
        assert (cuda.as_cuda_array(g).copy_to_host() == 2).all()
        d = cuda.to_device(np.arange(3.0))
        assert isinstance(d.gpu_data, cuda.MemoryPointer) and list(d.copy_to_host()) == [0.0, 1.0, 2.0]
        try:
            cuda.pinned_array(4)
        except NotImplementedError:
            pass
        else:
            raise AssertionError("the plug-in was not asked")
        try:
            cuda.current_context().get_memory_info()
        except NotImplementedError:
            pass
        else:
            raise AssertionError
        with cuda.defer_cleanup():
            pass
        print("OK")
    """,
    )
