"""The documentation's examples on a machine without a GPU (issue 47): every example that needs one says so in a
note just above it, and run there anyway (no driver, not the CPU target) it stops with cujit's CudaSupportError, or
runs, never with another error. doc_blocks.py beside this file reads the blocks and their markers.

The notes (one line in italics, its own paragraph, just above the block's test marker):

    *Needs a GPU, or the CPU target (`CUJIT_TARGET=cpu`, ...).*      a `gpu` block: it runs on the CPU target too
    *Needs a GPU itself: ...*                                        a `gpu, device` block, or one skipped that needs
                                                                     a GPU: the CPU target does not run it
"""

import os
import subprocess
import sys

import pytest

import doc_blocks

DOCUMENTS = [doc_blocks.parse(path) for path in doc_blocks.documents()]
BLOCKS = [b for d in DOCUMENTS for b in d.python_blocks()]
LINES = {d.path: (doc_blocks.ROOT / d.path).read_text().splitlines() for d in DOCUMENTS}
FILES = {d.path: d.files() for d in DOCUMENTS}


def _own_needs(block):
    """'gpu', 'device' (a GPU itself) or None: what this block's own marker (or skip reason) says it needs."""
    if block.device or (block.skip and "GPU" in block.skip):
        return "device"
    return "gpu" if block.gpu else None


def _note(block):
    """The note just above the block: the last non-blank line before its marker (or its fence), or None."""
    lines = LINES[block.doc]
    i = block.line - 3  # the line above the fence (0-based: fence at line - 2)
    if i >= 0 and lines[i].lstrip().startswith("<!-- test:"):
        i -= 1
    while i >= 0 and not lines[i].strip():
        i -= 1
    line = lines[i].strip() if i >= 0 else ""
    return line if line.startswith("*Needs a GPU") else None


@pytest.mark.parametrize("block", [b for b in BLOCKS if _own_needs(b)], ids=lambda b: b.id)
def test_an_example_that_needs_a_gpu_says_so(block):
    note = _note(block)
    assert note is not None, (
        f"{block.id}: this example needs a GPU; put a note in its own paragraph just above "
        "its test marker: *Needs a GPU, or the CPU target (`CUJIT_TARGET=cpu`, "
        "[cpu_target.md](cpu_target.md)).* (or *Needs a GPU itself: why.* where the CPU "
        "target cannot run it)"
    )
    if _own_needs(block) == "device":
        assert note.startswith("*Needs a GPU itself:") and note.endswith(".*"), f"{block.id}: {note}"
    else:
        assert "`CUJIT_TARGET=cpu`" in note and note.endswith(".*"), f"{block.id}: {note}"


def test_an_example_that_needs_no_gpu_has_no_such_note():
    wrong = [b.id for b in BLOCKS if not _own_needs(b) and not b.needs_gpu() and _note(b)]
    assert not wrong, f"examples that run without a GPU but are noted as needing one: {wrong}"


def test_the_notes_are_found():
    assert sum(1 for b in BLOCKS if _own_needs(b) == "device") >= 5
    assert sum(1 for b in BLOCKS if _own_needs(b) == "gpu") >= 20


def _run_without_gpu(block, tmp_path):
    for name, text in FILES[block.doc].items():
        (tmp_path / name).write_text(text + "\n")
    program = tmp_path / (os.path.basename(block.doc) + ".py")
    program.write_text(block.program())
    env = {k: v for k, v in os.environ.items() if k not in ("CUJIT_TARGET", "NUMBA_ENABLE_CUDASIM", "CUJIT_CACHE")}
    env.update(
        CUJIT_CUDA_DRIVER=str(tmp_path / "no-gpu" / "libcuda.so.1"),
        CUJIT_CACHE_DIR=str(tmp_path / "cache"),
        PYTHONDONTWRITEBYTECODE="1",
    )
    return subprocess.run(
        [sys.executable, str(program)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.needs_gpu() and not b.skip], ids=lambda b: b.id)
def test_an_example_that_needs_a_gpu_fails_clearly_without_one(block, tmp_path):
    """With no driver it either runs or stops with CudaSupportError ("CUDA is not available: ..."), the error that
    says a GPU is missing: never with an error of its own (the multi-GPU example divided by len(cuda.gpus))."""
    proc = _run_without_gpu(block, tmp_path)
    if proc.returncode != 0:
        last = proc.stderr.strip().splitlines()[-1]
        assert last.startswith("cujit.errors.CudaSupportError: CUDA is not available"), proc.stderr[-3000:]


def test_the_multi_gpu_example_runs_without_a_gpu(tmp_path):
    (block,) = [b for b in BLOCKS if b.doc == "docs/runtime.md" and "threading.Thread" in b.code]
    proc = _run_without_gpu(block, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("0 GPU(s): []\nno GPU, nothing to run (CUJIT_TARGET=cpu runs this on the CPU):"), (
        proc.stdout
    )
