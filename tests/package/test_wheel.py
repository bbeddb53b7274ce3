"""The wheel as a user gets it (`make test-wheel`, part of `make test`): `dist/cujit-*-cp3XX-*manylinux*.whl` for
this Python is installed with pip into a new venv whose PATH holds no compiler, then, from a directory outside
the source tree, `python -m cujit --version` names the wheel's version, the demo runs, and a slice of the suite
runs against the installed package (a copy of tests/, so nothing imports python/ from this checkout).

Run only by `make test-wheel` (CUJIT_WHEEL_REQUIRED=1: a missing wheel fails) or with CUJIT_WHEEL=path."""

import glob
import os
import pathlib
import shutil
import subprocess
import sys
import venv

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TAG = f"cp{sys.version_info.major}{sys.version_info.minor}"
# What runs against the installed wheel: compiling, linking (NVRTC, nvJitLink, libNVVM from the cu13 extra),
# the public names, the launch path's argument rules without a GPU.
SLICE = [
    "compiler/test_api_forms.py",
    "compiler/test_language.py",
    "compiler/test_ltoir_output.py",
    "package/test_cuda_namespace.py",
    "package/test_no_driver.py",
    "runtime/test_kernel_cache.py",
]


def _wheel():
    given = os.environ.get("CUJIT_WHEEL")
    if given:
        return pathlib.Path(given)
    found = sorted(glob.glob(str(ROOT / "dist" / f"cujit-*-{TAG}-{TAG}-*manylinux*.whl")))
    if found:
        return pathlib.Path(found[-1])
    if os.environ.get("CUJIT_WHEEL_REQUIRED"):
        pytest.fail(f"no wheel for {TAG} in dist/: `make wheel` builds it")
    pytest.skip("the wheel test runs in `make test-wheel` (or with CUJIT_WHEEL=path)")


def _run(args, env, cwd, timeout=900):
    proc = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(map(str, args))}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout


def test_the_wheel_installs_and_runs_without_a_compiler(tmp_path):
    wheel = _wheel()
    if not os.environ.get("CUJIT_WHEEL_REQUIRED") and not os.environ.get("CUJIT_WHEEL"):
        pytest.skip("run by make test-wheel")
    version = wheel.name.split("-")[1]
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    # PATH: the venv alone (pip, python), so no cc, gcc, c++ or nvcc can be found.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "CUJIT_WHEEL"))}
    env["PATH"] = str(env_dir / "bin")
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    for compiler in ("cc", "gcc", "c++", "g++", "clang", "nvcc"):
        assert shutil.which(compiler, path=env["PATH"]) is None, compiler
    _run([python, "-m", "pip", "install", "-q", f"{wheel}[cu13]", "pytest"], env, tmp_path)

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    assert _run([python, "-m", "cujit", "--version"], env, outside).strip() == version
    where = _run(
        [
            python,
            "-c",
            "import cujit, cujit._core as c; print(cujit.__file__); print(*c.library_files(), sep='\\n'); "
            "import cujit._compiler",
        ],
        env,
        outside,
    )
    assert all(line.startswith(str(env_dir)) for line in where.split()), where
    demo = _run([python, str(ROOT / "examples" / "demo.py")], env, outside)
    assert ".visible .func" in demo or ".func" in demo, demo[-2000:]

    for tree in ("tests", "docs"):  # test_cuda_namespace reads the docs beside the tests
        shutil.copytree(ROOT / tree, outside / tree, ignore=shutil.ignore_patterns("__pycache__"))
    report = _run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *[f"tests/{t}" for t in SLICE]], env, outside
    )
    assert " passed" in report and " failed" not in report, report[-3000:]
