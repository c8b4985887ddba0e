"""NumPy's index tricks and small compatibility names: ``mgrid``, ``ogrid``, ``r_``, ``c_``,
``s_``, ``index_exp``, ``ndindex``, ``ndenumerate``, ``broadcast``, the error state
(``errstate``, ``seterr``...), ``euler_gamma``, ``row_stack``, ``shares_memory``.

CPU: the registry; every trick's parsing of its key against NumPy's (the grids and joins
assembled with NumPy standing in for the device, so only the upload and the copy kernels are
left to the GPU tests); ``r_``/``c_`` with GPU arrays in the key over fake arrays;
``broadcast``'s shape arithmetic; ``shares_memory`` on fake device views against NumPy on
host arrays of the same byte layout and against a brute-force count of bytes. GPU: values
against NumPy."""

import contextlib
import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import gpunb as gp
from gpunb import _registry as R
from gpunb._indexing import tricks
from gpunb.core.ndarray import MemoryPointer, ndarray
from tests.data import fake, same

gpu = pytest.mark.gpu
rng = np.random.default_rng(2718)
SLOW = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def outcome(f):
    """``('ok', value)`` or ``('error', (type, message))``: how a call ended."""
    try:
        return "ok", f()
    except Exception as e:      # noqa: BLE001 (any error: compared with NumPy's)
        return "error", (type(e), str(e))


def same_outcome(got, want, *, message=True):
    """Both calls raised (the same error type, and message unless told not to), or both
    returned arrays (or tuples of arrays) equal in dtype, shape and values."""
    assert got[0] == want[0], (got, want)
    if got[0] == "error":
        assert got[1][0] is want[1][0], (got, want)
        if message:
            assert got[1][1] == want[1][1], (got, want)
        return
    g, w = got[1], want[1]
    if isinstance(w, tuple):
        assert isinstance(g, tuple) and len(g) == len(w)
        for a, b in zip(g, w):
            same(a, np.asarray(b))
    else:
        same(g, np.asarray(w))


# -- the registry ----------------------------------------------------------------------------------

NAMES = {"mgrid": "value", "ogrid": "value", "r_": "value", "c_": "value", "s_": "value",
         "index_exp": "value", "euler_gamma": "value", "ndindex": "class",
         "ndenumerate": "class", "broadcast": "class", "errstate": "class",
         "row_stack": "function", "shares_memory": "function", "seterr": "function",
         "geterr": "function", "seterrcall": "function", "geterrcall": "function"}


@pytest.mark.parametrize("name", sorted(NAMES))
def test_the_names_are_public_through_the_registry(name):
    assert R.ENTRIES[name].kind == NAMES[name] and name in gp.__all__ and name in dir(gp)
    assert getattr(gp, name) is R.implementation(name)


def test_numpys_own_objects_are_numpys():
    """The names that need no GPU are NumPy's objects themselves, as CuPy's are."""
    for name in ("s_", "index_exp", "ndindex", "errstate", "seterr", "geterr", "seterrcall",
                 "geterrcall", "euler_gamma"):
        assert getattr(gp, name) is getattr(np, name), name
    assert gp.euler_gamma == np.euler_gamma and len(gp.r_) == len(np.r_) == 0


def test_numpy_functions_dispatch_to_the_new_entries():
    assert R.numpy_function(np.shares_memory) is R.ENTRIES["shares_memory"]
    assert R.numpy_function(np.row_stack) is R.ENTRIES["row_stack"]
    a = fake((4, 6))
    h = np.empty((4, 6), np.float32)
    for i, j in (((slice(None, None, 2),), (slice(1, None, 2),)), ((0,), (slice(0, 1),))):
        assert np.shares_memory(a[i], a[j]) is gp.shares_memory(a[i], a[j])
        assert gp.shares_memory(a[i], a[j]) == np.shares_memory(h[i], h[j])


# -- s_, index_exp, ndindex ------------------------------------------------------------------------

@pytest.mark.parametrize("index", [np.s_[1:3], np.s_[::-2, 1], np.s_[..., None, 2],
                                   np.index_exp[1], np.index_exp[:, 1::2]])
def test_s_and_index_exp_index_gpu_arrays_as_numpy_arrays(index):
    h, g = np.empty((4, 5, 6), np.float32), fake((4, 5, 6))
    view = g[index]
    want = h[index]
    assert view.shape == want.shape and view.strides == want.strides
    address = (lambda x: x.__array_interface__["data"][0])
    assert view.data.ptr - g.data.ptr == address(want) - address(h)


@given(st.lists(st.integers(0, 3), max_size=4))
@settings(max_examples=30, **SLOW)
def test_ndindex_is_numpys(shape):
    assert list(gp.ndindex(*shape)) == list(np.ndindex(*shape)) == list(gp.ndindex(tuple(shape)))
    want = outcome(lambda: np.ndindex(2, -1))
    assert outcome(lambda: gp.ndindex(2, -1))[1] == want[1]


# -- the error state -------------------------------------------------------------------------------

def test_errstate_is_numpys_and_governs_host_steps():
    old = gp.geterr()
    with gp.errstate(divide="raise", invalid="ignore"):
        assert gp.geterr() == np.geterr() and gp.geterr()["divide"] == "raise"
        with pytest.raises(FloatingPointError):
            np.float64(1.0) / np.float64(0.0)
    assert gp.geterr() == old
    prev = gp.seterr(over="raise")
    try:
        assert prev == old and np.geterr()["over"] == "raise"
    finally:
        gp.seterr(**prev)
    calls = []
    previous = gp.seterrcall(lambda kind, flag: calls.append(kind))
    try:
        assert gp.geterrcall() is np.geterrcall()
        with gp.errstate(divide="call"):
            np.float64(1.0) / np.float64(0.0)
        assert calls == ["divide by zero"]
    finally:
        gp.seterrcall(previous)


# -- mgrid, ogrid ----------------------------------------------------------------------------------

_bound = st.one_of(st.integers(-6, 6), st.sampled_from([-2.5, 0.5, 1.25, 3.0]),
                   st.sampled_from([np.float32(1.5), np.int8(2), np.int64(-1), np.float64(4.5)]))
_step = st.one_of(st.none(), st.sampled_from([1, 2, 3, -1, -2]),
                  st.sampled_from([0.5, 0.75, -0.5, 1.5, np.float32(0.5)]),
                  st.integers(0, 6).map(lambda n: complex(0, n)),
                  st.sampled_from([np.complex64(4j), 1j, 3 + 4j]))
grid_slice = st.builds(slice, st.one_of(st.none(), _bound), _bound, _step)
grid_key = st.one_of(grid_slice, st.lists(grid_slice, max_size=3).map(tuple),
                     # what NumPy's parser refuses: a missing stop, a zero step, an integer
                     st.builds(slice, _bound, st.none(), _step),
                     st.tuples(grid_slice, st.builds(slice, _bound, st.none(), _step)),
                     st.tuples(grid_slice, st.just(slice(0, 3, 0))),
                     st.tuples(grid_slice, st.integers(0, 3)), st.integers(0, 3))


class _HostArray:
    """``ndarray(shape, dtype)`` for the host stand-in of the device: filled with a value no
    grid of the tests holds, so a slab left unwritten shows."""

    def __new__(cls, shape, dtype):
        return np.full(shape, 99, dtype)


@contextlib.contextmanager
def on_host():
    """The tricks' device steps (upload, new arrays, concatenate) done by NumPy on the host:
    what is left is gpunb's parsing and assembly, checked against NumPy without a GPU."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tricks, "upload", lambda h: np.array(h, copy=True))
        mp.setattr(tricks, "ndarray", _HostArray)
        mp.setattr(tricks, "concatenate", np.concatenate)
        yield


@given(grid_key)
@settings(max_examples=300, **SLOW)
def test_grids_parse_and_assemble_as_numpys(key):
    for ours, theirs in ((tricks.mgrid, np.mgrid), (tricks.ogrid, np.ogrid)):
        with on_host():
            got = outcome(lambda: ours[key])
        want = outcome(lambda: theirs[key])
        assert got[0] == want[0], (key, got, want)
        if got[0] == "error":
            assert got[1] == want[1], key
        elif isinstance(want[1], tuple):
            assert len(got[1]) == len(want[1])
            for g, w in zip(got[1], want[1]):
                assert g.dtype == w.dtype and g.shape == w.shape
                np.testing.assert_array_equal(g, w)
        else:
            assert got[1].dtype == want[1].dtype and got[1].shape == want[1].shape, key
            np.testing.assert_array_equal(got[1], want[1])


def test_grid_dtypes_follow_numpys_rules():
    for key in (np.s_[0:5, 0:3], np.s_[0:5:2, 0:1:0.25], np.s_[0:1:5j, 0:3], np.s_[0:5],
                np.s_[0:1:5j], np.s_[np.int8(0):4, 0:2], np.s_[np.float32(0):1:3j, 0:2]):
        for ours, theirs in ((tricks.mgrid, np.mgrid), (tricks.ogrid, np.ogrid)):
            with on_host():
                got = ours[key]
            want = theirs[key]
            for g, w in zip(got if isinstance(got, tuple) else (got,),
                            want if isinstance(want, tuple) else (want,)):
                assert g.dtype == w.dtype and g.shape == w.shape, key


# -- r_, c_ ----------------------------------------------------------------------------------------

DTYPES = ["bool", "int8", "uint8", "int32", "int64", "float32", "float64", "complex64"]
_shape = st.one_of(st.just(()), st.tuples(st.integers(0, 3)),
                   st.tuples(st.integers(1, 2), st.integers(0, 3)))
_scalar = st.sampled_from([0, 1, -2, 2.5, True, 1 + 2j, np.float32(1.5), np.int8(3), np.uint8(7)])
_r_slice = st.builds(slice, st.one_of(st.none(), st.integers(-3, 3)), st.integers(-3, 6),
                     st.one_of(st.none(), st.sampled_from([1, 2, -1]),
                               st.integers(1, 4).map(lambda n: complex(0, n))))
_list = st.one_of(st.lists(st.integers(-5, 5), max_size=3),
                  st.lists(st.lists(st.floats(-4, 4, width=32), min_size=2, max_size=2),
                           min_size=1, max_size=2))
DIRECTIVES = [None, "0", "-1", "1", "0,2", "1,2", "-1,2,0", "0,2,0", "1,2,0", "0,3,-1", "0,2,1",
              "0,3,-2", "1,3,1", "-1,3,-3", "r", "c", "x", "1,x"]


@st.composite
def r_key(draw, gpu_items=True):
    """A key for r_/c_ as a list of entries: ('raw', obj) for what both get as it is (slices,
    scalars, lists), ('np', array) for a NumPy array, ('gpu', array) for a GPU array."""
    entries = []
    directive = draw(st.sampled_from(DIRECTIVES))
    if directive is not None:
        entries.append(("raw", directive))
    kinds = ["slice", "scalar", "list", "np"] + (["gpu", "gpu"] if gpu_items else [])
    for _ in range(draw(st.integers(0 if directive else 1, 4))):
        kind = draw(st.sampled_from(kinds))
        if kind == "slice":
            entries.append(("raw", draw(_r_slice)))
        elif kind == "scalar":
            entries.append(("raw", draw(_scalar)))
        elif kind == "list":
            entries.append(("raw", draw(_list)))
        else:
            shape, dt = draw(_shape), draw(st.sampled_from(DTYPES))
            entries.append((kind, (rng.standard_normal(shape) * 4).astype(dt)))
    return entries


def _numpy_r(concat, entries):
    """NumPy's result as an ndarray (its matrix, for 'r'/'c', as the 2-D array it is)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        return np.asarray(concat[tuple(v for _, v in entries)])


@given(r_key(gpu_items=False))
@settings(max_examples=300, **SLOW)
def test_r_and_c_of_host_data_parse_and_assemble_as_numpys(entries):
    for ours, theirs in ((tricks.r_, np.r_), (tricks.c_, np.c_)):
        with on_host():
            got = outcome(lambda: ours[tuple(v for _, v in entries)])
        want = outcome(lambda: _numpy_r(theirs, entries))
        assert got[0] == want[0], (entries, got, want)
        if got[0] == "error":
            assert got[1] == want[1]
        else:
            assert got[1].dtype == want[1].dtype and got[1].shape == want[1].shape
            np.testing.assert_array_equal(got[1], want[1])


def _assemble_on_host(concat, key):
    """``concat[key]`` from its parsed pieces, a GPU piece standing as zeros of its shape:
    what the device would join."""
    objs, dt, axis, matrix, col = concat._parts(key)
    pieces = [np.zeros(o.shape, o.dtype).astype(dt) if isinstance(o, ndarray) else o for o in objs]
    res = np.concatenate(pieces, axis=axis)
    if matrix:
        oldndim = res.ndim
        res = res.reshape(tricks._as_matrix_shape(res.shape))
        if oldndim == 1 and col:
            res = res.T
    return res


@given(r_key())
@settings(max_examples=300, **SLOW)
def test_r_and_c_with_gpu_arrays_in_the_key_parse_as_numpys(entries):
    """GPU arrays in the key (fake ones: their pieces are views, joined by the device) give
    the shape and dtype NumPy gives for host arrays of theirs."""
    zeros = [(k, np.zeros(v.shape, v.dtype) if k == "gpu" else v) for k, v in entries]
    key = tuple(fake(v.shape, v.dtype) if k == "gpu" else v for k, v in entries)
    for ours, theirs in ((tricks.r_, np.r_), (tricks.c_, np.c_)):
        got = outcome(lambda: _assemble_on_host(ours, key))
        want = outcome(lambda: _numpy_r(theirs, zeros))
        assert got[0] == want[0], (entries, got, want)
        if got[0] == "error":
            assert got[1] == want[1]
        else:
            assert got[1].dtype == want[1].dtype and got[1].shape == want[1].shape
            np.testing.assert_array_equal(got[1], want[1])


def test_r_directive_errors_are_numpys():
    for key in (("0", "1", [1]), (1, "0"), ("x", [1]), ("1,y", [1]), ("0,2,x", [1]), (",", [1])):
        want = outcome(lambda: np.r_[key])
        assert want[0] == "error" and outcome(lambda: tricks.r_._parts(key)) == want, key
    with pytest.raises(NotImplementedError, match="gpunb has no matrix class"):
        gp.r_["1 2; 3 4"]
    with pytest.raises(ValueError, match=re.escape(outcome(lambda: np.r_[()])[1][1])):
        gp.r_[()]


# -- ndenumerate -----------------------------------------------------------------------------------

@pytest.mark.parametrize("host", [np.arange(6).reshape(2, 3), np.arange(12.0).reshape(3, 4)[::2, ::-1],
                                  np.array(3.5, np.float32), np.empty((2, 0)), [[1, 2], [3, 4]]])
def test_ndenumerate_of_host_data_is_numpys(host):
    got, want = list(gp.ndenumerate(host)), list(np.ndenumerate(host))
    assert got == want and [type(v) for _, v in got] == [type(v) for _, v in want]


# -- broadcast -------------------------------------------------------------------------------------

@given(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=4, max_side=4),
       st.lists(st.booleans(), min_size=3, max_size=3))
@settings(max_examples=80, **SLOW)
def test_broadcast_has_numpys_shape(shapes, scalar):
    inputs = [2.5 if s else fake(shape, "float32") for shape, s in zip(shapes.input_shapes, scalar)]
    hosts = [2.5 if s else np.empty(shape, np.float32) for shape, s in zip(shapes.input_shapes, scalar)]
    b, w = gp.broadcast(*inputs), np.broadcast(*hosts)
    assert (b.shape, b.ndim, b.nd, b.size, b.numiter, b.index) == (w.shape, w.ndim, w.nd, w.size,
                                                                   w.numiter, w.index)
    for v, x, h in zip(b.values, inputs, hosts):
        if isinstance(x, float):
            assert v is x
        else:
            want = np.broadcast_to(h, w.shape)      # (strides of length-1 axes do not matter)
            assert v.shape == want.shape and v.data.ptr == x.data.ptr
            assert [s for s, n in zip(v.strides, v.shape) if n > 1] == \
                [s for s, n in zip(want.strides, want.shape) if n > 1]
    nested, want = gp.broadcast(b, fake((1,), "int8")), np.broadcast(w, np.empty(1, np.int8))
    assert (nested.shape, nested.numiter) == (want.shape, want.numiter)


@given(st.lists(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3),
                min_size=2, max_size=3))
@settings(max_examples=80, **SLOW)
def test_broadcast_errors_are_numpys(shapes):
    want = outcome(lambda: np.broadcast(*[np.empty(s) for s in shapes]).shape)
    got = outcome(lambda: gp.broadcast(*[fake(s, "float64") for s in shapes]).shape)
    assert got == want


def test_broadcast_limits_and_inputs():
    for n in (0, 64, 65):
        want = outcome(lambda: np.broadcast(*[np.empty(1)] * n).numiter)
        assert outcome(lambda: gp.broadcast(*[fake((1,))] * n).numiter) == want
    with pytest.raises(TypeError, match="NumPy array in host memory"):
        gp.broadcast(fake((3,)), np.ones(3))
    with pytest.raises(TypeError, match="broadcast needs GPU arrays or scalars, not list"):
        gp.broadcast([1, 2], fake((2,)))


def test_broadcast_iterates_as_numpys_over_scalars():
    b, w = gp.broadcast(1, 2.5, np.float32(3)), np.broadcast(1, 2.5, np.float32(3))
    assert b.index == 0 and list(b) == list(w) and b.index == w.index == 1
    b.reset()
    assert b.index == 0 and [list(i) for i in b.iters] == [[1], [2.5], [np.float32(3)]]


# -- row_stack -------------------------------------------------------------------------------------

def test_row_stack_warns_as_numpys_then_is_vstack():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        np.row_stack([np.ones(2)])
    want = caught[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(TypeError, match="vstack needs a GPU array"):    # vstack's check
            gp.row_stack([[1.0, 2.0]])
    assert [(w.category, str(w.message)) for w in caught] == [(want.category, str(want.message))]
    assert caught[0].filename == __file__       # the caller's line, as NumPy's stacklevel


# -- shares_memory ---------------------------------------------------------------------------------

@st.composite
def basic_index(draw, shape):
    """A basic index for ``shape``: per axis an integer, a slice (any step) or nothing, then
    perhaps a transpose (applied by the caller)."""
    items = []
    for n in shape:
        kind = draw(st.sampled_from(["slice", "slice", "int", "all"]))
        if kind == "int" and n:
            items.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            items.append(slice(draw(st.none() | st.integers(-n - 1, n + 1)),
                               draw(st.none() | st.integers(-n - 1, n + 1)),
                               draw(st.sampled_from([None, 1, 2, 3, -1, -2]))))
        else:
            items.append(slice(None))
    return tuple(items), draw(st.booleans())


def _view(x, index):
    items, transpose = index
    v = x[items + (Ellipsis,)]     # (NumPy gives a scalar, no view, for all-integer indices)
    return v.T if transpose else v


@given(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=6),
       st.sampled_from(["int8", "float32", "complex128"]), st.data())
@settings(max_examples=300, **SLOW)
def test_shares_memory_of_views_is_numpys(shape, dtype, data):
    g, h = fake(shape, dtype), np.empty(shape, dtype)
    i, j = data.draw(basic_index(shape)), data.draw(basic_index(shape))
    a, b = _view(g, i), _view(g, j)
    ha, hb = _view(h, i), _view(h, j)
    assert gp.shares_memory(a, b) is np.shares_memory(ha, hb)
    # max_work=0: bounds only, and NumPy's TooHardError when they overlap
    assert outcome(lambda: gp.shares_memory(a, b, max_work=0)) == \
        outcome(lambda: np.shares_memory(ha, hb, max_work=0))
    assert gp.may_share_memory(a, b) is np.may_share_memory(ha, hb)


def _bytes(shape, strides, itemsize, start):
    """Every byte address a view touches: the independent, brute-force answer."""
    out = set()
    for idx in np.ndindex(*shape):
        first = start + sum(i * s for i, s in zip(idx, strides))
        out.update(range(first, first + itemsize))
    return out


@st.composite
def raw_layout(draw, itemsize):
    """A view of any layout: shape, byte strides (any sign, not multiples of the itemsize,
    overlapping elements allowed) and a start offset."""
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=3)))
    strides = tuple(draw(st.integers(-3 * itemsize - 5, 3 * itemsize + 5)) for _ in shape)
    return shape, strides, draw(st.integers(0, 64))


@given(st.sampled_from(["int8", "int16", "float32", "float64", "complex128"]), st.data())
@settings(max_examples=400, **SLOW)
def test_shares_memory_of_any_layout_is_exact(dtype, data):
    dt = np.dtype(dtype)
    (sa, ta, oa), (sb, tb, ob) = data.draw(raw_layout(dt.itemsize)), data.draw(raw_layout(dt.itemsize))
    base = 0x10000 + 256       # room for negative strides below the starts
    a = ndarray._view(MemoryPointer(base + oa), sa, ta, dt, None)
    b = ndarray._view(MemoryPointer(base + ob), sb, tb, dt, None)
    want = bool(_bytes(sa, ta, dt.itemsize, oa) & _bytes(sb, tb, dt.itemsize, ob))
    assert gp.shares_memory(a, b) is want
    # NumPy on host views of that layout: a view reaches at most 3 * 3 * 53 bytes below its
    # start (CI found complex128 views reaching past a 256-byte margin)
    buf = bytearray(4096)
    ha = np.ndarray(sa, dt, buffer=buf, offset=1024 + oa, strides=ta)
    hb = np.ndarray(sb, dt, buffer=buf, offset=1024 + ob, strides=tb)
    assert np.shares_memory(ha, hb) is want
    assert outcome(lambda: gp.shares_memory(a, b, max_work=0)) == \
        outcome(lambda: np.shares_memory(ha, hb, max_work=0))
    assert gp.may_share_memory(a, b) is np.may_share_memory(ha, hb)


def test_shares_memory_max_work_and_devices_as_numpy():
    x, g = np.zeros((4, 5, 6), np.int8), fake((4, 5, 6), "int8")
    i, j = np.s_[:, ::2, ::3], np.s_[:, ::3, ::2]
    assert gp.shares_memory(g[i], g[j]) is np.shares_memory(x[i], x[j])
    want = outcome(lambda: np.shares_memory(x[i], x[j], max_work=1))
    assert want[0] == "error" and outcome(lambda: gp.shares_memory(g[i], g[j], max_work=1)) == want
    for bad in (-5, "x", 2**70, 1.5):
        want = outcome(lambda: np.shares_memory(x, x, max_work=bad))
        assert want[0] == "error" and outcome(lambda: gp.shares_memory(g, g, max_work=bad)) == want
    other = ndarray._view(MemoryPointer(g.data.ptr, None, 1), g.shape, g.strides, g.dtype, None)
    assert gp.shares_memory(g, g) and not gp.shares_memory(g, other)     # another device
    assert not gp.shares_memory(g, x) and not gp.shares_memory(x, g)     # host and device
    assert gp.shares_memory(x, x[1:]) is True and gp.shares_memory(x[::2], x[1::2]) is False
    assert not gp.shares_memory(g[:0], g) and not gp.shares_memory(g, [1, 2])


def test_may_share_memory_with_max_work_is_exact_as_numpys():
    x, g = np.zeros((4, 5, 6), np.int8), fake((4, 5, 6), "int8")
    i, j = np.s_[:, ::2, ::3], np.s_[:, 1::2, ::3]
    assert gp.may_share_memory(g[i], g[j]) is np.may_share_memory(x[i], x[j]) is True
    assert gp.may_share_memory(g[i], g[j], max_work=-1) is np.may_share_memory(x[i], x[j], max_work=-1)
    assert np.may_share_memory(x[i], x[j], max_work=-1) is False


@st.composite
def stride_trick_case(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=6))
    window = tuple(draw(st.integers(-1, 7)) for _ in range(draw(st.integers(1, len(shape)))))
    axis = draw(st.one_of(st.none(), st.lists(st.integers(-4, 3), min_size=len(window),
                                              max_size=len(window)).map(tuple)))
    return shape, window, axis


@given(stride_trick_case(), st.sampled_from(["int8", "float32", "complex128"]),
       st.sampled_from([np.s_[...], np.s_[::-1], np.s_[1::2]]))
@settings(max_examples=300, **SLOW)
def test_stride_tricks_make_numpys_views(case, dtype, index):
    """``gpunb.lib.stride_tricks``: the views' shapes and strides, and every error, NumPy's
    (on a fake GPU array and a host array of the same layout)."""
    shape, window, axis = case
    host, g = np.zeros(shape, dtype)[index], fake(shape, dtype)[index]
    want = outcome(lambda: np.lib.stride_tricks.sliding_window_view(host, window, axis))
    got = outcome(lambda: gp.lib.stride_tricks.sliding_window_view(g, window, axis))
    if want[0] == "error":
        assert got == want
    else:
        assert got[0] == "ok" and (got[1].shape, got[1].strides) == (want[1].shape, want[1].strides)
        assert got[1].data.ptr == g.data.ptr
    strides = tuple(int(v) for v in rng.integers(-16, 16, len(shape)))
    want = np.lib.stride_tricks.as_strided(host, shape, strides)
    got = gp.lib.stride_tricks.as_strided(g, shape, strides)
    assert (got.shape, got.strides) == (want.shape, want.strides)
    assert outcome(lambda: gp.lib.stride_tricks.as_strided(g, shape + (2,), strides)) == \
        outcome(lambda: np.lib.stride_tricks.as_strided(host, shape + (2,), strides))
    with pytest.raises(TypeError, match="as_strided is a NumPy array in host memory"):
        gp.lib.stride_tricks.as_strided(host)


def test_shares_memory_of_huge_views_costs_no_memory():
    """Views spanning 40 GB of device addresses: the host twins lie over untouched pages."""
    n = 5 * 2**30
    a = ndarray._view(MemoryPointer(0x7f0000000000), (n,), (8,), np.dtype("float64"), None)
    assert gp.shares_memory(a[::2], a[1::2]) is False
    assert gp.shares_memory(a[::3], a[::7]) is True
    assert gp.shares_memory(a[:n // 2], a[n // 2 - 1:]) is True


# -- on the GPU ------------------------------------------------------------------------------------

@gpu
@given(grid_key)
@settings(max_examples=150, **SLOW)
def test_grids_on_the_gpu_are_numpys(key):
    same_outcome(outcome(lambda: gp.mgrid[key]), outcome(lambda: np.mgrid[key]))
    same_outcome(outcome(lambda: gp.ogrid[key]), outcome(lambda: np.ogrid[key]))


@gpu
def test_grid_examples_on_the_gpu():
    for key in (np.s_[0:5, 0:3], np.s_[-1:1:5j], np.s_[0:4, -1:1:3j, 0:1:0.25], np.s_[0:0, 0:3],
                np.s_[()], np.s_[3:0:-1, 0:2]):
        for ours, theirs in ((gp.mgrid, np.mgrid), (gp.ogrid, np.ogrid)):
            got, want = ours[key], theirs[key]
            if isinstance(want, tuple):
                assert isinstance(got, tuple) and len(got) == len(want)
                for g, w in zip(got, want):
                    same(g, w)
            else:
                assert isinstance(got, gp.ndarray)
                same(got, want)


@gpu
@given(r_key())
@settings(max_examples=150, **SLOW)
def test_r_and_c_on_the_gpu_are_numpys(entries):
    key = tuple(gp.asarray(v) if k == "gpu" else v for k, v in entries)
    for ours, theirs in ((gp.r_, np.r_), (gp.c_, np.c_)):
        # the errors of the join are gpunb's concatenate's (NumPy's text is checked on the CPU)
        same_outcome(outcome(lambda: ours[key]), outcome(lambda: _numpy_r(theirs, entries)),
                     message=False)


@gpu
def test_r_and_c_examples_on_the_gpu():
    a, b = np.array([1, 2, 3]), np.array([4, 5, 6])
    ga, gb = gp.asarray(a), gp.asarray(b)
    same(gp.r_[ga, 0, 0, gb], np.r_[a, 0, 0, b])
    same(gp.r_[-1:1:6j, [0] * 3, 5, 6], np.r_[-1:1:6j, [0] * 3, 5, 6])
    m = np.array([[0, 1, 2], [3, 4, 5]])
    same(gp.r_["-1", gp.asarray(m), m], np.r_["-1", m, m])
    same(gp.r_["0,2", ga, [4, 5, 6]], np.r_["0,2", a, b])
    same(gp.r_["0,2,0", ga, gb], np.r_["0,2,0", a, b])
    same(gp.r_["1,2,0", ga, gb], np.r_["1,2,0", a, b])
    same(gp.r_["r", ga, gb], np.asarray(np.r_["r", a, b]))
    same(gp.r_["c", ga, gb], np.asarray(np.r_["c", a, b]))
    same(gp.c_[ga, gb], np.c_[a, b])
    same(gp.c_[gp.asarray(a[None]), 0, 0, gp.asarray(b[None])], np.c_[a[None], 0, 0, b[None]])
    same(gp.r_[ga.astype(np.float32), 2.5], np.r_[a.astype(np.float32), 2.5])   # weak scalar


@gpu
@pytest.mark.parametrize("dtype", ["bool", "int8", "int64", "float32", "complex128"])
def test_ndenumerate_of_gpu_arrays_is_numpys(dtype):
    h = (rng.standard_normal((3, 4)) * 5).astype(dtype)
    for host, dev in ((h, gp.asarray(h)), (h[::2, ::-1], gp.asarray(h)[::2, ::-1]),
                      (h[0, 0].reshape(()), gp.asarray(h[0, 0].reshape(()))),
                      (h[:0], gp.asarray(h)[:0])):
        got, want = list(gp.ndenumerate(dev)), list(np.ndenumerate(host))
        assert got == want and [type(v) for _, v in got] == [type(v) for _, v in want]


@gpu
@given(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3))
@settings(max_examples=40, **SLOW)
def test_broadcast_iterates_gpu_arrays_as_numpys(shapes):
    hosts = [rng.integers(-9, 9, s).astype(dt)
             for s, dt in zip(shapes.input_shapes, ("int32", "float32", "float64"))]
    b, w = gp.broadcast(*map(gp.asarray, hosts)), np.broadcast(*hosts)
    first = [next(b) for _ in range(min(2, w.size))]
    assert first == [next(w) for _ in range(min(2, w.size))] and b.index == w.index
    assert list(b) == list(w)
    b.reset()
    w.reset()
    assert [list(i) for i in b.iters] == [list(i) for i in w.iters]
    for v, h in zip(b.values, hosts):
        same(v, np.broadcast_to(h, w.shape))


@gpu
def test_row_stack_on_the_gpu_is_vstack():
    a, b = rng.standard_normal(3), rng.standard_normal((2, 3))
    with pytest.warns(DeprecationWarning, match="row_stack"):
        got = gp.row_stack([gp.asarray(a), gp.asarray(b)])
    same(got, np.vstack([a, b]))


@gpu
def test_shares_memory_of_allocations():
    x, y = gp.zeros(100), gp.zeros(100)
    assert not gp.shares_memory(x, y) and gp.shares_memory(x, x)
    assert not gp.shares_memory(x[::2], x[1::2]) and gp.shares_memory(x[:50], x[49:])
    assert gp.shares_memory(x.reshape(10, 10).T, x[5:6]) and not gp.shares_memory(x[:50], x[50:])


@gpu
def test_sliding_windows_on_the_gpu_are_numpys():
    h = rng.standard_normal((7, 9))
    x = gp.asarray(h)
    same(gp.lib.stride_tricks.sliding_window_view(x, (3, 2)),
         np.lib.stride_tricks.sliding_window_view(h, (3, 2)))
    same(gp.lib.stride_tricks.sliding_window_view(x[:, ::-2], 2, axis=0).sum(axis=-1),
         np.lib.stride_tricks.sliding_window_view(h[:, ::-2], 2, axis=0).sum(axis=-1))
    same(gp.lib.stride_tricks.as_strided(x, (5, 3), (8, 8)),
         np.lib.stride_tricks.as_strided(h, (5, 3), (8, 8)))
