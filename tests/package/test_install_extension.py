"""`make build` installs a rebuilt extension's libraries (cujit._runtime, cujit._compiler, libcujit_runtime.so) each
as a new file renamed over the old (.ci/install-extension): a process that has an old library mapped keeps reading
it whole (an in-place overwrite killed such processes with SIGBUS), the new ones are complete and stripped where
they lie, nothing half-written is left behind, and an extension of the old layout (one ``_core`` library, which
would shadow the package's ``_core.py``) is removed."""

import mmap
import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, ".ci", "install-extension")
NAME = "_runtime.cpython-311-x86_64-linux-gnu.so"
OTHERS = ("_compiler.cpython-311-x86_64-linux-gnu.so", "libcujit_runtime.so")
OLD_LAYOUT = "_core.cpython-311-x86_64-linux-gnu.so"


def a_shared_object(path, marker):
    """A real shared object (strip must accept it) carrying `marker` in its data."""
    src = path + ".c"
    with open(src, "w") as f:
        f.write(f'const char marker[] = "{marker}";\n')
    subprocess.run(["cc", "-shared", "-fPIC", "-o", path, src], check=True)
    os.remove(src)


@pytest.mark.skipif(shutil.which("cc") is None or shutil.which("strip") is None, reason="needs cc and strip")
def test_a_mapped_old_library_survives_the_install(tmp_path):
    build, dest = tmp_path / "build", tmp_path / "site" / "cujit"
    build.mkdir()
    dest.mkdir(parents=True)
    a_shared_object(str(dest / NAME), "old-library")
    with open(dest / NAME, "rb") as f:
        old = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)  # as a running process has it
    old_inode = os.stat(dest / NAME).st_ino
    a_shared_object(str(build / NAME), "new-library" + "x" * 4096)
    for other in OTHERS:
        a_shared_object(str(build / other), "new-" + other)
    a_shared_object(str(dest / OLD_LAYOUT), "old-layout")
    subprocess.run([SCRIPT, str(build), str(dest)], check=True)
    assert b"old-library" in old[:]  # still readable whole: not truncated or overwritten
    new = (dest / NAME).read_bytes()
    assert os.stat(dest / NAME).st_ino != old_inode
    assert b"new-library" in new and os.access(dest / NAME, os.X_OK)
    assert b".symtab" not in new  # stripped, as pip's install strips it
    for other in OTHERS:
        assert f"new-{other}".encode() in (dest / other).read_bytes()
    assert sorted(os.listdir(dest)) == sorted((NAME,) + OTHERS)  # no temporary file left, no old _core
    old.close()
