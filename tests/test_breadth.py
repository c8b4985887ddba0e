"""NumPy breadth, first part: dtype names and routines, joining and splitting, flips and
rolls, dimension helpers, comparisons (isclose, allclose, array_equal), complex parts, ptp.
Errors are checked on the CPU (arrays over a made-up address: every check runs before a
kernel); values against NumPy on the GPU."""

import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gpunb as gp
from gpunb.core.dtypes import SUPPORTED
from tests import data
from tests.data import fake, same

rng = np.random.default_rng(99)
gpu = pytest.mark.gpu


def rand(shape, dtype):
    return data.rand(shape, dtype, rng=rng, scale=3, bound=100)


# -- CPU: names, errors, views --------------------------------------------------------------

def test_dtype_names_are_numpys():
    for name in ("bool_", "bool", "int8", "uint16", "float16", "float32", "complex128", "intp",
                 "uintp", "int_", "double", "csingle", "floating", "integer", "number"):
        assert getattr(gp, name) is getattr(np, name)
    assert gp.zeros.__module__.startswith("gpunb")      # functions stay gpunb's


@pytest.mark.parametrize("call, exc, msg", [
    (lambda: gp.concatenate([]), ValueError, "need at least one array to concatenate"),
    (lambda: gp.concatenate([fake(()), fake(())]), ValueError, "zero-dimensional arrays cannot be"),
    (lambda: gp.concatenate([fake((3, 4)), fake((3,))]), ValueError,
     r"the array at index 0 has 2 dimension\(s\) and the array at index 1 has 1 dimension\(s\)"),
    (lambda: gp.concatenate([fake((3, 4)), fake((3, 5))]), ValueError,
     "along dimension 1, the array at index 0 has size 4 and the array at index 1 has size 5"),
    (lambda: gp.concatenate([fake((3,))], axis=1), np.exceptions.AxisError, "axis 1 is out of bounds"),
    (lambda: gp.concatenate([fake((3,))], dtype="int32"), TypeError,
     "Cannot cast array data from dtype\\('float32'\\) to dtype\\('int32'\\) according to the rule 'same_kind'"),
    (lambda: gp.concatenate([fake((3,))], out=fake((4,))), ValueError, "Output array is the wrong shape"),
    (lambda: gp.concatenate([fake((3,))], out=fake((3, 1))), ValueError, "Output array has wrong dimensionality"),
    (lambda: gp.concatenate([fake((3,))], out=fake((3,)), dtype="f8"), TypeError, "only takes `out` or `dtype`"),
    (lambda: gp.concatenate([np.ones(3)]), TypeError, "NumPy array in host memory"),
    (lambda: gp.stack([fake((3,)), fake((4,))]), ValueError, "all input arrays must have the same shape"),
    (lambda: gp.stack([]), ValueError, "need at least one array to stack"),
    (lambda: gp.split(fake((5,)), 2), ValueError, "array split does not result in an equal division"),
    (lambda: gp.array_split(fake((5,)), 0), ValueError, "number sections must be larger than 0"),
    (lambda: gp.hsplit(fake(()), 2), ValueError, "hsplit only works on arrays of 1 or more dimensions"),
    (lambda: gp.vsplit(fake((3,)), 3), ValueError, "vsplit only works on arrays of 2 or more dimensions"),
    (lambda: gp.dsplit(fake((3, 3)), 3), ValueError, "dsplit only works on arrays of 3 or more dimensions"),
    (lambda: gp.fliplr(fake((3,))), ValueError, "Input must be >= 2-d."),
    (lambda: gp.flipud(fake(())), ValueError, "Input must be >= 1-d."),
    (lambda: gp.broadcast_arrays(fake((3,)), fake((4,))), ValueError, "shape mismatch"),
    (lambda: gp.roll(fake((3, 4)), (1, 2), axis=(0, 1, 1)), ValueError, "shape mismatch"),
    (lambda: gp.roll(fake((3, 4)), [[1]], axis=0), ValueError, "'shift' and 'axis' should be"),
])
def test_errors_match_numpy(call, exc, msg):
    with pytest.raises(exc, match=msg):
        call()


_CONCAT_ERRORS = [(shapes, axis) for shapes in [((1,), (1, 0)), ((1, 0), (1,)), ((2, 3), (2, 3, 1)),
                                                ((2, 3), (2, 4)), ((), (1,))]
                  for axis in (0, 1, 2, 5, -1, -3)
                  if not (shapes == ((2, 3), (2, 4)) and axis in (1, -1))]


@pytest.mark.parametrize("shapes, axis", _CONCAT_ERRORS)
def test_concatenate_errors_come_in_numpys_order(shapes, axis):
    """The axis is checked against the first array before the others' dimensions (the
    r_ hypothesis test on the GPU found AxisError where gpunb said ValueError)."""
    with pytest.raises(Exception) as want:
        np.concatenate([np.zeros(s) for s in shapes], axis=axis)
    with pytest.raises(want.type, match=re.escape(str(want.value))):
        gp.concatenate([fake(s, "float64") for s in shapes], axis=axis)


def test_views_need_no_kernel():
    a = fake((3, 4))
    f = gp.flip(a)
    assert f.strides == (-16, -4) and f.data.ptr == a.data.ptr + 44
    assert gp.flip(a, 1).strides == (16, -4) and gp.flipud(a).strides == (-16, 4)
    assert [x.shape for x in gp.split(a, [1, 3], axis=1)] == [(3, 1), (3, 2), (3, 1)]
    assert [x.shape for x in gp.array_split(a, 3, axis=1)] == [(3, 2), (3, 1), (3, 1)]
    assert [x.data.ptr - a.data.ptr for x in gp.vsplit(a, 3)] == [0, 16, 32]
    assert gp.atleast_1d(fake(())).shape == (1,) and gp.atleast_2d(fake((4,))).shape == (1, 4)
    assert gp.atleast_3d(fake((4,))).shape == (1, 4, 1) and gp.atleast_3d(a).shape == (3, 4, 1)
    assert isinstance(gp.atleast_1d(a, a), tuple)
    b = gp.broadcast_arrays(a, fake((4,)))
    assert isinstance(b, tuple) and b[1].shape == (3, 4) and b[1].strides == (0, 4)
    assert gp.broadcast_shapes((3, 1), (1, 4), ()) == (3, 4)
    z = fake((2, 3), "complex64")
    assert z.real.dtype == np.float32 and z.real.strides == (24, 8) and z.real.data.ptr == z.data.ptr
    assert z.imag.data.ptr == z.data.ptr + 4 and gp.real(z).dtype == np.float32
    assert gp.iscomplexobj(z) and not gp.iscomplexobj(a) and gp.isrealobj(a) and gp.iscomplexobj(1j)
    with pytest.raises(TypeError, match="does not have imaginary part to set"):
        a.imag = 1.0


# -- the GPU: values against NumPy --------------------------------------------------------

DTYPES = [d.name for d in SUPPORTED]


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_joining_every_dtype(dtype):
    a, b, c = rand((3, 4), dtype), rand((3, 4), dtype), rand((2, 4), dtype)
    ga, gb, gc = gp.asarray(a), gp.asarray(b), gp.asarray(c)
    same(gp.concatenate([ga, gb, gc]), np.concatenate([a, b, c]))
    same(gp.concatenate([ga, gb], axis=1), np.concatenate([a, b], axis=1))
    same(gp.concatenate([ga, gc], axis=None), np.concatenate([a, c], axis=None))
    for axis in (0, 1, 2, -1):
        same(gp.stack([ga, gb], axis=axis), np.stack([a, b], axis=axis))
    same(gp.vstack([ga, gc]), np.vstack([a, c]))
    same(gp.hstack([ga, gb]), np.hstack([a, b]))
    same(gp.dstack([ga, gb]), np.dstack([a, b]))
    same(gp.column_stack([ga[:, 0], gb]), np.column_stack([a[:, 0], b]))
    same(gp.append(ga, gc), np.append(a, c))
    same(gp.append(ga, gc, axis=0), np.append(a, c, axis=0))
    same(np.concatenate([ga, gb]), np.concatenate([a, b]))          # NumPy's dispatch
    for got, want in zip(gp.split(ga, [1, 3], axis=1), np.split(a, [1, 3], axis=1)):
        same(got, want)


@gpu
def test_concatenate_casts_views_and_out():
    a = rand((5, 6), "int32")
    b = rand((5, 6), "float32")
    ga, gb = gp.asarray(a), gp.asarray(b)
    same(gp.concatenate([ga, gb]), np.concatenate([a, b]))                   # float64
    same(gp.concatenate([ga, gb], dtype="float32"), np.concatenate([a, b], dtype="float32"))
    same(gp.concatenate([ga[::-1, ::2], gb.T[:3].T], axis=1),
         np.concatenate([a[::-1, ::2], b.T[:3].T], axis=1))                 # strided views
    out = gp.empty((10, 6), "float64")
    assert gp.concatenate([ga, gb], out=out) is out
    same(out, np.concatenate([a, b]).astype("float64"))
    same(gp.concatenate([ga[:0], gb]), np.concatenate([a[:0], b]))          # an empty input


@gpu
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_joining_and_rolling_random_layouts(data):
    nd = data.draw(st.integers(1, 4))
    shape = tuple(data.draw(st.lists(st.integers(0, 5), min_size=nd, max_size=nd)))
    dtype = data.draw(st.sampled_from(["float32", "int16", "complex64", "bool", "float16"]))
    axis = data.draw(st.integers(-nd, nd - 1))
    x = rand(shape, dtype)
    g = gp.asarray(x)
    if data.draw(st.booleans()):                     # a negative-stride view
        x, g = x[::-1], g[::-1]
    if nd > 1 and data.draw(st.booleans()):          # a transposed view
        x, g = x.T, g.T
    same(gp.concatenate([g, g], axis=axis), np.concatenate([x, x], axis=axis))
    same(gp.stack([g, g, g], axis=axis), np.stack([x, x, x], axis=axis))
    same(gp.flip(g, axis), np.flip(x, axis))
    same(gp.flip(g), np.flip(x))
    shift = data.draw(st.integers(-7, 7))
    same(gp.roll(g, shift, axis), np.roll(x, shift, axis))
    same(gp.roll(g, shift), np.roll(x, shift))
    if nd > 1:
        shifts = (shift, data.draw(st.integers(-3, 3)))
        same(gp.roll(g, shifts, axis=(0, -1)), np.roll(x, shifts, axis=(0, -1)))
    sections = data.draw(st.integers(1, 4))
    for got, want in zip(gp.array_split(g, sections, axis), np.array_split(x, sections, axis)):
        same(got, want)


@gpu
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64", "int32", "uint8", "bool"])
def test_isclose_allclose_array_equal(dtype):
    a = rand((50, 40), dtype)
    b = a.copy()
    if np.dtype(dtype).kind in "fc":
        b = (a * (1 + 1e-6)).astype(dtype)
        a.flat[:4] = [np.nan, np.inf, -np.inf, 0]
        b.flat[:4] = [np.nan, np.inf, np.inf, 1e-9]
    ga, gb = gp.asarray(a), gp.asarray(b)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for kw in ({}, {"equal_nan": True}, {"rtol": 0, "atol": 0.5}):
            same(gp.isclose(ga, gb, **kw), np.isclose(a, b, **kw))
            assert bool(gp.allclose(ga, gb, **kw)) == np.allclose(a, b, **kw)
            assert gp.allclose(ga, gb, **kw).shape == ()
        same(gp.isclose(ga, 1), np.isclose(a, 1))                   # a scalar b
        same(gp.isclose(ga, gb[0]), np.isclose(a, b[0]))            # broadcasting
        for eq in (False, True):
            assert bool(gp.array_equal(ga, gp.asarray(a.copy()), equal_nan=eq)) == \
                np.array_equal(a, a.copy(), equal_nan=eq)
            assert bool(gp.array_equal(ga, gb, equal_nan=eq)) == np.array_equal(a, b, equal_nan=eq)
        assert not bool(gp.array_equal(ga, ga[:1]))
        assert bool(gp.array_equiv(ga[:1], gp.asarray(np.repeat(a[:1], 3, 0)))) == \
            np.array_equiv(a[:1], np.repeat(a[:1], 3, 0))
        assert not bool(gp.array_equiv(ga, ga[:, :3]))


@gpu
@pytest.mark.parametrize("dtype", ["complex64", "complex128", "float32", "int16"])
def test_complex_parts_angle_and_ptp(dtype):
    z = rand((6, 7), dtype)
    g = gp.asarray(z)
    same(g.real, z.real)
    same(g.imag, z.imag)
    same(gp.real(g), np.real(z))
    same(np.imag(g), np.imag(z))
    np.testing.assert_allclose(gp.asnumpy(gp.angle(g)), np.angle(z), rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(gp.asnumpy(gp.angle(g, deg=True)), np.angle(z, deg=True), rtol=2e-6, atol=1e-4)
    same(gp.iscomplex(g), np.iscomplex(z))
    same(gp.isreal(g), np.isreal(z))
    if np.dtype(dtype).kind == "c":
        g.real = 5
        g.imag[1:3] = gp.asarray(np.arange(7, dtype=z.real.dtype))
        z.real = 5
        z.imag[1:3] = np.arange(7)
        same(g, z)
    else:
        same(gp.ptp(g, axis=1), np.ptp(z, axis=1))
        same(g.ptp(axis=0, keepdims=True), np.ptp(z, axis=0, keepdims=True))


# -- concatenate's join: contiguous inputs copied in one launch -----------------------------

def test_join_kernels_compile_for_every_word():
    """Each word size's join module compiles (NVRTC, sm_90) and names its entry point."""
    from gpunb.core.build.cached import compile_cached
    from gpunb.core.kernels.rearrange import codegen as gcg

    for word in (1, 2, 4, 8, 16):
        k = gcg.JoinKernel(word)
        src = gcg.render(k)
        assert gcg.entry_points(k) == (k.name,) and f"void {k.name}(" in src
        assert f"unsigned long long src[{gcg.JOIN_PIECES}]" in src
        assert compile_cached(src, arch="sm_90").cubin


def test_join_plans_groups_of_pieces_with_their_ends(monkeypatch):
    """The plan: a launch per JOIN_PIECES ranges, each range's end (in words) in its table,
    one block row a range, the output offset of each group; the word is the largest that
    every address and length divides."""
    from gpunb.core.kernels import loader
    from gpunb.core.kernels.rearrange import codegen as gcg
    from gpunb.core.kernels.rearrange import run as grun
    from gpunb.core.runtime import fastcall

    class Lk:
        functions = {f"gpunb_join_w{w}": w for w in (1, 2, 4, 8, 16)}
        sm_count = 132

    class Prepared:
        def __init__(self, fn, grid, block, objects):
            self.fn, self.grid, self.block, self.objects = fn, grid, block, objects

        def launch(self, stream):
            launched.append((self.fn, self.grid, self.objects[0].value, list(self.objects[1])))

    launched = []
    monkeypatch.setattr(loader, "get", lambda family, key, make: Lk)
    monkeypatch.setattr(fastcall, "Prepared", Prepared)
    sizes = [16 * (i + 1) for i in range(40)]             # 40 ranges: two launches
    launches, _ = grun._join_plan(16, sizes)
    assert [(n, offset) for _, _, _, offset, n in launches] == [(32, 0), (8, 16 * 528)]
    p0, table = launches[0][0], launches[0][2]
    assert p0.grid == (1, 32) and p0.block == (gcg.THREADS,)
    assert list(table[32:]) == [sum(range(1, j + 2)) for j in range(32)]
    big = grun._join_plan(4, [1 << 18, 40])[0][0][0]
    assert big.grid == ((1 << 16) // gcg.THREADS, 2)
    huge = grun._join_plan(16, [1 << 34])[0][0][0]
    assert huge.grid == (132 * 8, 1)                      # grid-stride past 8 waves

    class Ctx:
        prepared = {}

        def remember(self, key, value):
            self.prepared[key] = value

    from gpunb.core.runtime import driver

    monkeypatch.setattr(driver, "active", Ctx())
    monkeypatch.setattr(driver, "stream_handle", lambda: 0)
    grun.join(1 << 20, [0x1000, 0x2008], [8, 24])        # an address 8 bytes off: words of 8
    grun.join(1 << 20, [0x1003, 0x2000], [8, 24])        # 1 byte off: bytes
    grun.join(1 << 20, [0x1000, 0x2000], [16, 32])
    assert [(fn, grid) for fn, grid, _, _ in launched] == [(8, (1, 2)), (1, (1, 2)), (16, (1, 2))]
    assert launched[0][3][:2] == [0x1000, 0x2008] and launched[0][3][32:34] == [1, 4]


@gpu
@pytest.mark.parametrize("dtype", ["int8", "float16", "float32", "float64", "complex128", "bool"])
def test_concatenate_joins_many_pieces_against_numpy(dtype):
    """Inputs of every length (0 to 70 of them, crossing a launch's 32), starting at odd
    element offsets (addresses of every alignment), the same layout again with other arrays
    (the replayed plan takes the new addresses), a strided input among contiguous ones, and
    inputs too large to join."""
    rng = np.random.default_rng(3)
    base = rand((4096,), dtype)
    g = gp.asarray(base)
    for count in (2, 3, 31, 32, 33, 70):
        starts = rng.integers(0, 3000, count)
        lens = rng.integers(0, 40, count)
        pieces = [(int(s), int(s + n)) for s, n in zip(starts, lens)]
        same(gp.concatenate([g[a:b] for a, b in pieces]), np.concatenate([base[a:b] for a, b in pieces]))
        shifted = [(a + 1, b + 1) for a, b in pieces]                  # same lengths, new addresses
        same(gp.concatenate([g[a:b] for a, b in shifted]), np.concatenate([base[a:b] for a, b in shifted]))
    two = rand((5, 3, 4), dtype)
    g2 = gp.asarray(two)
    same(gp.concatenate([g2[:2], g2[1:4], g2[4:]]), np.concatenate([two[:2], two[1:4], two[4:]]))
    t = rand((1, 4, 3), dtype)                                          # a strided one between:
    gt = gp.asarray(t)                                                  # copied, the rest joined apart
    same(gp.concatenate([g2[:2], gt.transpose(0, 2, 1), g2[3:]]),
         np.concatenate([two[:2], t.transpose(0, 2, 1), two[3:]]))
    same(gp.concatenate([g2[:2], g2[1:2, ::-1], g2[3:]]), np.concatenate([two[:2], two[1:2, ::-1], two[3:]]))
    big = rand((3 << 18,), dtype)                                       # 3 x 2^18: over the join's average
    gb = gp.asarray(big)
    same(gp.concatenate([gb[: 1 << 18], gb[1 << 18:], gb[:5]]), np.concatenate([big[: 1 << 18], big[1 << 18:], big[:5]]))


@gpu
def test_concatenate_of_vectors_against_numpy():
    """1-D inputs (the common small case, joined without the general checks) and the cases
    that leave it: a tuple, empty inputs among them, one or no non-empty input, a strided
    one, mixed dtypes (promoted), a 0-d input (NumPy's error), an axis of -1."""
    a, b = rand((7,), np.float32), rand((5,), np.float32)
    ga, gb = gp.asarray(a), gp.asarray(b)
    e = np.zeros(0, np.float32)
    ge = gp.asarray(e)
    for gs, hs in (((ga, gb), (a, b)), ([ga, ge, gb, ge], [a, e, b, e]), ([ge, ga, ge], [e, a, e]),
                   ([ge, ge], [e, e]), ([ga, gb[::2], ga], [a, b[::2], a]),
                   ([ga[1:], gb[:-1], ga[:3]], [a[1:], b[:-1], a[:3]])):
        same(gp.concatenate(gs), np.concatenate(hs))
        same(gp.concatenate(gs, axis=np.int64(0)), np.concatenate(hs, axis=np.int64(0)))
        same(gp.concatenate(gs, axis=-1), np.concatenate(hs, axis=-1))
    i = np.arange(4, dtype=np.int32)
    same(gp.concatenate([ga, gp.asarray(i)]), np.concatenate([a, i]))
    with pytest.raises(ValueError, match="zero-dimensional"):
        gp.concatenate([gp.asarray(np.float32(1)), gp.asarray(np.float32(2))])


@gpu
def test_join_on_a_stream_is_ordered_after_the_inputs():
    """Joins queued on a non-blocking stream after the kernels that wrote their inputs, 50
    times with new inputs each time, read what those kernels wrote."""
    s = gp.Stream(non_blocking=True)
    rng = np.random.default_rng(4)
    hs = [rng.standard_normal(3000).astype(np.float32) for _ in range(4)]
    with s:
        xs = [gp.asarray(h) for h in hs]
        outs = []
        for i in range(50):
            ys = [x * (i + 1) + k for k, x in enumerate(xs)]
            outs.append(gp.concatenate([y[k:k + 700] for k, y in enumerate(ys)]))
        s.synchronize()
    for i, o in enumerate(outs):
        want = np.concatenate([(h * (i + 1) + k)[k:k + 700] for k, h in enumerate(hs)])
        np.testing.assert_allclose(o.get(), want, rtol=1e-6)
