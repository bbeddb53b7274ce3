#!/usr/bin/env bash
# Creates .bench-venv/ (repo root, git-ignored) with numba-cuda, the reference that
# benchmarks/compile_latency.py measures cujit against. Compile-only use needs no GPU and
# no driver: the [cu13] extra brings NVRTC (numba-cuda asks it for the supported CCs),
# NVVM and libdevice as wheels, and cuda-pathfinder finds them in the venv, so no
# CUDA_HOME or NUMBA_CUDA_* variable is needed. numpy stays below 2.5, where numba-cuda
# 0.30.4 still finds numpy.row_stack. NVIDIA Warp (warp-lang) comes too: benchmarks/cpu_peers.py runs its CPU
# backend beside cujit's CPU target. Re-running is a no-op once the stamp matches.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.bench-venv"
python="${PYTHON:-python3}"
requirements=("numba-cuda[cu13]==0.30.4" "numpy<2.5" "warp-lang==1.19.0")
stamp="$venv/.setup-stamp"
want="$("$python" -c 'import sys; print(sys.version.split()[0])') ${requirements[*]}"

if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    exit 0
fi

echo "setting up $venv: ${requirements[*]}"
[[ -x "$venv/bin/python" ]] || "$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${requirements[@]}"

# Verify: a device function compiled for sm_75 with no GPU present.
"$venv/bin/python" - <<'EOF'
from numba import cuda, int32

def add(x, y):
    return x + y

ptx, _ = cuda.compile_ptx(add, int32(int32, int32), device=True, cc=(7, 5))
assert ".target sm_75" in ptx, ptx
print(ptx)
EOF

echo "$want" > "$stamp"
echo "ready: $venv"
