"""Array API pieces that need no GPU."""

import re

import numpy as np
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


def test_integer_to_negative_integer_power_raises_like_numpy():
    import gpunb as gp
    from gpunb.core.ndarray import MemoryPointer, ndarray

    a = ndarray._view(MemoryPointer(0x10000), (3,), (8,), np.dtype(np.int64), None)
    with pytest.raises(ValueError, match="Integers to negative integer powers are not allowed"):
        a ** -1
    with pytest.raises(ValueError, match="Integers to negative integer powers"):
        gp.power(a, np.int32(-2))
    with pytest.raises(ValueError):
        np.power(np.arange(3), -1)          # the behaviour matched


@pytest.mark.parametrize("call", [
    lambda m, a: m.transpose(a), lambda m, a: m.transpose(a, (1, 0, 2)),
    lambda m, a: m.moveaxis(a, 0, -1), lambda m, a: m.moveaxis(a, [0, 1], [2, 0]),
    lambda m, a: m.expand_dims(a, (0, 2)), lambda m, a: m.squeeze(m.expand_dims(a, 1)),
    lambda m, a: m.swapaxes(a, 0, 2), lambda m, a: m.reshape(a, (6, 4)),
    lambda m, a: m.ravel(a),
    lambda m, a: m.broadcast_to(a[:, :1], (2, 5, 4))])
def test_shape_functions_are_views_like_numpy(call):
    """gpunb's shape functions, and NumPy's through __array_function__, give NumPy's views."""
    from gpunb.core.ndarray import MemoryPointer, ndarray

    host = np.zeros((2, 3, 4))
    a = ndarray._view(MemoryPointer(0x10000), host.shape, host.strides, host.dtype, None)
    want = call(np, host)
    for got in (call(gp, a), call(np, a)):
        assert isinstance(got, ndarray)
        assert got.shape == want.shape
        # (a length-one axis's stride is arbitrary: NumPy and gpunb pick different ones)
        assert [s for s, n in zip(got.strides, got.shape) if n > 1] == \
            [s for s, n in zip(want.strides, want.shape) if n > 1]
        assert got.data.ptr == 0x10000 + (want.__array_interface__["data"][0] - host.ctypes.data)
    assert np.shape(a) == (2, 3, 4) and np.ndim(a) == 3 and np.size(a) == 24


def test_unsupported_numpy_function_is_refused_not_copied():
    from gpunb.core.ndarray import MemoryPointer, ndarray

    a = ndarray._view(MemoryPointer(0x10000), (3,), (8,), np.dtype(np.float64), None)
    with pytest.raises(TypeError, match="numpy.busday_count is not supported on gpunb arrays"):
        np.busday_count(a, a)   # (concatenate, sort, packbits, then polydiv were the example until gpunb had them)


@pytest.mark.parametrize("dt, new", [("float32", "uint32"), ("int16", "int8"), ("uint8", "float32"),
                                     ("complex64", "float32"), ("float64", "complex128"),
                                     ("int64", "uint16"), ("bool", "uint8"), ("uint8", "float16")])
@pytest.mark.parametrize("index", [(), (slice(None), slice(0, 4)), (slice(None), slice(None, None, 2)),
                                   (slice(None, None, -1),), (0,), (slice(None), slice(1, 2)),
                                   (slice(0, 0),), (1, 2), (slice(None), slice(1, 5))])
def test_view_as_another_dtype_follows_numpy(dt, new, index):
    """``x.view(dtype)``: NumPy's shape and strides (the last axis, contiguous, changes
    length), or NumPy's error; a start or stride the new item size does not divide (which a
    GPU load could not read) is refused with an error naming the alignment."""
    from tests.data import fake

    h = np.zeros((3, 8), dt)[index]
    g = fake((3, 8), dt)[index]
    try:
        want = h.view(new)
    except ValueError as e:
        with pytest.raises(ValueError, match=re.escape(str(e))):
            g.view(new)
        return
    ok = (g.data.ptr % np.dtype(new).itemsize == 0 and
          all(s % np.dtype(new).itemsize == 0 for n, s in zip(want.shape, want.strides) if n > 1))
    if not ok and want.size:
        with pytest.raises(ValueError, match="multiples of"):
            g.view(new)
        return
    v = g.view(new)
    assert (v.shape, v.strides, v.dtype) == (want.shape, want.strides, want.dtype)
    assert v.data.ptr == g.data.ptr and v.base is g.base


def test_view_type_and_errors():
    from tests.data import fake

    g = fake((4,), "float32")
    assert g.view(gp.ndarray).dtype == g.dtype and g.view(type=gp.ndarray).shape == (4,)
    assert g.view("int32", gp.ndarray).dtype == np.int32
    with pytest.raises(TypeError, match="subclasses"):
        g.view(type=np.ndarray)
    with pytest.raises(ValueError, match="0d array"):
        fake((), "float32").view("float64")
    with pytest.raises(TypeError):
        g.view("U4")


def test_empty_arrays_pickle_without_the_gpu():
    import pickle

    from gpunb.core.ndarray import MemoryPointer, ndarray

    a = ndarray._view(MemoryPointer(0x10000), (0, 3), (24, 8), np.dtype(np.float64), None)
    b = pickle.loads(pickle.dumps(a))
    assert isinstance(b, ndarray) and b.shape == (0, 3) and b.dtype == np.float64
    assert len(a.flat) == 0 and a.flat.base is a
