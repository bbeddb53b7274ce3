"""The compile-only API never loads the CUDA driver (libcuda): checked in a fresh interpreter."""

import textwrap

import programs

SCRIPT = textwrap.dedent("""
    import json, sys
    from cujit import cuda, int32, float32, float64


    def add(x, y):
        return x + y


    def kernel(a, b):
        c = a + b


    def maps():
        with open("/proc/self/maps") as fh:
            return fh.read()

    loaded_after_import = "libcuda" in maps()
    ptxs = [
        cuda.compile_ptx(add, (int32, int32), device=True)[0],
        cuda.compile_ptx(add, (float64, float64), device=True, abi="c", cc=(9, 0))[0],
        cuda.compile(add, float32(float32, float32))[0],
        cuda.compile_ptx(kernel, (int32, int32))[0],
    ]
    mapped = sorted({line.split()[-1] for line in maps().splitlines() if "libcuda" in line})
    print(json.dumps({"after_import": loaded_after_import, "mapped": mapped, "ptxs": ptxs}))
""")


def test_compile_does_not_load_libcuda(tmp_path, register_ptx):
    script = tmp_path / "compile_only.py"
    script.write_text(SCRIPT)
    result = programs.run([script], cwd=str(tmp_path))
    for ptx in result["ptxs"]:
        register_ptx(ptx)
    assert len(result["ptxs"]) == 4 and all(".target sm_" in p for p in result["ptxs"])
    assert not result["after_import"], "importing cujit mapped libcuda"
    assert result["mapped"] == [], f"compiling mapped the CUDA driver: {result['mapped']}"
