"""The CPU target against the GPU on 1000 random kernels, from 1400 seeds (target_differential.py): both targets in
one process, the same inputs (the seeds shared among processes); integer results equal, floating results within the
ulps allowed, elements an ulp of a math function carries far (ill-conditioned ones) left out. Needs a GPU (the CPU
target alone cannot be compared with anything here)."""

import os

import pytest

import gpu_support
import target_differential

# About three in four seeds make a program both targets run (the rest are invalid, refused by the compiler for both,
# or loop forever on both): 1400 seeds give the 1000 kernels.
SEEDS = range(int(os.environ.get("CUJIT_TARGET_DIFF_SEEDS", "1400")))
KERNELS = 1000 if "CUJIT_TARGET_DIFF_SEEDS" not in os.environ else 0

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gpu_support.GPU_AVAILABLE, reason="needs a GPU and the CPU target"),
    gpu_support.needs_device("runs the same kernels on the GPU, beside the CPU target"),
]


def test_random_kernels_agree_on_cpu_and_gpu():
    outcomes = target_differential.compare_in_processes(SEEDS)
    ran = [s for s, o in outcomes.items() if not o.startswith("skipped")]
    differing = {s: o for s, o in outcomes.items() if o.startswith("differ")}
    ill = {s: o for s, o in outcomes.items() if "ill-conditioned" in o}
    print(
        f"{len(outcomes)} valid programs, {len(ran)} run on both targets, {len(differing)} differ, {len(ill)} agree "
        f"but for ill-conditioned elements: " + ", ".join(f"seed {s} {o.split('for ')[1]}" for s, o in ill.items())
    )
    problems = [f"seed {s}: {o}\n{target_differential.generate(s).source}" for s, o in list(differing.items())[:5]]
    assert not problems, "\n\n".join(problems)
    # Programs the compiler refuses for both targets alike (typing errors the fuzzer plants by chance) are few.
    assert len(ran) >= 0.8 * len(outcomes)
    assert len(ran) >= KERNELS
