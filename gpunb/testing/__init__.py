"""``cupy.testing``'s assertions: NumPy's ``numpy.testing`` functions taking gpunb arrays
(and anything else NumPy takes) on either side, with NumPy's messages.

A GPU array is copied to the host to be compared: these are for tests and notebooks that
check results, where reading the answer back is the point.
"""

from __future__ import annotations

import numpy as np
import numpy.testing as _npt

__all__ = ["assert_allclose", "assert_array_almost_equal", "assert_array_almost_equal_nulp",
           "assert_array_equal", "assert_array_less", "assert_array_max_ulp", "assert_array_list_equal",
           "assert_equal"]


def _host(x):
    """A gpunb array (or any ``__cuda_array_interface__`` array) read back; else ``x``."""
    from ..core import args

    g = args.as_gpu(x, "an argument") if not isinstance(x, np.ndarray) else None
    return g.get() if g is not None else x


def assert_allclose(actual, desired, rtol=1e-7, atol=0, equal_nan=True, err_msg="", verbose=True,
                    *, strict=False):
    """``numpy.testing.assert_allclose`` for GPU arrays."""
    _npt.assert_allclose(_host(actual), _host(desired), rtol=rtol, atol=atol, equal_nan=equal_nan,
                         err_msg=err_msg, verbose=verbose, strict=strict)


def assert_array_almost_equal(x, y, decimal=6, err_msg="", verbose=True):
    """``numpy.testing.assert_array_almost_equal`` for GPU arrays."""
    _npt.assert_array_almost_equal(_host(x), _host(y), decimal=decimal, err_msg=err_msg,
                                   verbose=verbose)


def assert_array_almost_equal_nulp(x, y, nulp=1):
    """``numpy.testing.assert_array_almost_equal_nulp`` for GPU arrays."""
    _npt.assert_array_almost_equal_nulp(_host(x), _host(y), nulp=nulp)


def assert_array_max_ulp(a, b, maxulp=1, dtype=None):
    """``numpy.testing.assert_array_max_ulp`` for GPU arrays."""
    return _npt.assert_array_max_ulp(_host(a), _host(b), maxulp=maxulp, dtype=dtype)


def assert_array_equal(x, y, err_msg="", verbose=True, *, strict=False):
    """``numpy.testing.assert_array_equal`` for GPU arrays (``strict``: shapes and dtypes
    must match too)."""
    _npt.assert_array_equal(_host(x), _host(y), err_msg=err_msg, verbose=verbose, strict=strict)


def assert_array_less(x, y, err_msg="", verbose=True, *, strict=False):
    """``numpy.testing.assert_array_less`` for GPU arrays."""
    _npt.assert_array_less(_host(x), _host(y), err_msg=err_msg, verbose=verbose, strict=strict)


def assert_array_list_equal(xlist, ylist, err_msg="", verbose=True):
    """Two sequences of arrays equal pairwise (``cupy.testing.assert_array_list_equal``)."""
    if len(xlist) != len(ylist):
        raise AssertionError(f"List size is different: {len(xlist)} != {len(ylist)}")
    for i, (x, y) in enumerate(zip(xlist, ylist)):
        _npt.assert_array_equal(_host(x), _host(y), err_msg=f"{err_msg} (index {i})".strip(),
                                verbose=verbose)


def assert_equal(actual, desired, err_msg="", verbose=True):
    """``numpy.testing.assert_equal`` for GPU arrays."""
    _npt.assert_equal(_host(actual), _host(desired), err_msg=err_msg, verbose=verbose)
