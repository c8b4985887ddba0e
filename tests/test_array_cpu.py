"""Array API pieces that need no GPU."""

import pytest

import gpunb as gp


def test_zeros_without_gpu_raises_gpu_unavailable(no_gpu):
    with pytest.raises(gp.GPUUnavailableError) as info:
        gp.zeros(3)
    assert info.value.reason == no_gpu


def test_constants_and_namespace():
    import numpy as np

    assert gp.inf == np.inf and gp.pi == np.pi and gp.e == np.e and gp.newaxis is None
    assert np.isnan(gp.nan)
    assert gp.add.nin == 2 and gp.sqrt.nout == 1 and gp.abs is gp.absolute
    assert gp.divide is gp.true_divide and gp.mod is gp.remainder


def test_unsupported_dtype_is_named():
    with pytest.raises(TypeError, match="longdouble|float128|not supported"):
        gp.empty(3, "float128") if hasattr(__import__("numpy"), "float128") else gp.empty(3, "U4")
