"""docs/architecture.md stays true: its component table lists every C++ library CMakeLists.txt builds, in an
order where each depends only on rows above it (the graph derived from the cujit_component calls), and every
page the code and docs point to (docs/*.md) exists in the repository; no comment points at documents outside it."""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def cmake_graph():
    text = (ROOT / "CMakeLists.txt").read_text()
    graph = {}
    for name, body in re.findall(r"cujit_component\((\w+)(.*?)\)\n", text, re.S):
        deps = body.split("DEPS", 1)[1].split() if "DEPS" in body else []
        graph[name] = {d for d in deps if d.startswith("cujit_")}
    return graph


def documented_order():
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text.split("## Components", 1)[1].split("\n## ", 1)[0]
    table = section[section.index("| component |") :].split("\n\n", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    return [re.findall(r"\(`(cujit_\w+)`\)", row.split("|")[1]) for row in rows]


def test_the_graph_is_read():
    graph = cmake_graph()
    assert {"cujit_types", "cujit_codegen", "cujit_hostrt", "cujit_cache"} <= set(graph)
    assert {"cujit_lowering", "cujit_link", "cujit_background"} <= graph["cujit_codegen"]


def test_every_library_is_listed_once():
    listed = [name for row in documented_order() for name in row]
    assert sorted(listed) == sorted(cmake_graph()), "docs/architecture.md's table and CMakeLists.txt differ"


def test_each_component_depends_only_on_rows_above():
    graph = cmake_graph()
    row_of = {name: i for i, row in enumerate(documented_order()) for name in row}
    wrong = [
        f"{name} (row {row_of[name]}) depends on {dep} (row {row_of[dep]})"
        for name, deps in graph.items()
        for dep in deps
        if row_of[dep] >= row_of[name]
    ]
    assert not wrong, "docs/architecture.md orders components against their dependencies: " + "; ".join(wrong)


def tracked(*patterns):
    out = subprocess.run(["git", "ls-files", *patterns], cwd=ROOT, capture_output=True, text=True, check=True)
    return [ROOT / p for p in out.stdout.split()]


def test_references_resolve_inside_the_repository():
    files = tracked("python", "cpp", "tests", "docs", "benchmarks", "examples", "README.md")
    missing, outside = [], []
    for path in files:
        if path.suffix not in (".py", ".cpp", ".h", ".md", ".inc") or path == Path(__file__):
            continue
        text = path.read_text(errors="replace")
        for page in set(re.findall(r"\bdocs/([\w-]+\.md)", text)):
            if not (ROOT / "docs" / page).exists():
                missing.append(f"{path.relative_to(ROOT)} -> docs/{page}")
        if re.search(r"\bspec §|design decision \d", text):
            outside.append(str(path.relative_to(ROOT)))
    assert not missing, missing
    assert not outside, f"references to documents outside the repository in {outside}"
