"""Paths numba-cuda programs import from ``numba.cuda._internal`` (``cuda_fp8``), kept for porting."""
