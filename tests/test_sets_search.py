"""Searching and sets: searchsorted, digitize, unique (and the array-API forms), isin,
intersect1d, union1d, setdiff1d, setxor1d, count_nonzero along axes.

CPU: NVRTC compiles the binary-search kernels (every dtype), and NumPy's errors on made-up
arrays. GPU: values against NumPy (hypothesis over dtypes, NaN/inf, ties, empty and 0-d,
non-contiguous views)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gpunb as gp
from gpunb.core.build.compiler import compile_program
from gpunb.core.dtypes import SUPPORTED
from gpunb.core.kernels.search import codegen as cg
from tests import data
from tests.data import fake, same

rng = np.random.default_rng(1414)
gpu = pytest.mark.gpu
REAL = [d for d in SUPPORTED if d.kind != "c"]


# -- CPU: the kernels compile ------------------------------------------------------------------

def _compiles(k):
    prog = compile_program(cg.render(k), (), "sm_90")
    for e in cg.entry_points(k):
        assert e.encode() in prog.cubin, e


@pytest.mark.parametrize("dt", SUPPORTED, ids=str)
def test_search_kernels_compile(dt):
    _compiles(cg.SearchKernel(dt, "left" if dt.itemsize % 2 else "right", dt.kind in "fc"))


def test_search_kernel_names_are_distinct():
    ks = [cg.SearchKernel(d, s, o) for d in SUPPORTED for s in ("left", "right") for o in (0, 1)]
    assert len({k.name for k in ks}) == len(ks)


# -- CPU: errors are NumPy's -------------------------------------------------------------------

def _raises_like(gcall, ncall):
    with pytest.raises(Exception) as want:
        ncall()
    with pytest.raises(type(want.value)) as got:
        gcall()
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("shape, kw", [
    ((2, 3), {}), ((), {}), ((5,), dict(side="middle")), ((5,), dict(side=3)), ((5,), dict(side="LEFT")),
    ((5,), dict(side="")), ((5,), dict(side=None)),
])
def test_searchsorted_errors(shape, kw):
    _raises_like(lambda: gp.searchsorted(fake(shape), 1.0, **kw),
                 lambda: np.searchsorted(np.ones(shape, np.float32), 1.0, **kw))


def test_searchsorted_sorter_errors():
    _raises_like(lambda: gp.searchsorted(fake((5,)), 1.0, sorter=fake((3,), "int64")),
                 lambda: np.searchsorted(np.ones(5), 1.0, sorter=np.arange(3)))
    _raises_like(lambda: gp.searchsorted(fake((5,)), 1.0, sorter=fake((5,), "float64")),
                 lambda: np.searchsorted(np.ones(5), 1.0, sorter=np.ones(5)))


def test_digitize_errors():
    _raises_like(lambda: gp.digitize(fake((3,), "complex64"), fake((3,))),
                 lambda: np.digitize(np.ones(3, np.complex64), np.ones(3)))
    _raises_like(lambda: gp.digitize(fake((3,)), fake((2, 2))),
                 lambda: np.digitize(np.ones(3), np.ones((2, 2))))


def test_isin_errors():
    _raises_like(lambda: gp.isin(fake((3,)), fake((3,)), kind="hash"),
                 lambda: np.isin(np.ones(3), np.ones(3), kind="hash"))
    _raises_like(lambda: gp.isin(fake((3,)), fake((3,)), kind="table"),
                 lambda: np.isin(np.ones(3), np.ones(3), kind="table"))


def test_unique_axis_error():
    _raises_like(lambda: gp.unique(fake((3, 4)), axis=2), lambda: np.unique(np.ones((3, 4)), axis=2))


def test_host_arrays_are_refused():
    for f in (lambda: gp.searchsorted(np.ones(3), 1), lambda: gp.unique(np.ones(3)),
              lambda: gp.isin(np.ones(3), fake((3,)))):
        with pytest.raises(TypeError, match="host memory"):
            f()


# -- GPU: values are NumPy's -------------------------------------------------------------------

def _sorted_data(n, dt, special):
    x = data.rand((n,), dt, rng=rng, special=special, bound=20)
    return np.sort(x)


@gpu
@settings(max_examples=40, deadline=None)
@given(dt=st.sampled_from(SUPPORTED), n=st.integers(0, 300), m=st.integers(0, 50),
       side=st.sampled_from(["left", "right"]), special=st.sampled_from([None, "mixed"]))
def test_searchsorted(dt, n, m, side, special):
    a = _sorted_data(n, dt, special)
    v = data.rand((m,), dt, rng=rng, special=special, bound=25)
    if n and m:
        v[: m // 2] = rng.choice(a, m // 2)      # ties
    same(gp.searchsorted(gp.asarray(a), gp.asarray(v), side=side), np.searchsorted(a, v, side=side))


@gpu
@pytest.mark.parametrize("dt", REAL, ids=str)
def test_searchsorted_sorter_views_and_scalars(dt):
    x = data.rand((200,), dt, rng=rng, special="mixed", bound=30)
    s = np.argsort(x, kind="stable")
    v = data.rand((7, 6), dt, rng=rng, bound=30)
    gx, gv = gp.asarray(x), gp.asarray(v)
    same(gp.searchsorted(gx, gv[:, ::2], sorter=gp.asarray(s)), np.searchsorted(x, v[:, ::2], sorter=s))
    xs = np.sort(x)[::-1]
    same(gp.searchsorted(gp.asarray(xs)[::-1], gv.T, side="right"), np.searchsorted(xs[::-1], v.T, side="right"))
    same(gp.asarray(np.sort(x)).searchsorted(1), np.asarray(np.searchsorted(np.sort(x), 1)))
    same(gp.searchsorted(gp.asarray(np.sort(x)), 0.5), np.asarray(np.searchsorted(np.sort(x), 0.5)))


@gpu
@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("bins", [[0.0, 1.0, 1.0, 3.0], [5, 2, 2, -1], [], [1.0]])
def test_digitize(bins, right):
    x = rng.integers(-2, 6, 50).astype(np.float64)
    x[3] = np.nan
    b = np.array(bins, np.float64)
    same(gp.digitize(gp.asarray(x), gp.asarray(b), right=right), np.digitize(x, b, right=right))


@gpu
@settings(max_examples=30, deadline=None)
@given(dt=st.sampled_from(SUPPORTED), n=st.integers(0, 400),
       flags=st.tuples(st.booleans(), st.booleans(), st.booleans()),
       equal_nan=st.booleans())
def test_unique(dt, n, flags, equal_nan):
    x = data.rand((n,), dt, rng=rng, special="mixed", bound=10)
    if n > 4 and dt.kind in "fc":
        x[rng.choice(n, 3, replace=False)] = np.nan
    g = gp.unique(gp.asarray(x), *flags, equal_nan=equal_nan)
    want = np.unique(x, *flags, equal_nan=equal_nan)
    if not any(flags):
        g, want = (g,), (want,)
    ties = not equal_nan and dt.kind in "fc" and np.isnan(x).sum() > 1
    for j, (a, b) in enumerate(zip(g, want)):
        if ties and flags[1] and j == 1 + flags[0]:
            # the inverse of distinct NaNs (equal_nan=False): NumPy sorts with quicksort when
            # no index is asked for, so which NaN slot each NaN gets is its sort's accident;
            # gpunb's sort is stable. Both rebuild the input.
            values = g[0].get()
            np.testing.assert_array_equal(values[a.get()], x)
            assert a.shape == b.shape and a.dtype == b.dtype
            continue
        same(a, b)


@gpu
@pytest.mark.parametrize("dt", ["int16", "float32", "complex64"])
def test_unique_shapes_and_views(dt):
    x = data.rand((6, 8), dt, rng=rng, bound=3)
    gx = gp.asarray(x)
    for a, b in zip(gp.unique(gx[:, ::2], return_inverse=True), np.unique(x[:, ::2], return_inverse=True)):
        same(a, b)
    same(gp.unique(gx[0, 0]), np.unique(x[0, 0]))
    for axis in (0, 1, -1):
        x2 = np.concatenate([x, x[:2]], axis=0).astype(dt)
        got = gp.unique(gp.asarray(x2), True, True, True, axis=axis)
        want = np.unique(x2, True, True, True, axis=axis)
        for a, b in zip(got, want):
            same(a, b)


@gpu
def test_unique_array_api():
    x = np.array([3, 1, np.nan, 1, np.nan, 2, 3], np.float64).reshape(7, 1)
    gx = gp.asarray(x)
    got, want = gp.unique_all(gx), np.unique_all(x)
    assert type(got).__name__ == "UniqueAllResult" and got._fields == want._fields
    order = np.argsort(want.values)
    same(got.values, want.values[order])
    same(got.counts, want.counts[order])
    same(gp.unique_values(gx), np.sort(np.unique_values(x)))
    c = gp.unique_counts(gx)
    same(c.counts, np.unique_counts(x).counts[np.argsort(np.unique_counts(x).values)])
    inv = gp.unique_inverse(gx)
    same(inv.values[inv.inverse_indices], x)


@gpu
@settings(max_examples=25, deadline=None)
@given(dt=st.sampled_from(REAL), n=st.integers(0, 200), m=st.integers(0, 200),
       invert=st.booleans(), assume=st.booleans())
def test_set_operations(dt, n, m, invert, assume):
    a = data.rand((n,), dt, rng=rng, bound=15, special="mixed")
    b = data.rand((m,), dt, rng=rng, bound=15, special="mixed")
    if assume:
        a, b = np.unique(a), np.unique(b)
    ga, gb = gp.asarray(a), gp.asarray(b)
    same(gp.isin(ga, gb, invert=invert), np.isin(a, b, invert=invert))
    same(gp.isin(gp.asarray(a.reshape(-1, 1)), gb), np.isin(a.reshape(-1, 1), b))
    same(gp.union1d(ga, gb), np.union1d(a, b))
    same(gp.setdiff1d(ga, gb, assume_unique=assume), np.setdiff1d(a, b, assume_unique=assume))
    same(gp.setxor1d(ga, gb, assume_unique=assume), np.setxor1d(a, b, assume_unique=assume))
    same(gp.intersect1d(ga, gb, assume_unique=assume), np.intersect1d(a, b, assume_unique=assume))
    for g, w in zip(gp.intersect1d(ga, gb, assume_unique=assume, return_indices=True),
                    np.intersect1d(a, b, assume_unique=assume, return_indices=True)):
        same(g, w)


@gpu
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2), -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_count_nonzero_axis(axis, keepdims):
    x = data.rand((3, 4, 5), "int8", rng=rng, bound=1)
    got = gp.count_nonzero(gp.asarray(x)[:, ::-1], axis=axis, keepdims=keepdims)
    want = np.count_nonzero(x[:, ::-1], axis=axis, keepdims=keepdims)
    same(got, np.asarray(want, np.intp))


@pytest.mark.gpu
@pytest.mark.parametrize("dt", ["uint8", "int64", "float32"])
def test_isin_with_a_python_scalar(dt):
    """isin(array, scalar) and isin(scalar, array), as NumPy and the 2025.12 standard take them."""
    x = np.array([0, 3, 7, 3, 250], dtype=dt)
    g = gp.asarray(x)
    for v in (3, 0, 300, 7.0, True):
        np.testing.assert_array_equal(gp.isin(g, v).get(), np.isin(x, v))
        np.testing.assert_array_equal(gp.isin(v, g).get(), np.isin(v, x))
    empty = gp.asarray(np.zeros(0, dt))
    assert gp.isin(empty, 0).shape == (0,)
