"""The ufunc fast path (contiguous arrays of one shape, Python scalars) gives what the general
path gives, and never serves a call it was not prepared for (GPU)."""

import numpy as np
import pytest

import gpunb as gp
from gpunb._math.ufuncs import UFUNCS
from gpunb.core.runtime import driver

pytestmark = pytest.mark.gpu


def test_fast_path_is_prepared_and_matches_numpy():
    x = np.arange(1000, dtype=np.float32)
    y = np.linspace(-3, 3, 1000, dtype=np.float32)
    a, b = gp.asarray(x), gp.asarray(y)
    for _ in range(3):                       # general path first, then the prepared one
        np.testing.assert_array_equal((a + b).get(), x + y)
        np.testing.assert_array_equal((a * 2.5).get(), x * np.float32(2.5))
        np.testing.assert_array_equal((3 - a).get(), np.float32(3) - x)
    prepared = {key[0] for key in driver.context().prepared if isinstance(key, tuple)}
    assert UFUNCS["add"] in prepared and UFUNCS["multiply"] in prepared


def test_one_element_arrays_do_not_poison_the_fast_path():
    one = gp.asarray(np.array([2.0]))
    np.testing.assert_array_equal((one + one).get(), [4.0])     # 'uniform' kernel
    x = np.arange(10.0)
    g = gp.asarray(x)
    for _ in range(2):
        np.testing.assert_array_equal((g + g).get(), x + x)
        np.testing.assert_array_equal((one + one).get(), [4.0])


def test_misaligned_views_broadcasts_and_overflow_take_the_general_path():
    x = np.arange(1001, dtype=np.float32)
    g = gp.asarray(x)
    for _ in range(2):
        np.testing.assert_array_equal((g[1:] + g[:-1]).get(), x[1:] + x[:-1])    # offset 4 bytes
        np.testing.assert_array_equal((g[::2] * 2).get(), x[::2] * 2)
        np.testing.assert_array_equal((g + g[:1]).get(), x + x[:1])
    i8 = gp.asarray(np.arange(5, dtype=np.int8))
    for _ in range(2):
        np.testing.assert_array_equal((i8 + 1).get(), np.arange(5, dtype=np.int8) + 1)
    with pytest.raises(OverflowError):
        i8 + 300                            # NEP 50: a Python int out of int8's range


def test_dtype_pairs_are_separate_entries():
    a32 = gp.asarray(np.ones(100, np.float32))
    a64 = gp.asarray(np.ones(100, np.float64))
    for _ in range(2):
        assert (a32 + a32).dtype == np.float32
        assert (a32 + a64).dtype == np.float64
        assert (a32 + 1).dtype == np.float32
        assert (gp.asarray(np.ones(100, np.int32)) + 1.5).dtype == np.float64


def test_numpy_scalars_are_strong_not_python_floats():
    """np.float64 subclasses float: it must still promote as a NumPy scalar (NEP 50)."""
    x = np.arange(10, dtype=np.float32)
    g = gp.asarray(x)
    for s in (np.float64(2.5), np.float32(2.5), np.int64(3)):
        r = g * s
        want = x * s
        assert r.dtype == want.dtype, (type(s), r.dtype, want.dtype)
        np.testing.assert_array_equal(r.get(), want)
