"""The CPU target against the GPU on 1000 random kernels (target_differential.py): both targets in one process,
the same inputs (the seeds shared among processes); integer results equal, floating results within the ulps allowed. Needs a GPU (the CPU target
alone cannot be compared with anything here)."""

import os

import pytest

import gpu_support
import target_differential

SEEDS = range(int(os.environ.get("CUJIT_TARGET_DIFF_SEEDS", "1000")))

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not gpu_support.GPU_AVAILABLE, reason="needs a GPU and the CPU target"),
              gpu_support.needs_device("runs the same kernels on the GPU, beside the CPU target")]


def test_random_kernels_agree_on_cpu_and_gpu():
    outcomes = target_differential.compare_in_processes(SEEDS)
    ran = [s for s, o in outcomes.items() if not o.startswith("skipped")]
    differing = {s: o for s, o in outcomes.items() if o.startswith("differ")}
    print(f"{len(outcomes)} valid programs, {len(ran)} run on both targets, {len(differing)} differ")
    problems = [f"seed {s}: {o}\n{target_differential.generate(s).source}" for s, o in list(differing.items())[:5]]
    assert not problems, "\n\n".join(problems)
    # Programs the compiler refuses for both targets alike (typing errors the fuzzer plants by chance) are few.
    assert len(ran) >= 0.8 * len(outcomes)
