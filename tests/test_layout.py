"""gpunb.core.layout checked against NumPy on host arrays (hypothesis-generated views)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.lib.array_utils import byte_bounds, normalize_axis_index

from gpunb.core import layout as L

DTYPES = [np.uint8, np.int16, np.float32, np.float64, np.complex128]  # itemsizes 1..16
SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def ptr(a):
    return a.__array_interface__["data"][0]


def outcome(f):
    """``("ok", value)`` or ``("error", type, message)``: what calling ``f`` does."""
    try:
        return ("ok", f())
    except Exception as e:  # noqa: BLE001 -- the type is what is compared
        return ("error", type(e), str(e))


def same_error(expected, got):
    """Both raised, the same exception type and message."""
    assert expected[0] == got[0] == "error", (expected, got)
    assert got[1] is expected[1], (expected, got)
    assert got[2] == expected[2]


def check(expected, got):
    """``got`` is ``expected``: the same value, or the same error."""
    if expected[0] == "ok":
        assert got == expected
    else:
        same_error(expected, got)


def offsets(shape, strides):
    """Reference enumerator: byte offsets of every element, in C order."""
    return [sum(i * s for i, s in zip(idx, strides))
            for idx in itertools.product(*(range(n) for n in shape))]


@st.composite
def views(draw, max_ndim=6, dims=st.sampled_from([0, 1, 1, 2, 2, 3, 3, 4, 5]),
          zero_strides=False):
    """A host array, often non-contiguous: a strided, trimmed, transposed view of a base."""
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(st.lists(dims, max_size=max_ndim))
    steps = [draw(st.sampled_from([1, 1, 2, -1, -2, 3])) for _ in shape]
    base_shape = [n * abs(k) + draw(st.integers(0, 1)) for n, k in zip(shape, steps)]
    if math.prod(base_shape) > 20000 or draw(st.integers(0, 3)) == 0:  # contiguous base
        steps, base_shape = [1] * len(shape), list(shape)
    base = np.arange(math.prod(base_shape)).astype(dtype).reshape(base_shape)
    a = base[tuple(slice(None, None, k) for k in steps) + (...,)]  # (...,): 0-d stays an array
    a = a[tuple(slice(0, n) for n in shape) + (...,)]
    a = a.transpose(draw(st.permutations(range(len(shape)))))
    if zero_strides and a.ndim:
        zero = draw(st.lists(st.booleans(), min_size=a.ndim, max_size=a.ndim))
        a = np.lib.stride_tricks.as_strided(
            a, strides=[0 if z else s for z, s in zip(zero, a.strides)], writeable=False)
    return a


# -- contiguous strides and flags -------------------------------------------------------------

@SETTINGS
@given(st.lists(st.integers(0, 5), max_size=6), st.sampled_from(DTYPES))
def test_c_f_strides(shape, dtype):
    item = np.dtype(dtype).itemsize
    buf = bytearray(max(1, math.prod(shape) * item))  # with a buffer NumPy computes strides
    assert L.c_strides(shape, item) == np.ndarray(shape, dtype, buffer=buf).strides
    assert L.f_strides(shape, item) == np.ndarray(shape, dtype, buffer=buf, order="F").strides


@SETTINGS
@given(views(zero_strides=True))
def test_contiguity_flags(a):
    assert L.is_c_contiguous(a.shape, a.strides, a.itemsize) == a.flags.c_contiguous
    assert L.is_f_contiguous(a.shape, a.strides, a.itemsize) == a.flags.f_contiguous


# -- basic indexing ---------------------------------------------------------------------------

bound = st.none() | st.integers(-8, 8)
index_items = st.one_of(
    st.integers(-7, 7), st.integers(-7, 7).map(np.int64),
    st.builds(slice, bound, bound, st.none() | st.integers(-4, 4)),  # step 0: ValueError
    st.just(None), st.just(Ellipsis))
indices = index_items | st.lists(index_items, max_size=8).map(tuple)


@settings(max_examples=600, deadline=None)
@given(views(), indices)
def test_basic_index_matches_numpy(a, index):
    items = index if isinstance(index, tuple) else (index,)
    if not any(i is Ellipsis for i in items):
        items += (Ellipsis,)  # so that NumPy returns a 0-d view, not a scalar
    expected = outcome(lambda: a[items])
    got = outcome(lambda: L.basic_index(a.shape, a.strides, a.itemsize, index))
    if expected[0] == "error":
        same_error(expected, got)
    else:
        v = expected[1]
        assert got[1] == (v.shape, v.strides, ptr(v) - ptr(a))


@pytest.mark.parametrize("index, message", [
    ((Ellipsis, 0, Ellipsis), "an index can only have a single ellipsis ('...')"),
    ((0, 0, 0), "too many indices for array: array is 2-dimensional, but 3 were indexed"),
    ((None, 0, None, 0, 0), "too many indices for array: array is 2-dimensional, "
                            "but 3 were indexed"),
    (5, "index 5 is out of bounds for axis 0 with size 3"),
    ((Ellipsis, -5), "index -5 is out of bounds for axis 1 with size 4"),
    (2**70, L._INVALID_INDEX), (1.0, L._INVALID_INDEX), ("a", L._INVALID_INDEX),
    ((0, 1.5), L._INVALID_INDEX),
])
def test_index_error_messages(index, message):
    a = np.zeros((3, 4))
    with pytest.raises(IndexError) as np_err:
        a[index]
    assert str(np_err.value) == message
    with pytest.raises(IndexError) as err:
        L.basic_index(a.shape, a.strides, a.itemsize, index)
    assert str(err.value) == message and not isinstance(err.value, L.AdvancedIndexError)


@pytest.mark.parametrize("index", [
    [0, 1], np.array([0, 2]), np.array(1), True, np.False_, (0, [1, 2]), (slice(None), [0]),
    range(2), ((0, 1),), np.zeros((3, 4), bool)])
def test_advanced_index_is_refused(index):
    a = np.zeros((3, 4))
    a[index]  # valid advanced indexing for NumPy
    with pytest.raises(L.AdvancedIndexError, match="only basic indexing"):
        L.basic_index(a.shape, a.strides, a.itemsize, index)


def test_normalize_index_entries():
    got = L.normalize_index((None, -1, Ellipsis, slice(None, None, -2)), (3, 4, 5, 6))
    assert got == [None, 2, range(4), range(5), range(5, -1, -2)]
    assert L.normalize_index((), ()) == [] and L.normalize_index(np.int8(1), (2,)) == [1]


# -- broadcasting -----------------------------------------------------------------------------

small_shapes = st.lists(st.sampled_from([0, 1, 1, 2, 3]), max_size=4).map(tuple)


@SETTINGS
@given(st.lists(small_shapes, max_size=4))
def test_broadcast_shapes(shapes):
    got = outcome(lambda: L.broadcast_shapes(*shapes))
    expected = outcome(lambda: np.broadcast_shapes(*shapes))
    if expected[0] == "ok":
        assert got == expected
        return
    # np.broadcast_shapes words it differently; a ufunc (and nditer) is what gpunb matches.
    ops = [np.empty(s) for s in shapes]
    same_error(outcome(lambda: np.nditer(ops, ["zerosize_ok", "refs_ok"])), got)
    if len(shapes) == 2:
        same_error(outcome(lambda: np.add(*ops)), got)


def test_broadcast_error_text():
    with pytest.raises(ValueError) as np_err:
        np.add(np.zeros((2, 3)), np.zeros(4))
    assert str(L.broadcast_error([(2, 3), (4,)])) == str(np_err.value)
    assert str(np_err.value) == "operands could not be broadcast together with shapes (2,3) (4,) "
    with pytest.raises(ValueError, match="negative dimensions"):
        L.broadcast_shapes((2, -1), (1,))


@st.composite
def broadcast_targets(draw, shape):
    """Usually a shape ``shape`` broadcasts to; sometimes an arbitrary one."""
    if draw(st.integers(0, 4)) == 0:
        return tuple(draw(st.lists(st.integers(-1, 4), max_size=5)))
    lead = draw(st.lists(st.integers(0, 3), max_size=2))
    return tuple(lead) + tuple(draw(st.integers(0, 3)) if n == 1 else n for n in shape)


@SETTINGS
@given(views(max_ndim=4, dims=st.sampled_from([0, 1, 1, 2, 3])), st.data())
def test_broadcast_to(a, data):
    target = data.draw(broadcast_targets(a.shape))
    expected = outcome(lambda: np.broadcast_to(a, target).strides)
    check(expected, outcome(lambda: L.broadcast_to(a.shape, a.strides, target)))


def test_broadcast_to_message():
    with pytest.raises(ValueError) as err:
        L.broadcast_to((3,), (8,), (2, 4))
    assert str(err.value) == ("operands could not be broadcast together with remapped shapes "
                              "[original->remapped]: (3,)  and requested shape (2,4)")
    assert L.broadcast_to((1, 3), (24, 8), (1, 1, 3)) == (0, 0, 8)  # size-1 axes: stride 0


# -- reshape ----------------------------------------------------------------------------------

@st.composite
def reshape_targets(draw, shape):
    """Shapes of the same size built by splitting, merging and adding or removing 1s (and an
    unknown entry), so that views and copies both occur; sometimes an arbitrary shape."""
    if draw(st.integers(0, 5)) == 0:
        return tuple(draw(st.lists(st.integers(-2, 6), max_size=4)))
    dims = []
    for n in shape:
        d = draw(st.sampled_from([k for k in range(1, n + 1) if n % k == 0] or [1]))
        dims += [d, n // d] if n > 1 and draw(st.booleans()) else [n]
    out = []
    for n in dims:
        if out and draw(st.integers(0, 2)) == 0:
            out[-1] *= n
        elif n != 1 or draw(st.booleans()):
            out.append(n)
    for _ in range(draw(st.integers(0, 2))):
        out.insert(draw(st.integers(0, len(out))), 1)
    if draw(st.integers(0, 3)) == 0:
        out = draw(st.permutations(out))
    if out and draw(st.booleans()):
        out[draw(st.integers(0, len(out) - 1))] = -1
    return tuple(out)


@settings(max_examples=400, deadline=None)
@given(views(), st.sampled_from("CFA"), st.data())
def test_reshape_view_matches_numpy(a, order, data):
    target = data.draw(reshape_targets(a.shape))
    expected = outcome(lambda: a.reshape(target, order=order, copy=False))
    got = outcome(lambda: L.reshape(a.shape, a.strides, a.itemsize, target, order))
    if expected[0] == "error" and expected[2] == "Unable to avoid creating a copy while reshaping.":
        assert got == ("ok", None)
    elif expected[0] == "error":
        same_error(expected, got)
        same_error(expected, outcome(lambda: L.resolve_shape(a.size, target)))
    else:
        assert got == ("ok", expected[1].strides)
        assert L.resolve_shape(a.size, target) == expected[1].shape


@pytest.mark.parametrize("size, shape, message", [
    (6, (4,), "cannot reshape array of size 6 into shape (4,)"),
    (6, (4, -1), "cannot reshape array of size 6 into shape (4,newaxis)"),
    (0, (-1, 0), "cannot reshape array of size 0 into shape (0)"),
    (6, (-1, -1), "can only specify one unknown dimension"),
])
def test_resolve_shape_messages(size, shape, message):
    with pytest.raises(ValueError) as np_err:
        np.zeros(size).reshape(shape)
    assert str(np_err.value) == message
    with pytest.raises(ValueError) as err:
        L.resolve_shape(size, shape)
    assert str(err.value) == message


@pytest.mark.parametrize("a, new_shape, order", [
    (np.zeros((2, 3)).T, (6,), "C"),  # a copy
    (np.zeros((2, 3)).T, (6,), "F"),
    (np.zeros((2, 3)).T, (2, 3), "A"),  # 'A' is 'F' for an F-only contiguous array
    (np.zeros((2, 3)).T, (3, 1, 2, 1), "C"),
    (np.zeros((3, 2, 1)).T, (1, 2, 3), "C"),  # an unchanged shape keeps the strides
    (np.zeros((3, 2, 1)).T, (1, -1, 3), "C"),  # ... but not once resolved
    (np.zeros((4, 6))[:, ::2], (2, 2, 3, 1), "C"),
    (np.zeros((4, 6))[:, ::2], (4, 3, 1), "F"),  # trailing 1s in F order
])
def test_reshape_examples(a, new_shape, order):
    got = L.reshape(a.shape, a.strides, a.itemsize, new_shape, order)
    try:
        expected = a.reshape(new_shape, order=order, copy=False).strides
    except ValueError:
        expected = None
    assert got == expected


# -- axes -------------------------------------------------------------------------------------

def axis_values(ndim):
    return st.integers(-ndim - 2, ndim + 1)


@SETTINGS
@given(st.integers(-8, 8), st.integers(0, 6), st.sampled_from([None, "axis1"]))
def test_normalize_axis(axis, ndim, prefix):
    same = outcome(lambda: normalize_axis_index(axis, ndim, prefix))
    got = outcome(lambda: L.normalize_axis(axis, ndim, prefix))
    check(same, got)


@SETTINGS
@given(views(max_ndim=4), st.data())
def test_normalize_axes_like_reductions(a, data):
    ax = axis_values(a.ndim)
    axis = data.draw(st.none() | ax | st.lists(ax, max_size=4).map(tuple))
    expected = outcome(lambda: np.add.reduce(a, axis=axis, keepdims=True))
    got = outcome(lambda: L.normalize_axes(axis, a.ndim))
    if expected[0] == "error":
        same_error(expected, got)
    else:
        assert got[0] == "ok" and len(set(got[1])) == len(got[1])
        reduced = [i in got[1] for i in range(a.ndim)]
        assert expected[1].shape == tuple(1 if r else n for r, n in zip(reduced, a.shape))
        if axis is not None and not isinstance(axis, tuple) and a.ndim == 0:
            assert got[1] == ()  # NumPy's 0-d special case for axis 0 and -1
        elif axis is not None:
            assert got[1] == np.lib.array_utils.normalize_axis_tuple(axis, a.ndim)


@SETTINGS
@given(views(), st.data())
def test_transpose(a, data):
    n = a.ndim
    axes = data.draw(st.one_of(
        st.none(),
        st.permutations(range(n)).flatmap(
            lambda p: st.tuples(*[st.sampled_from([i, i - n]) for i in p])),
        st.lists(axis_values(n), max_size=n + 1).map(tuple)))
    expected = outcome(lambda: (lambda v: (v.shape, v.strides))(np.transpose(a, axes)))
    got = outcome(lambda: L.transpose(a.shape, a.strides, axes))
    check(expected, got)


@SETTINGS
@given(views(), st.data())
def test_swapaxes(a, data):
    i, j = data.draw(axis_values(a.ndim)), data.draw(axis_values(a.ndim))
    expected = outcome(lambda: (lambda v: (v.shape, v.strides))(np.swapaxes(a, i, j)))
    got = outcome(lambda: L.swapaxes(a.shape, a.strides, i, j))
    check(expected, got)


@SETTINGS
@given(views(dims=st.sampled_from([0, 1, 1, 1, 2, 3])), st.data())
def test_squeeze(a, data):
    ax = axis_values(a.ndim)
    axis = data.draw(st.none() | ax | st.lists(ax, max_size=4).map(tuple))
    expected = outcome(lambda: (lambda v: (v.shape, v.strides))(np.squeeze(a, axis)))
    got = outcome(lambda: L.squeeze(a.shape, a.strides, axis))
    check(expected, got)


@SETTINGS
@given(views(max_ndim=4), st.data())
def test_expand_dims(a, data):
    ax = axis_values(a.ndim + 2)
    axis = data.draw(ax | st.lists(ax, max_size=3).map(tuple))
    expected = outcome(lambda: np.expand_dims(a, axis))
    got = outcome(lambda: L.expand_dims(a.shape, a.strides, axis))
    if expected[0] == "error":
        same_error(expected, got)
        return
    v, (shape, strides) = expected[1], got[1]
    assert shape == v.shape
    if a.size:  # NumPy goes through reshape, which gives new size-1 axes (and, for an empty
        # array, all axes) other strides: those are never used to address an element.
        assert [s for s, n in zip(strides, shape) if n != 1] == \
            [s for s, n in zip(v.strides, shape) if n != 1]
    assert L.is_c_contiguous(shape, strides, a.itemsize) == v.flags.c_contiguous


A = np.zeros((2, 1, 3))  # shape, strides: (2, 1, 3), (24, 24, 8)
ARGS = (A.shape, A.strides)


@pytest.mark.parametrize("numpy_call, layout_call", [
    (lambda: A.transpose(0, 0, 1), lambda: L.transpose(*ARGS, (0, 0, 1))),
    (lambda: A.transpose(0, 1), lambda: L.transpose(*ARGS, (0, 1))),
    (lambda: A.transpose(0, 1, 3), lambda: L.transpose(*ARGS, (0, 1, 3))),
    (lambda: A.swapaxes(0, -4), lambda: L.swapaxes(*ARGS, 0, -4)),
    (lambda: A.swapaxes(3, 0), lambda: L.swapaxes(*ARGS, 3, 0)),
    (lambda: A.squeeze(0), lambda: L.squeeze(*ARGS, 0)),
    (lambda: A.squeeze((1, 1, 5)), lambda: L.squeeze(*ARGS, (1, 1, 5))),
    (lambda: A.squeeze((1, 5, 1)), lambda: L.squeeze(*ARGS, (1, 5, 1))),
    (lambda: A.sum(axis=(1, 1, 5)), lambda: L.normalize_axes((1, 1, 5), 3)),
    (lambda: A.sum(axis=(1, -2)), lambda: L.normalize_axes((1, -2), 3)),
    (lambda: np.expand_dims(A, (0, 0)), lambda: L.expand_dims(*ARGS, (0, 0))),
    (lambda: np.expand_dims(A, 5), lambda: L.expand_dims(*ARGS, 5)),
    (lambda: np.broadcast_to(A, (3,)), lambda: L.broadcast_to(*ARGS, (3,))),
    (lambda: np.broadcast_to(A, ()), lambda: L.broadcast_to(*ARGS, ())),
    (lambda: np.broadcast_to(A, (2, -1, 3)), lambda: L.broadcast_to(*ARGS, (2, -1, 3))),
    (lambda: np.broadcast_to(A, (2, 2, 4)), lambda: L.broadcast_to(*ARGS, (2, 2, 4))),
    (lambda: A.reshape(4, -1), lambda: L.reshape(*ARGS, 8, (4, -1))),
    (lambda: A.reshape(6, order="K"), lambda: L.reshape(*ARGS, 8, 6, order="K")),
])
def test_error_messages(numpy_call, layout_call):
    expected = outcome(numpy_call)
    assert expected[0] == "error"
    same_error(expected, outcome(layout_call))


# -- collapse, layout classes, extents ---------------------------------------------------------

@st.composite
def operands(draw):
    """A common shape and 1-3 operands' byte strides over it: contiguous, broadcast (from real
    NumPy views) or arbitrary, each operand with its own itemsize."""
    shape = tuple(draw(st.lists(st.sampled_from([0, 1, 1, 2, 2, 3, 4]), max_size=5)))
    strides_list, itemsizes = [], []
    for _ in range(draw(st.integers(1, 3))):
        item = np.dtype(draw(st.sampled_from(DTYPES))).itemsize
        kind = draw(st.sampled_from(["c", "broadcast", "view", "random"]))
        if kind == "c":
            strides = L.c_strides(shape, item)
        elif kind == "broadcast":
            src = tuple(draw(st.sampled_from([1, n])) for n in shape[draw(st.integers(0, 2)):])
            strides = np.broadcast_to(np.zeros(src, f"V{item}"), shape).strides
        elif kind == "view":  # a transposed, possibly reversed, contiguous array
            strides = [s * draw(st.sampled_from([1, -1]))
                       for s in draw(st.permutations(L.c_strides(shape, item)))]
        else:
            strides = tuple(draw(st.lists(st.integers(-4, 4).map(lambda k: k * item),
                                          min_size=len(shape), max_size=len(shape))))
        strides_list.append(tuple(strides))
        itemsizes.append(item)
    return shape, strides_list, itemsizes


@settings(max_examples=300, deadline=None)
@given(operands())
def test_collapse_visits_same_offsets(case):
    shape, strides_list, _ = case
    new_shape, new_strides = L.collapse(shape, strides_list)
    assert len(new_shape) >= 1 and math.prod(new_shape) == math.prod(shape)
    for old, new in zip(strides_list, new_strides, strict=True):
        assert offsets(new_shape, new) == offsets(shape, old)
    if len(new_shape) > 1:  # maximal: no size-1 axis left, no adjacent pair mergeable
        assert 1 not in new_shape and 0 not in new_shape
        for i in range(len(new_shape) - 1):
            assert not all(s[i] == s[i + 1] * new_shape[i + 1] for s in new_strides)


def test_collapse_examples():
    shape = (4, 5, 6)
    assert L.collapse(shape, [L.c_strides(shape, 4), L.c_strides(shape, 8)]) == \
        ((120,), [(4,), (8,)])
    assert L.collapse(shape, [L.c_strides(shape, 8), (0, 0, 8)]) == ((20, 6), [(48, 8), (0, 8)])
    assert L.collapse((), [()]) == ((1,), [(0,)])
    assert L.collapse((3, 0), [(8, 8)]) == ((0,), [(0,)])


@SETTINGS
@given(st.lists(st.integers(0, 3), max_size=3), st.data())
def test_layout_class(common, data):
    shapes = [tuple(data.draw(st.sampled_from([1, n])) for n in common[data.draw(
        st.integers(0, len(common))):]) for _ in range(data.draw(st.integers(1, 3)))]
    dtypes = [data.draw(st.sampled_from(DTYPES)) for _ in shapes]
    arrays = [np.arange(math.prod(s)).astype(d).reshape(s)[
                  tuple(slice(None, None, data.draw(st.sampled_from([1, 1, -1]))) for _ in s)]
              for s, d in zip(shapes, dtypes)]
    shape = np.broadcast_shapes(*shapes)
    ops = [np.broadcast_to(a, shape) for a in arrays]
    expected = "contiguous" if all(o.flags.c_contiguous for o in ops) else "strided"
    lay, nd = L.layout_class(shape, [(o.shape, o.strides, o.itemsize) for o in ops])
    assert lay == expected
    assert nd == (1 if lay == "contiguous" else len(L.collapse(shape, [o.strides for o in ops])[0]))
    if not shape:
        assert expected == "contiguous"


@SETTINGS
@given(views(zero_strides=True))
def test_byte_extent(a):
    low, high = L.byte_extent(a.shape, a.strides, a.itemsize)
    offs = offsets(a.shape, a.strides)
    if not offs:
        assert (low, high) == (0, 0)
    else:
        assert (low, high) == (min(offs), max(offs) + a.itemsize)
        lo, hi = byte_bounds(a)
        assert (low, high) == (lo - ptr(a), hi - ptr(a))


@SETTINGS
@given(st.sampled_from(DTYPES), st.data())
def test_may_share_memory(dtype, data):
    base = np.arange(60).astype(dtype).reshape(3, 4, 5)
    parts = st.builds(slice, st.none() | st.integers(-5, 5), st.none() | st.integers(-5, 5),
                      st.sampled_from([None, 1, 2, -1, -3]))
    x, y = (base[data.draw(st.tuples(parts, parts, parts))] for _ in range(2))
    got = L.may_share_memory(L.byte_extent(x.shape, x.strides, x.itemsize), ptr(x),
                             L.byte_extent(y.shape, y.strides, y.itemsize), ptr(y))
    assert got == np.may_share_memory(x, y)
