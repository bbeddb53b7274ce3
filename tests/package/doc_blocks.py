"""The code blocks of README.md and docs/*.md, as programs (test_docs.py beside it runs them).

Every fenced ```python block is a test. An HTML comment on the line just above a block's fence (readers of the
rendered page do not see it) says how it runs; without one it is a complete program that needs no GPU:

    <!-- test: gpu -->               needs a GPU (a `gpu` test); a plain block must run with no driver at all
    <!-- test: continue -->          runs after the document's previous python block, in the same program
    <!-- test: continue, gpu -->     both
    <!-- test: gpu, device -->       needs a GPU itself (linked GPU code, the driver's modules): skipped on the CPU
                                     target (CUJIT_TARGET=cpu), where the other gpu blocks run
    <!-- test: skip (reason) -->     not run; the reason is required (a shell-only or deliberately partial fragment)
    <!-- test: file NAME -->         on a block of any language: its text is written to NAME in the directory the
                                     document's python blocks run in (e.g. the `functions.cu` a block links)

Run as a script (``python doc_blocks.py PROGRAM PTX_JSON``) this module is the runner of one program: it runs
PROGRAM as ``__main__`` with the current directory first on ``sys.path``, and writes every PTX string cujit's
compiler produced meanwhile to PTX_JSON, so that the test can assemble it with ptxas.
"""

import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository (this file is tests/package/doc_blocks.py)

_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`\s]*)[^`]*$")
_MARKER = re.compile(r"^\s*<!--\s*test:\s*(?P<body>.*?)\s*-->\s*$")
_WORDS = re.compile(
    r"\s*(?:(?P<skip>skip)\s*(?:\((?P<reason>[^)]*)\))?|(?P<file>file)\s+(?P<name>[\w.-]+)|"
    r"(?P<word>gpu|continue|device))\s*(?:,|$)"
)


@dataclass
class Block:
    doc: str  # the document's path relative to the repository: "docs/linking.md"
    line: int  # the line of the first line of code (after the opening fence), 1-based
    language: str  # the fence's info string: "python", "cuda", "sh", ""
    code: str
    gpu: bool = False
    device: bool = False  # needs a GPU itself, not the CPU target (implies gpu)
    continues: bool = False
    skip: str | None = None  # the reason, when the block is not run
    file: str | None = None  # the name its text is written to, for a `file NAME` block
    previous: "Block | None" = None  # the block it continues

    @property
    def id(self):
        return f"{self.doc}:{self.line}"

    def chain(self):
        """This block and those it continues, first to last."""
        blocks, b = [], self
        while b is not None:
            blocks.append(b)
            b = b.previous
        return blocks[::-1]

    def needs_gpu(self):
        return any(b.gpu or b.device for b in self.chain())

    def needs_device(self):
        return any(b.device for b in self.chain())

    def program(self):
        """The chain's code, each line at its line number in the document, so that a traceback's line numbers
        are the document's."""
        lines = []
        for b in self.chain():
            lines += [""] * (b.line - 1 - len(lines))
            lines += b.code.splitlines()
        return "\n".join(lines) + "\n"


@dataclass
class Document:
    path: str
    blocks: list = field(default_factory=list)  # every fenced block, in order

    def python_blocks(self):
        return [b for b in self.blocks if b.language == "python"]

    def files(self):
        """{name: text} of the document's `file NAME` blocks."""
        return {b.file: b.code for b in self.blocks if b.file}


def documents():
    """README.md and docs/*.md, in that order."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _parse_marker(body, where):
    attrs = {"gpu": False, "device": False, "continues": False, "skip": None, "file": None}
    pos = 0
    while pos < len(body):
        m = _WORDS.match(body, pos)
        if m is None or m.end() == pos:
            raise ValueError(
                f"{where}: cannot read the test marker '<!-- test: {body} -->' from "
                f"{body[pos:]!r}: expected gpu, device, continue, skip (reason) or file NAME"
            )
        if m.group("skip"):
            reason = (m.group("reason") or "").strip()
            if not reason:
                raise ValueError(f"{where}: 'skip' needs a reason: <!-- test: skip (why this block is not run) -->")
            attrs["skip"] = reason
        elif m.group("file"):
            attrs["file"] = m.group("name")
        elif m.group("word") == "gpu":
            attrs["gpu"] = True
        elif m.group("word") == "device":
            attrs["device"] = True
        else:
            attrs["continues"] = True
        pos = m.end()
    return attrs


def parse(path, name=None):
    """The fenced blocks of the markdown file `path` (called `name` in messages; by default its path in the
    repository), with their markers. Raises ValueError, naming the file and line, for a marker that is not just
    above a fence, one it cannot read, an unclosed fence, or a `continue` with no runnable python block before it."""
    rel = name or str(Path(path).resolve().relative_to(ROOT))
    doc = Document(rel)
    lines = Path(path).read_text().splitlines()
    marker, i = None, 0
    previous_python = None
    while i < len(lines):
        line = lines[i]
        m = _MARKER.match(line)
        if m:
            if marker is not None:
                raise ValueError(f"{rel}:{marker[1]}: a test marker must be just above a code block's fence")
            marker = (_parse_marker(m.group("body"), f"{rel}:{i + 1}"), i + 1)
            i += 1
            continue
        f = _FENCE.match(line)
        if f is None:
            if marker is not None:
                raise ValueError(f"{rel}:{marker[1]}: a test marker must be just above a code block's fence")
            i += 1
            continue
        fence, indent = f.group("fence"), len(f.group("indent"))
        start, j = i + 1, i + 1
        while j < len(lines) and not re.match(rf"^ {{0,3}}{fence[0]}{{{len(fence)},}}\s*$", lines[j]):
            j += 1
        if j == len(lines):
            raise ValueError(f"{rel}:{i + 1}: a code block that is never closed")
        code = "\n".join(ln[indent:] if ln[:indent].strip() == "" else ln for ln in lines[start:j])
        block = Block(rel, start + 1, f.group("info").lower(), code)
        if marker is not None:
            for k, v in marker[0].items():
                setattr(block, k, v)
            marker = None
        if block.language == "python":
            if block.continues:
                if previous_python is None or previous_python.skip:
                    raise ValueError(f"{block.id}: 'continue' needs a python block before it that runs")
                block.previous = previous_python
            previous_python = block
        elif block.gpu or block.device or block.continues or block.skip:
            raise ValueError(
                f"{block.id}: gpu, continue and skip are for python blocks (this one is {block.language or 'untagged'})"
            )
        doc.blocks.append(block)
        i = j + 1
    if marker is not None:
        raise ValueError(f"{rel}:{marker[1]}: a test marker must be just above a code block's fence")
    return doc


def _run(program, ptx_json):
    """The runner: `program` as __main__, the PTX it made written to `ptx_json` (also when it fails)."""
    import json
    import os
    import runpy
    import sys

    import cujit  # noqa: F401  (loads the extension before wrapping it)
    from cujit import _core

    made = []
    _core.observe_ptx(lambda ptx, typed, options: made.append(ptx))
    sys.path[0] = os.getcwd()  # as `python program.py` run from the document's directory would have it
    try:
        runpy.run_path(program, run_name="__main__")
    finally:
        with open(ptx_json, "w") as fh:
            json.dump(made, fh)


if __name__ == "__main__":
    import sys

    _run(sys.argv[1], sys.argv[2])
