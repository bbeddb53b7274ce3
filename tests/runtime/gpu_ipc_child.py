"""The other process of tests/runtime/test_gpu_memory.py's IPC tests (started with multiprocessing's spawn):
opens device memory another process shared, reads it, and writes to it."""

import numpy as np


def open_and_double(pickled_handle, results):
    """Opens an IpcArrayHandle (pickled by the test), returns a copy of the array and doubles it in place."""
    import pickle

    from cujit import cuda

    try:
        handle = pickle.loads(pickled_handle)
        with handle as array:
            seen = array.copy_to_host()
            array.copy_to_device(seen * 2)
            cuda.synchronize()
        results.put(("ok", seen))
    except Exception as e:  # the parent reports it
        results.put(("error", f"{type(e).__name__}: {e}"))


def open_raw(raw_handle, shape, dtype, offset, results):
    """Opens a raw 64-byte CUipcMemHandle with cuda.open_ipc_array and returns what it reads."""
    from cujit import cuda

    try:
        with cuda.open_ipc_array(raw_handle, shape, np.dtype(dtype), offset=offset) as array:
            results.put(("ok", array.copy_to_host()))
    except Exception as e:
        results.put(("error", f"{type(e).__name__}: {e}"))
