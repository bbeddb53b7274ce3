"""Array dtypes a kernel would misread are refused wherever an array enters cujit (typeof, a launch, to_device,
device_array_like), as numba refuses them: byte order other than the machine's (a big-endian array read as
native gave garbage), anywhere inside the dtype, and Python objects. Packed records are read as packed."""

import numpy as np
import pytest

from cujit import typeof
from cujit.errors import NumbaValueError

FOREIGN = ">" if np.little_endian else "<"

MISREAD = [
    (FOREIGN + "f8", "byte order"),
    (FOREIGN + "f4", "byte order"),
    (FOREIGN + "i2", "byte order"),
    (np.dtype([("a", "=f4"), ("b", FOREIGN + "i4")]), "field 'b'"),
    (np.dtype([("inner", [("x", FOREIGN + "f8")])]), "field 'inner': field 'x'"),
    (np.dtype([("v", FOREIGN + "f4", (3,))]), "field 'v'"),
    ("O", "Python objects"),
    (np.dtype([("a", "=f4"), ("o", "O")]), "field 'o': Python objects"),
]


@pytest.mark.parametrize("dtype, why", MISREAD)
def test_typeof_refuses_what_a_kernel_would_misread(dtype, why):
    with pytest.raises(NumbaValueError, match=r"Unsupported array dtype") as info:
        typeof(np.zeros(4, dtype))
    assert why in str(info.value)
    assert isinstance(info.value, ValueError)  # numba's NumbaValueError is a ValueError


def test_the_message_says_how_to_convert():
    with pytest.raises(NumbaValueError, match=r"newbyteorder\('='\)"):
        typeof(np.zeros(2, FOREIGN + "f8"))


def test_native_and_packed_dtypes_are_typed():
    assert str(typeof(np.zeros(4, "=f8"))) == "array(float64, 1d, C)"
    packed = np.dtype([("a", "u1"), ("b", "=f8")], align=False)
    t = typeof(np.zeros(2, packed))
    assert "offset=1" in str(t) and str(t).endswith("False), 1d, C)")  # packed: b at byte 1, not aligned
