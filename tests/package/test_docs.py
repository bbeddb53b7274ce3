"""The documentation's code runs: every ```python block of README.md and docs/*.md is a test (doc_blocks.py beside it
says how a block is marked to run on a GPU, to continue the block before it, or, rarely, not to run).

Each block runs as a program of its own, in a fresh Python process whose current directory is a temp directory
holding the document's `file` blocks (the `.cu` files its examples link). A block that needs no GPU runs with the
CUDA driver pointed at a file that does not exist, so it shows that the code needs no GPU; `gpu` blocks are `gpu`
tests, skipped without a usable GPU. Every PTX string a block makes is assembled with ptxas (tests/conftest.py).
The program's line numbers are the document's, so a failure's traceback points into the markdown file.
"""

import json
import os
import subprocess
import sys

import pytest

import gpu_support

import cujit

import doc_blocks

DOCUMENTS = [doc_blocks.parse(path) for path in doc_blocks.documents()]
BLOCKS = [b for d in DOCUMENTS for b in d.python_blocks()]
FILES = {d.path: d.files() for d in DOCUMENTS}


def _param(block):
    marks = []
    if block.skip:
        marks.append(pytest.mark.skip(reason=block.skip))
    elif block.needs_gpu():
        marks += gpu_support.gpu
        if block.needs_device():
            marks.append(gpu_support.needs_device("links GPU code or loads modules with the driver"))
    return pytest.param(block, id=block.id, marks=marks)


def run_block(block, workdir, files=None, timeout=300):
    """Runs `block`'s program in `workdir`, with `files` ({name: text}; by default its document's `file` blocks)
    written there; returns (returncode, stdout, stderr, PTX strings made)."""
    for name, text in (FILES[block.doc] if files is None else files).items():
        (workdir / name).write_text(text + "\n")
    program = workdir / (os.path.basename(block.doc) + ".py")
    program.write_text(block.program())
    ptx_json = workdir / "ptx.json"
    # The cujit this process imported, also where it comes from a relative PYTHONPATH (`make gpu-test`).
    path = [os.path.dirname(os.path.dirname(os.path.abspath(cujit.__file__)))]
    path += [os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = dict(
        os.environ,
        CUJIT_CACHE_DIR=str(workdir / "cache"),
        XDG_CACHE_HOME=str(workdir / "xdg-cache"),
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONPATH=os.pathsep.join(path),
    )
    env.pop("CUJIT_CACHE", None)
    if not block.needs_gpu():
        env["CUJIT_CUDA_DRIVER"] = str(workdir / "no-gpu" / "libcuda.so.1")  # any use of the driver fails
    proc = subprocess.run(
        [sys.executable, doc_blocks.__file__, str(program), str(ptx_json)],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    made = json.loads(ptx_json.read_text()) if ptx_json.exists() else []
    return proc.returncode, proc.stdout, proc.stderr, made


@pytest.mark.parametrize("block", [_param(b) for b in BLOCKS])
def test_block_runs(block, tmp_path, register_ptx):
    returncode, out, err, made = run_block(block, tmp_path)
    for ptx in made:
        register_ptx(ptx)
    where = " + ".join(b.id for b in block.chain())
    assert returncode == 0, (
        f"the code block at {where} failed ({'GPU' if block.needs_gpu() else 'no GPU'}); "
        f"the program's line numbers are the document's.\n--- stdout ---\n{out[-3000:]}"
        f"\n--- stderr ---\n{err[-6000:]}"
    )


def test_blocks_are_found():
    """The collector sees the documents' blocks (a parser that found none would pass everything)."""
    assert len(DOCUMENTS) >= 9, [d.path for d in DOCUMENTS]
    assert len(BLOCKS) >= 8, [b.id for b in BLOCKS]
    assert any(b.needs_gpu() for b in BLOCKS) and any(not b.needs_gpu() and not b.skip for b in BLOCKS)


def test_every_code_block_names_its_language():
    """An untagged fence would hide Python from this test: every block says what it holds."""
    untagged = [b.id for d in DOCUMENTS for b in d.blocks if not b.language]
    assert not untagged, f"code blocks without a language after the fence (```python, ```sh, ```text...): {untagged}"


def test_a_wrong_block_fails(tmp_path):
    """A block whose code fails fails its test, at the document's line; a plain block cannot reach the driver."""
    doc = tmp_path / "wrong.md"
    doc.write_text("# A wrong doc\n\ntext\n\n```python\nfrom cujit import cuda\n\nassert cuda.is_available()\n```\n")
    (block,) = doc_blocks.parse(doc, "wrong.md").python_blocks()
    returncode, _, err, _ = run_block(block, tmp_path, files={})
    assert returncode != 0
    assert 'wrong.md.py", line 8' in err and "AssertionError" in err, err


def test_markers(tmp_path):
    """Markers: continue joins the previous python block (each line at its line in the document), skip needs a
    reason, a marker belongs just above a fence, file blocks are written for the document's python blocks."""

    def parse(text):
        path = tmp_path / "doc.md"
        path.write_text(text)
        return doc_blocks.parse(path, "doc.md")

    doc = parse(
        "a\n\n```python\nx = 1\n```\n\nb\n<!-- test: continue, gpu -->\n```python\nassert x == 1\n```\n"
        "<!-- test: file k.cu -->\n```cuda\nint f;\n```\n"
    )
    first, second = doc.python_blocks()
    assert not first.needs_gpu() and second.needs_gpu() and second.previous is first
    assert second.program().splitlines() == ["", "", "", "x = 1", "", "", "", "", "", "assert x == 1"]
    assert doc.files() == {"k.cu": "int f;"}
    with pytest.raises(ValueError, match="needs a reason"):
        parse("<!-- test: skip -->\n```python\npass\n```\n")
    with pytest.raises(ValueError, match="just above"):
        parse("<!-- test: gpu -->\n\n```python\npass\n```\n")
    with pytest.raises(ValueError, match="cannot read"):
        parse("<!-- test: gpus -->\n```python\npass\n```\n")
    with pytest.raises(ValueError, match="'continue' needs"):
        parse("<!-- test: continue -->\n```python\npass\n```\n")
