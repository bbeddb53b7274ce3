"""Ahead of time: a module's kernels as fatbins for several GPU architectures, loaded later with no compiler work
(containers, CI, air-gapped clusters; ``docs/caching.md``).

    python -m cujit.aot kernels.py --arch sm_80,sm_90,sm_100 [-o kernels.cujit-aot] [--warm-cache]

builds, for every kernel of ``kernels.py`` with eager signatures (``@cuda.jit("void(float32[:])")``), one fatbin per
specialisation holding its cubin for each architecture (linked with everything it links, by nvJitLink; packed by
the toolkit's ``fatbinary``), and an ``index.json``. A program that calls ``cujit.aot.load(path)`` (or runs with
``CUJIT_AOT=path[:path...]``) then takes those kernels from the bundle: no typing, LLVM, NVRTC or nvJitLink, and
their modules' setup callbacks run as for a fresh load. A bundle entry is found by the same walk as the disk
cache's key (the kernel's code and everything it reaches, the argument types, the options) without the file's
location and the toolchain: it serves the same code wherever it is installed, and a kernel whose code changed
compiles as usual. ``--warm-cache`` also writes the disk cache's entries for each architecture.
"""

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile

from cujit import _core, caching, linking, toolkit

INDEX = caching.BUNDLE_INDEX


def _cc_of(arch):
    """ "sm_90" or "sm_90a" -> (9, 0); what a kernel for such a device compiles with."""
    digits = arch.removeprefix("sm_").rstrip("af")
    if not arch.startswith("sm_") or not digits.isdigit() or len(digits) < 2:
        raise ValueError(f"an architecture is written sm_XY (sm_80, sm_90, sm_100), got {arch!r}")
    return int(digits[:-1]), int(digits[-1])


def _import(module):
    if not isinstance(module, (str, os.PathLike)):
        return module
    path = os.path.abspath(os.fspath(module))
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None:
        raise ValueError(f"{path} is not a Python module")
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, mod)
    sys.path.insert(0, os.path.dirname(path))
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(os.path.dirname(path))
    return mod


def fatbinary_path():
    """The toolkit's ``fatbinary`` (``$CUDA_HOME/bin``, the pip wheels, ``/usr/local/cuda/bin``, ``PATH``)."""
    for root in toolkit.search_roots():
        path = os.path.join(root, "bin", "fatbinary")
        if os.access(path, os.X_OK):
            return path
    found = shutil.which("fatbinary")
    if found is None:
        raise FileNotFoundError(
            "cujit.aot needs the CUDA toolkit's fatbinary; it was looked for in $CUDA_HOME/bin, "
            f"the pip wheels and /usr/local/cuda/bin (CUDA_HOME={os.environ.get('CUDA_HOME')!r})"
        )
    return found


def make_fatbin(cubins):
    """One fatbin holding ``cubins`` ({arch: cubin bytes}), made by ``fatbinary``."""
    with tempfile.TemporaryDirectory(prefix="cujit-aot-") as tmp:
        images = []
        for arch, cubin in cubins.items():
            path = os.path.join(tmp, f"{arch}.cubin")
            with open(path, "wb") as f:
                f.write(cubin)
            images.append(f"--image3=kind=elf,sm={arch.removeprefix('sm_')},file={path}")
        out = os.path.join(tmp, "out.fatbin")
        proc = subprocess.run([fatbinary_path(), "-64", f"--create={out}", *images], capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"fatbinary failed: {proc.stderr.strip() or proc.stdout.strip()}")
        with open(out, "rb") as f:
            return f.read()


def _kernels(mod):
    for name, value in sorted(vars(mod).items()):
        if isinstance(value, _core.Dispatcher) and not value.device:
            yield name, value


def build(module, archs, output=None, warm_cache=False):
    """Builds the bundle of ``module`` (a path or a module) for ``archs`` (``["sm_80", "sm_90"]``) into ``output``
    (default: ``<module>.cujit-aot`` beside it); returns the index. Kernels without eager signatures are listed
    under ``"skipped"``: their argument types are known only at their launches."""
    ccs = {arch: _cc_of(arch) for arch in archs}
    previous = os.environ.get("CUJIT_CACHE")
    if warm_cache:
        os.environ["CUJIT_CACHE"] = "1"
    try:
        mod = _import(module)
        if output is None:
            output = os.path.splitext(os.path.abspath(mod.__file__))[0] + ".cujit-aot"
        os.makedirs(output, exist_ok=True)
        index = {"module": mod.__name__, "archs": list(archs), "kernels": [], "skipped": []}
        for name, dispatcher in _kernels(mod):
            signatures = list(dispatcher.overloads)
            if not signatures:
                index["skipped"].append(name)
            for argtypes in signatures:
                for noalias in _variants(argtypes):
                    index["kernels"].append(
                        _build_one(dispatcher, argtypes, noalias, ccs, output, len(index["kernels"]))
                    )
        with open(os.path.join(output, INDEX), "w") as f:
            json.dump(index, f, indent=1)
        return index
    finally:
        if warm_cache:
            if previous is None:
                os.environ.pop("CUJIT_CACHE", None)
            else:
                os.environ["CUJIT_CACHE"] = previous


def _variants(argtypes):
    """The noalias variant of a kernel, and the one for overlapping arrays when it has two or more."""
    return (True, False) if _core.noalias_arrays(list(argtypes)) > 1 else (True,)


def _build_one(dispatcher, argtypes, noalias, ccs, output, number):
    signature = _core.Signature(None, list(argtypes))
    cubins, symbols, kernel = {}, {}, None
    for arch, cc in ccs.items():  # (each compile names the kernel anew: the symbol is kept per architecture)
        kernel = dispatcher._compile_signature(signature, cc, noalias=noalias)
        if kernel.exceptions:
            raise ValueError(f"{dispatcher.__qualname__}: debug kernels that raise are not built ahead of time")
        cubins[linking.arch_for(cc)] = kernel.link(cc)
        symbols[linking.arch_for(cc)] = kernel.entry
    filename = f"{number}-{dispatcher.__name__}.fatbin"
    with open(os.path.join(output, filename), "wb") as f:
        f.write(make_fatbin(cubins))
    key, _ = caching.bundle_key(dispatcher, argtypes, kernel.options)
    return {
        "key": key,
        "kernel": dispatcher.__qualname__,
        "argtypes": [str(t) for t in argtypes],
        "noalias": noalias,
        "symbols": symbols,
        "cooperative": bool(kernel.cooperative),
        "links": caching.link_manifest(kernel.typed.link_inputs),
        "archs": sorted(cubins),
        "fatbin": filename,
    }


def load(path):
    """Makes the bundle at ``path`` (a directory ``build`` wrote) serve its kernels in this process (the same as
    naming it in ``CUJIT_AOT``); returns its index, or None when it is not trusted (``caching.load_bundle``)."""
    return caching.load_bundle(path)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m cujit.aot", description=__doc__.split("\n\n")[0])
    parser.add_argument("module", help="the Python file whose kernels to build")
    parser.add_argument("--arch", required=True, help="comma-separated: sm_80,sm_90,sm_100")
    parser.add_argument("-o", "--output", help="the bundle's directory (default: <module>.cujit-aot)")
    parser.add_argument("--warm-cache", action="store_true", help="also write the disk cache's entries")
    options = parser.parse_args(argv)
    archs = [a.strip() for a in options.arch.split(",") if a.strip()]
    index = build(options.module, archs, options.output, options.warm_cache)
    for entry in index["kernels"]:
        print(
            f"{entry['kernel']}({', '.join(entry['argtypes'])}){'' if entry['noalias'] else ' [overlapping]'}: "
            f"{entry['fatbin']} ({', '.join(entry['archs'])})"
        )
    for name in index["skipped"]:
        print(f"{name}: skipped (no eager signature)")


if __name__ == "__main__":
    main()
