"""The package's import structure: no import cycles inside ``python/cujit`` (the package is layered, each module
importing only modules below it), and ``from cujit import cuda`` loads only what compiling needs (the disk cache
and numpy load on first use).

The import graph is read with ``ast`` from every ``import`` and ``from ... import`` of a cujit module anywhere in
a file, function bodies included: an import moved into a function to dodge a cycle is still a cycle. Importing
``cujit.p.m`` from outside the subpackage ``p`` runs ``p/__init__.py`` first, so it is an edge to ``cujit.p``
too (the root package's ``__init__`` is the entry point every module runs under, and is not counted).
"""

import ast
import importlib.util
import pathlib

from programs import run

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "python" / "cujit"


def _module_names():
    """{dotted module name: file} of the package's Python modules (a package by its ``__init__.py``)."""
    names = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = ("cujit",) + path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def _imported(node, importer, is_package, modules):
    """The cujit modules an Import or ImportFrom node names (``from p import m`` names ``p.m`` when that is a
    module, else ``p``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = importer.split(".") if is_package else importer.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join(package + ([base] if base else []))
    found = [f"{base}.{alias.name}" for alias in node.names if _is_module(f"{base}.{alias.name}", modules)]
    return found or [base]


def _is_module(name, modules):
    """A module of the package, Python or extension (``cujit._runtime``)."""
    if name in modules:
        return True
    parent = modules.get(name.rpartition(".")[0])
    return parent is not None and parent.name == "__init__.py" and importlib.util.find_spec(name) is not None


def _with_packages(target, importer):
    """``target`` and the subpackages its import runs first: those the importer is not inside already."""
    parts = target.split(".")
    packages = [".".join(parts[:i]) for i in range(2, len(parts))]
    return [p for p in packages if importer != p and not importer.startswith(p + ".")] + [target]


def import_graph():
    """{module: {modules it imports, with the lines that do}} for every module of the package."""
    modules = _module_names()
    graph = {}
    for name, path in modules.items():
        edges = graph.setdefault(name, {})
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for target in _imported(node, name, path.name == "__init__.py", modules):
                for dep in _with_packages(target, name):
                    if dep in modules and dep != name:
                        edges.setdefault(dep, []).append(node.lineno)
    return graph


def find_cycles(graph):
    """The import cycles: for each strongly connected component of more than one module (Tarjan), a shortest
    cycle through each of its modules, each cycle once."""
    index, low, stack, on_stack, components = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(set(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    cycles = []
    for component in components:
        for start in sorted(component):
            cycle = _shortest_cycle(graph, component, start)
            turned = cycle.index(min(cycle[:-1]))
            cycle = cycle[turned:-1] + cycle[:turned] + [cycle[turned]]  # from its least module: found once
            if cycle not in cycles:
                cycles.append(cycle)
    return cycles


def _shortest_cycle(graph, component, start):
    """A shortest cycle through ``start`` (breadth first, inside its component)."""
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for v in frontier:
            for w in sorted(graph[v]):
                if w == start:
                    return paths[v] + [start]
                if w in component and w not in paths:
                    paths[w] = paths[v] + [w]
                    following.append(w)
        frontier = following
    raise AssertionError("a strongly connected component without a cycle")


def _describe(graph, cycle):
    return " -> ".join(f"{a} (line {graph[a][b][0]})" for a, b in zip(cycle, cycle[1:])) + f" -> {cycle[-1]}"


def test_the_graph_sees_function_local_imports():
    graph = import_graph()
    assert "cujit._source" in graph["cujit.compiler"]
    assert "cujit.cudadrv.launch" in graph["cujit.dispatcher"]  # imported inside methods (numpy loads with it)
    assert "cujit.cudadrv" in graph["cujit.dispatcher"]  # the subpackage's __init__ runs first


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": {"b": [1]}, "b": {"c": [2]}, "c": {"a": [3]}, "d": {"a": [4]}}
    assert find_cycles(graph) == [["a", "b", "c", "a"]]


def test_no_import_cycles():
    graph = import_graph()
    cycles = find_cycles(graph)
    assert not cycles, "import cycles in python/cujit:\n" + "\n".join(_describe(graph, c) for c in cycles)


# Modules that compiling does not need: the disk cache's machinery (and what it pulls in) loads when a compile
# first uses it, numpy and the CUDA runtime when a program first uses arrays or a GPU, inspect for the first
# lambda (a def's source is found without it).
NOT_AT_IMPORT = (
    "cujit._compiler",  # the compiler (LLVM): at the first compile (cujit._core)
    "cujit.caching",
    "pickle",
    "hashlib",
    "json",
    "fcntl",
    "numpy",
    "cujit.cudadrv",
    "cujit.aot",
    "inspect",
)


def _modules_after(program, tmp_path):
    """The modules ``program`` loaded (a file: compiled functions need their source), beyond those the
    interpreter had already loaded at startup (a site's .pth files may import anything, inspect included)."""

    def loaded_by(text):
        script = tmp_path / "program.py"
        script.write_text(
            "import sys\nat_start = sorted(sys.modules)\n"
            + text
            + "\nat_end = sorted(sys.modules)\nimport json\nprint(json.dumps([at_start, at_end]))\n"
        )
        at_start, at_end = run([script], cwd=tmp_path)
        return set(at_end) - set(at_start)

    return loaded_by(program) - loaded_by("")


# What the first compile loads: the source reader and the parser.
AT_FIRST_COMPILE = ("cujit._source_text", "ast", "textwrap", "tokenize")


def test_importing_cuda_loads_only_what_compiling_needs(tmp_path):
    loaded = _modules_after("from cujit import cuda", tmp_path)
    assert "cujit.compiler" in loaded and "cujit.dispatcher" in loaded
    unwanted = set(NOT_AT_IMPORT + AT_FIRST_COMPILE)
    assert not loaded & unwanted, sorted(loaded & unwanted)


def test_importing_cuda_registers_only_the_core_names_it_needs(tmp_path):
    """The runtime's driver, launch, memory, linking and cache names (two thirds of its module init) are registered
    at their first use, and the compiler (cujit._compiler, LLVM) loads at the first compile."""
    script = tmp_path / "program.py"
    script.write_text(
        "import json\nfrom cujit import cuda, _core\n"
        "at_import = [_core._runtime_registered, _core.compiler_loaded()]\n"
        "cuda.jit(lambda x: None)\n"
        "at_decoration = [_core._runtime_registered, _core.compiler_loaded()]\n"
        "cuda.compile_ptx(lambda a, b: a + b, 'float32(float32, float32)', device=True)\n"
        "print(json.dumps([at_import, at_decoration, [_core._runtime_registered, _core.compiler_loaded()]]))\n"
    )
    assert run([script], cwd=tmp_path) == [[False, False], [True, False], [True, True]]


def test_threads_meeting_the_runtime_names_first_all_find_them(tmp_path):
    """The runtime's names registered at first use are there for every thread that asks at once (none sees the
    registration half done, none loads the compiler for a runtime name)."""
    script = tmp_path / "program.py"
    script.write_text(
        "import json, sys, threading\nfrom cujit import _core\nerrors = []\n"
        "def touch():\n"
        "    try:\n        _core.driver.KernelCache, _core.launch.LaunchTable, _core.cache\n"
        "    except Exception as e:\n        errors.append(repr(e))\n"
        "sys.setswitchinterval(1e-6)\n"
        "threads = [threading.Thread(target=touch) for _ in range(16)]\n"
        "[t.start() for t in threads]\n[t.join() for t in threads]\n"
        "print(json.dumps([errors, _core.compiler_loaded()]))\n"
    )
    assert run([script], cwd=tmp_path) == [[], False]


def test_a_first_compile_loads_no_disk_cache(tmp_path):
    loaded = _modules_after(
        "from cujit import cuda\n\n\n"
        "@cuda.jit(device=True)\n"
        "def add_one(x):\n    return x + 1\n\n\n"
        "def kernel(x):\n    x[0] = add_one(x[0])\n\n\n"
        "cuda.compile_ptx(kernel, 'void(float32[:])')\n",
        tmp_path,
    )
    compiler = {"cujit._compiler"}
    assert loaded & compiler and not loaded & (set(NOT_AT_IMPORT) - compiler), sorted(loaded & set(NOT_AT_IMPORT))


def test_a_cached_kernel_loads_the_disk_cache(tmp_path):
    loaded = _modules_after(
        f"import os\nos.environ['CUJIT_CACHE_DIR'] = {str(tmp_path / 'cache')!r}\n"
        "from cujit import cuda\n\n\n"
        "def kernel(x):\n    x[0] = 1\n\n\n"
        "cuda.jit('void(float32[:])', cache=True)(kernel)\n",
        tmp_path,
    )
    assert "cujit.caching" in loaded


def test_names_moved_down_a_layer_stay_where_users_find_them():
    from cujit import cuda
    from cujit.arg_hints import ArgHint, In, InOut, Out
    from cujit.cudadrv import launch

    assert (cuda.In, cuda.Out, cuda.InOut) == (In, Out, InOut) == (launch.In, launch.Out, launch.InOut)
    assert launch.ArgHint is ArgHint


def test_the_bytecode_frontend_is_reached_through_its_entry_only():
    """cujit.bytecode's modules are private to it: the rest of the package imports the subpackage's entry."""
    import re

    import cujit.bytecode

    package = pathlib.Path(cujit.bytecode.__file__).parent.parent
    reaching_in = [
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if path.parent.name != "bytecode"
        and re.search(r"cujit\.bytecode\._|from cujit\.bytecode import _", path.read_text())
    ]
    assert not reaching_in, reaching_in
    assert cujit.bytecode.__all__ == ["decompile", "function_source"]
