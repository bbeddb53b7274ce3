"""``numba.cuda._internal.cuda_fp8``'s names, for ported imports: the same objects as :mod:`cujit.cuda.fp8`."""

from cujit.cuda.fp8 import *  # noqa: F401,F403
from cujit.cuda.fp8 import __all__  # noqa: F401
