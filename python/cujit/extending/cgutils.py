"""``numba.cuda.cgutils`` (``cujit.cuda.cgutils``): numba's IR-level helpers (llvmlite builders), which cujit does not
have. The module imports, so that a library which imports it beside its Python-level extensions still loads; each
of its names raises a NotImplementedError that names the Python-level way."""


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotImplementedError(
        f"cgutils.{name} is numba's IR-level extension API (llvmlite builders), which cujit does not have: write the "
        "implementation in Python with cujit.extending.overload, type_callable or register_jitable, or in CUDA C++ "
        "with cuda.declare_device"
    )
