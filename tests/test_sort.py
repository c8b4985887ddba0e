"""Sorting: sort, argsort, lexsort, partition, argpartition, sort_complex, ndarray.sort and
ndarray.partition on the radix sort engine (gpunb.core.kernels.sort).

CPU: NVRTC compiles the sort kernels (a representative set: every key size and kind, keys
and pairs, descending), the onesweep plan, the cache key's CCCL version, and NumPy's errors
on made-up arrays. GPU: values against NumPy (argsort against kind='stable') over every dtype,
NaN/inf/-0.0, ties, axes of non-contiguous views, empty and 0-d arrays."""

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gpunb as gp
from gpunb.core.build import cccl
from gpunb.core.build.cached import cache_key
from gpunb.core.build.compiler import compile_program
from gpunb.core.dtypes import SUPPORTED
from gpunb.core.kernels.sort import codegen as cg
from gpunb.core.kernels.sort import plan as sp
from tests import data
from tests.data import fake

rng = np.random.default_rng(1414)
gpu = pytest.mark.gpu


# -- CPU: the kernels compile ------------------------------------------------------------------

# Every key size and kind (native ints, the float and complex key types), keys only and
# pairs with int64 and int32 values, descending, a row composite, offset keys: 10 sources of 3 to 5 s each on
# one core (all 14 dtypes x 3 take about three minutes).
_KERNELS = [cg.SortKernel("float32"), cg.SortKernel("float64", "int64"), cg.SortKernel("int16", "int32"),
            cg.SortKernel("complex128", "int64"), cg.SortKernel("float16", None, True),
            cg.SortKernel("complex64"), cg.SortKernel("int8", "int64"),
            cg.SortKernel("float32", rows=True), cg.SortKernel("int64", offset=True),
            cg.SortKernel("uint16", "int32", offset=True)]


@pytest.mark.parametrize("k", _KERNELS, ids=lambda k: k.name)
def test_kernels_compile(k):
    prog = compile_program(cg.render(k), cg.nvrtc_options(k), "sm_90")
    assert prog.cubin
    for e in cg.entry_points(k):
        assert e.encode() in prog.cubin, e


def test_every_dtype_has_a_key_type():
    for d in SUPPORTED:
        src = cg.render(cg.SortKernel(d, "int64"))
        assert f"using Key = {cg.key_type(d)};" in src
        assert cg.key_bits(d) == 8 * d.itemsize


def test_labels_name_the_dtype():
    assert cg.SortKernel("float32").label == "radix sort for float32"
    assert "int64" in cg.SortKernel("int64", "int64").label


def test_cache_key_has_the_cccl_version(monkeypatch):
    k = cg.SortKernel("float32")
    src, opts = cg.render(k), cg.nvrtc_options(k)
    assert f"-DGPUNB_CCCL={cccl.version()}" in opts
    before = cache_key(src, opts, "sm_90")
    real = cccl.options()
    monkeypatch.setattr(cccl, "version", lambda: 1)       # another CCCL release
    monkeypatch.setattr(cccl, "options", lambda: tuple(
        f"-DGPUNB_CCCL={cccl.version()}" if o.startswith("-DGPUNB_CCCL=") else o for o in real))
    after = cache_key(src, cg.nvrtc_options(k), "sm_90")
    assert before != after


def test_onesweep_plan():
    tile = cg.SortKernel("float32").tile
    p = sp.onesweep_plan(1 << 26, tile, 32)
    assert (p.passes, p.portions) == (4, 1)
    assert p.lookback_offset >= p.ctrs_offset + 4 * p.passes
    assert p.temp_bytes >= p.lookback_offset + (-(-(1 << 26) // tile)) * 256 * 4
    big = sp.onesweep_plan(3 << 30, tile, 64)
    assert big.passes == 8 and big.portions == -(-(3 << 30) // big.portion_size)
    assert big.portion_size % tile == 0 and big.portion_size < 1 << 28
    assert sp.onesweep_plan(10, tile, 8).passes == 1


def _bit_ordered(keys, dt):
    u = np.asarray(keys, dt).view(f"u{np.dtype(dt).itemsize}").astype(np.uint64)
    return u ^ np.uint64(1 << (8 * np.dtype(dt).itemsize - 1)) if np.dtype(dt).kind == "i" else u


def _extremes(keys, dt):
    """The histogram's two words: the complemented smallest and the largest bit-ordered key."""
    b = _bit_ordered(keys, dt)
    return np.array([~b.min(), b.max()], np.uint64)


@pytest.mark.parametrize("dt, keys, moving, top", [
    ("int64", [-1000, 7, 1000], range(1, 8), 2),              # straddles zero: 8 bytes differ
    ("int64", [(1 << 40) - 5000, (1 << 40) + 5000], range(1, 6), 2),     # straddles 2^40
    ("int32", [-300, 299], range(1, 4), 2),
    ("uint32", [(1 << 24) - 3000, (1 << 24) + 3000], range(1, 4), 2),
    ("int64", [-(1 << 40), 1 << 40], range(1, 8), 6),
    ("int64", [0, 999], [1], 0),                     # already two passes: nothing to save
    ("int16", [-100, 100], [1], 0),
    ("int64", [-1000, (1 << 63) - 1], range(1, 8), 0),      # the largest key: a full range
    ("int64", [-(1 << 62), 1 << 62], range(1, 8), 0),
])
def test_offset_keys_are_used_when_they_save_a_pass(dt, keys, moving, top):
    """Integer keys in a narrow range sort as their differences from an offset (a multiple
    of 2^8 at most the smallest key, so the first pass is unchanged) when that takes fewer
    passes than the keys' own moving ones."""
    from gpunb.core.kernels.sort.run import _offset_passes

    k = cg.SortKernel(dt)
    p = sp.onesweep_plan(1 << 20, k.tile, cg.key_bits(dt))
    got_top, off = _offset_passes(k, p, _extremes(keys, dt), list(moving), 0)
    assert got_top == top
    if top:
        b = _bit_ordered(keys, dt)
        assert off % 256 == 0 and off <= int(b.min())
        assert int(b.max()) - off < 1 << (8 * top)           # digits from `top` on are 0
        assert ((b - np.uint64(off)) % np.uint64(256) == b % np.uint64(256)).all()
    else:
        assert off == 0
    for other in (cg.SortKernel("float32"), cg.SortKernel(dt, None, True)):   # no offset kinds
        assert _offset_passes(other, p, _extremes(keys, dt), list(moving), 0) == (0, 0)
    two = sp.onesweep_plan(3 << 28, k.tile, cg.key_bits(dt))               # two portions
    assert _offset_passes(k, two, _extremes(keys, dt), list(moving), 0) == (0, 0)


def test_offset_sources_are_integer_ascending_keys():
    for bad in (dict(key="float32"), dict(key="int64", descending=True), dict(key="int8"),
                dict(key="int32", rows=True), dict(key="complex64")):
        with pytest.raises(ValueError, match="offset keys"):
            cg.SortKernel(offset=True, **bad)
    k = cg.SortKernel("int64", "int32", offset=True)
    assert k.name.endswith("_off") and "offset keys" in k.label and k.block_tile == 0
    assert cg.entry_points(k) == tuple(k.name + s for s in ("_zero", "_hist", "_scan", "_onesweep"))
    src = cg.render(k)
    assert "gpunb_sort::okey<long long>" in src and "#define OFFSET 1" in src
    assert "#define MINMAX 0" in src          # its histogram is of offset keys, no extremes
    assert "#define MINMAX 1" in cg.render(cg.SortKernel("uint16"))
    assert "#define MINMAX 0" in cg.render(cg.SortKernel("float64"))


def test_pass_skipping_reads_the_histogram_without_its_padding():
    """A pass moves nothing when one digit holds every key; CUB's histogram also counts the
    last tile's padding keys at the largest digit, which must not hide or fake that."""
    from gpunb.core.kernels.sort.run import _real

    def counts(pairs, size=256):
        c = np.zeros(size, np.int64)
        for d, k in pairs:
            c[d] += k
        return c

    def _moves(c, n, begin, end, pas):      # the other passes' rows hold n keys in digit 0
        rows = np.zeros((pas + 1, c.size), np.int64)
        rows[:, 0] = n
        rows[pas] = c
        return int(_real(rows, n, begin, end)[pas].max()) != n
    assert not _moves(counts([(5, 10), (255, 3)]), 10, 0, 64, 1)       # all 10 in digit 5
    assert _moves(counts([(255, 10), (4, 3)]), 10, 0, 64, 1)           # 7 real in 255, 3 in 4
    assert not _moves(counts([(255, 13)]), 10, 0, 64, 1)               # all in 255, padded
    assert not _moves(counts([(0, 10)]), 10, 0, 64, 3)                 # no padding
    assert _moves(counts([(0, 6), (1, 4)]), 10, 0, 64, 3)
    # a last pass of 4 bits (12 sorted bits): the padding's digit is 15
    assert not _moves(counts([(2, 10), (15, 5)]), 10, 0, 12, 1)
    assert _moves(counts([(15, 10), (2, 5)]), 10, 0, 12, 1)


def test_tuning_fits_shared_memory():
    for ks in (1, 2, 4, 8, 16):
        for vs in (0, 1, 2, 4, 8):
            threads, items = cg.onesweep_tuning(ks, vs)
            assert threads % 32 == 0 and items >= 1
            assert threads * items * max(ks, vs) <= 64 * 1024


# -- CPU: the key order, modelled ------------------------------------------------------------
# The digit keys the kernels sort by (codegen's fbits, and the BaseDigitExtractor
# specializations for floating and complex keys), computed in NumPy: a stable sort by them
# must be NumPy's stable sort, NaN payloads and signs, -0.0 and complex NaN groups included.

_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}
_INF = {2: 0x7C00, 4: 0x7F800000, 8: 0x7FF0000000000000}


def _float_key(bits, size, desc=False):
    u = _UINT[size]
    high, ones = u(1 << (8 * size - 1)), u((1 << (8 * size)) - 1)
    tw = np.where(bits & high, ~bits, bits | high).astype(u)            # NumericTraits TwiddleIn
    twp = u(_INF[size] | int(high))
    nan = (tw > twp) | (tw < ~twp)
    zero = np.where(tw == high - u(1), high, tw).astype(u)             # -0.0 ties with +0.0
    return np.where(nan, ones, ~zero if desc else zero).astype(u)


def _special_floats(dt, n):
    u = _UINT[np.dtype(dt).itemsize]
    vals = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.5], dt)
    h = rng.choice(vals, n)
    bits = h.view(u).copy()
    neg_nan = np.array([np.nan], dt).view(u)[0] | u(1 << (8 * h.itemsize - 1))
    bits[::5] = neg_nan                                   # negative NaN (x86's default NaN)
    bits[::7] = np.array([np.nan], dt).view(u)[0] + u(1)   # another payload
    return bits.view(dt)


@pytest.mark.parametrize("dt", ["float16", "float32", "float64"])
def test_float_key_order_model(dt):
    h = _special_floats(dt, 500)
    size = h.itemsize
    order = np.argsort(_float_key(h.view(_UINT[size]), size), kind="stable")
    np.testing.assert_array_equal(order, np.argsort(h, kind="stable"))
    desc = np.argsort(_float_key(h.view(_UINT[size]), size, desc=True), kind="stable")
    finite = ~np.isnan(h)
    # descending: -h's stable order for numbers (ties keep their order), then NaN in order
    want = np.concatenate([np.flatnonzero(finite)[np.argsort(-h[finite], kind="stable")],
                           np.flatnonzero(~finite)])
    np.testing.assert_array_equal(desc, want)


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_complex_key_order_model(dt):
    part = np.dtype(dt).itemsize // 2
    u = _UINT[part]
    fdt = np.float32 if part == 4 else np.float64
    h = np.empty(800, dt)
    h.real, h.imag = _special_floats(fdt, 800), _special_floats(fdt, 800)[::-1]
    re = _float_key(np.ascontiguousarray(h.real).view(u), part)
    im = _float_key(np.ascontiguousarray(h.imag).view(u), part)
    ones, twp = u((1 << (8 * part)) - 1), u(_INF[part] | (1 << (8 * part - 1)))
    nr, ni = re == ones, im == ones
    hi = np.where(~nr & ~ni, re, np.where(~nr, twp + u(1), np.where(~ni, twp + u(2), ones)))
    lo = np.where(~nr & ~ni, im, np.where(~nr, re, np.where(~ni, im, ones)))
    np.testing.assert_array_equal(np.lexsort((lo, hi)), np.argsort(h, kind="stable"))


# -- CPU: NumPy's errors -----------------------------------------------------------------------

def _same_error(gfunc, nfunc):
    with pytest.raises(Exception) as want:
        nfunc()
    with pytest.raises(type(want.value)) as got:
        gfunc()
    assert str(got.value) == str(want.value)


_ERRS = [
    ("sort", dict(kind="bogus")), ("sort", dict(kind=3)), ("sort", dict(kind="")),
    ("sort", dict(kind="stable", stable=True)), ("sort", dict(order="x")),
    ("argsort", dict(order="x")), ("sort", dict(axis=1)), ("argsort", dict(axis=-2)),
    ("sort", dict(axis=1.0)), ("argsort", dict(axis=1.0)), ("argsort", dict(kind="x")),
]


@pytest.mark.parametrize("name,kw", _ERRS)
def test_sort_errors(name, kw):
    x, h = fake((5,), "float64"), np.zeros(5)
    _same_error(lambda: getattr(gp, name)(x, **kw), lambda: getattr(np, name)(h, **kw))


@pytest.mark.parametrize("name,kw", [("sort", {}), ("partition", {}), ("argsort", dict(axis=1)),
                                     ("argpartition", dict(axis=-2))])
def test_zero_d_axis_error(name, kw):
    x, h = fake((), "float32"), np.zeros((), np.float32)
    extra = (0,) if "partition" in name else ()
    _same_error(lambda: getattr(gp, name)(x, *extra, **kw), lambda: getattr(np, name)(h, *extra, **kw))


@pytest.mark.parametrize("kth,kw", [(5, {}), (-6, {}), (2.0, {}), ([1, 7], {}), (True, {}),
                                    ([[1, 2]], {}), ([], {}), (1, dict(kind="x")),
                                    (1, dict(order="x")), (1, dict(axis=2))])
@pytest.mark.parametrize("name", ["partition", "argpartition"])
def test_partition_errors(name, kth, kw):
    x, h = fake((5,), "float32"), np.zeros(5, np.float32)
    _same_error(lambda: getattr(gp, name)(x, kth, **kw), lambda: getattr(np, name)(h, kth, **kw))


@gpu
def test_partition_empty_skips_kth_bounds():
    np.partition(np.zeros((3, 0)), 5, axis=0)      # NumPy: no error when there are no elements
    assert gp.partition(gp.empty((3, 0)), 5, axis=0).shape == (3, 0)


def test_method_errors():
    x, h = fake((5,), "float64"), np.zeros(5)
    _same_error(lambda: x.sort(axis=None), lambda: h.sort(axis=None))
    _same_error(lambda: x.sort(kind="q", stable=True), lambda: h.sort(kind="q", stable=True))
    _same_error(lambda: x.partition(0, axis=None), lambda: h.partition(0, axis=None))
    _same_error(lambda: x.partition(9), lambda: h.partition(9))
    z, hz = fake((), "float64"), np.zeros(())
    _same_error(lambda: z.sort(), lambda: hz.sort())


def test_lexsort_errors():
    a, h = fake((5,), "float32"), np.zeros(5, np.float32)
    _same_error(lambda: gp.lexsort([]), lambda: np.lexsort([]))
    _same_error(lambda: gp.lexsort((a, fake((3,), "float32"))), lambda: np.lexsort((h, h[:3])))
    _same_error(lambda: gp.lexsort((a, a), axis=1), lambda: np.lexsort((h, h), axis=1))
    _same_error(lambda: gp.lexsort((a, a), axis=None), lambda: np.lexsort((h, h), axis=None))
    _same_error(lambda: gp.lexsort(fake((), "float32")), lambda: np.lexsort(np.zeros(())))


def test_host_input_raises():
    with pytest.raises(TypeError):
        gp.sort(np.arange(3.0))


# -- GPU: against NumPy ------------------------------------------------------------------------

def _keys(shape, dt, special=True, ties=False):
    x = data.rand(shape, dt, rng=rng, bound=5 if ties else 100,
                  special="mixed" if special else None)
    if ties and x.dtype.kind in "fc":
        x = np.round(x).astype(x.dtype)
    return x


def _check(h, axis=-1):
    x = gp.asarray(h)
    data.same(gp.sort(x, axis=axis), np.sort(h, axis=axis))
    data.same(gp.argsort(x, axis=axis), np.argsort(h, axis=axis, kind="stable"))


@gpu
@pytest.mark.parametrize("dt", SUPPORTED, ids=str)
@pytest.mark.parametrize("n", [0, 1, 7, 200, 3000, 5000, 100_000])
def test_sort_1d(dt, n):
    _check(_keys((n,), dt, ties=n > 1000))


@gpu
@pytest.mark.parametrize("dt", ["float16", "float32", "float64"])
@pytest.mark.parametrize("n", [50, 3000, 300_000])
def test_nan_inf_negative_zero(dt, n):
    h = rng.choice(np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0], dt), n)
    h[::7] = np.array(np.frombuffer(np.array([0x7fc00001], np.uint32).tobytes(), np.float32)[0], dt)
    x = gp.asarray(h)
    got = gp.sort(x).get()
    want = np.sort(h, kind="stable")
    np.testing.assert_array_equal(got, want)
    data.same(gp.argsort(x), np.argsort(h, kind="stable"))


@gpu
@pytest.mark.parametrize("dt", ["complex64", "complex128"])
@pytest.mark.parametrize("n", [60, 4000, 200_000])
def test_complex_nan_groups(dt, n):
    parts = np.array([np.nan, 0.0, -0.0, 1.0, -1.0, np.inf, 2.0], np.float64)
    h = (rng.choice(parts, n) + 1j * rng.choice(parts, n)).astype(dt)
    h.real[::5] = np.nan
    _check(h)


@gpu
@given(shape=st.lists(st.integers(0, 40), min_size=1, max_size=3),
       dt=st.sampled_from(SUPPORTED), data_=st.data())
@settings(max_examples=60, deadline=None)
def test_axes_and_views(shape, dt, data_):
    h = _keys(tuple(shape), dt, special=False, ties=True)
    axis = data_.draw(st.integers(-len(shape), len(shape) - 1))
    x = gp.asarray(h)
    if data_.draw(st.booleans()) and h.ndim >= 1:        # a negative-stride, non-contiguous view
        h, x = h[..., ::-2], x[..., ::-2]
    if data_.draw(st.booleans()) and h.ndim >= 2:
        h, x = h.T, x.T
    data.same(gp.sort(x, axis=axis), np.sort(h, axis=axis))
    data.same(gp.argsort(x, axis=axis), np.argsort(h, axis=axis, kind="stable"))


@gpu
@pytest.mark.parametrize("composite", [True, False])
@pytest.mark.parametrize("shape,axis", [((300, 5000), -1), ((5000, 3), 0), ((3, 9000), 1),
                                        ((4, 6000, 2), 1), ((700, 300), None), ((100, 100), 0)])
@pytest.mark.parametrize("dt", ["float32", "int16", "float64", "bool", "float16"])
def test_long_and_short_rows(shape, axis, dt, composite, monkeypatch):
    from gpunb.core.kernels.sort import run

    monkeypatch.setattr(run, "COMPOSITE_ROWS", composite)
    h = _keys(shape, dt, ties=True)
    x = gp.asarray(h)
    got = gp.sort(x, axis=axis)
    data.same(got, np.sort(h, axis=axis))
    # the exact bits (-0.0 and NaN payloads kept), as NumPy's stable sort places them
    want = np.sort(h, axis=axis, kind="stable")
    assert got.get().tobytes() == want.tobytes()
    data.same(gp.argsort(x, axis=axis), np.argsort(h, axis=axis, kind="stable"))


@gpu
def test_zero_d_and_fortran():
    h = np.array(2.5)
    data.same(gp.sort(gp.asarray(h), axis=None), np.sort(h, axis=None))
    data.same(gp.argsort(gp.asarray(h), axis=None), np.argsort(h, axis=None))
    data.same(gp.argsort(gp.asarray(h)), np.argsort(h))
    data.same(gp.argpartition(gp.asarray(h), 0), np.argpartition(h, 0))
    f = np.asfortranarray(_keys((30, 40), "float32"))
    data.same(gp.sort(gp.asarray(f)), np.sort(f))


@gpu
@pytest.mark.parametrize("dt", ["float32", "int64", "bool", "complex64"])
def test_inplace_and_partition(dt):
    h = _keys((40, 30), dt, ties=True)
    x = gp.asarray(h)
    assert x.sort(axis=0) is None
    h2 = h.copy()
    h2.sort(axis=0)
    data.same(x, h2)
    for kth in (0, 5, -1, [3, 7]):
        got = gp.partition(gp.asarray(h), kth).get()
        want = np.partition(h, kth)
        ks = np.atleast_1d(kth)
        np.testing.assert_array_equal(got[:, ks], want[:, ks])
        idx = gp.argpartition(gp.asarray(h), kth).get()
        np.testing.assert_array_equal(np.take_along_axis(h, idx, -1)[:, ks], want[:, ks])
    y = gp.asarray(h)
    assert y.partition(3) is None
    np.testing.assert_array_equal(y.get()[:, 3], np.partition(h, 3)[:, 3])


@gpu
@pytest.mark.parametrize("dt", ["int8", "uint16", "float32", "float64", "complex128", "bool", "int64"])
def test_sort_complex(dt):
    h = _keys((50,), dt)
    data.same(gp.sort_complex(gp.asarray(h)), np.sort_complex(h))


@gpu
@pytest.mark.parametrize("shape,axis", [((50,), -1), ((6, 700), -1), ((700, 6), 0), ((5000,), 0)])
def test_lexsort(shape, axis):
    a = _keys(shape, "int8", ties=True)
    b = _keys(shape, "float32", ties=True)
    c = _keys(shape, "bool")
    keys = (a, b, c)
    data.same(gp.lexsort(tuple(gp.asarray(k) for k in keys), axis=axis), np.lexsort(keys, axis=axis))
    two = np.stack([a.astype(np.float32), b])
    data.same(gp.lexsort(gp.asarray(two), axis=axis), np.lexsort(two, axis=axis))


@gpu
@pytest.mark.parametrize("narrow", [True, False])
@pytest.mark.parametrize("dt", ["float32", "int64", "float16", "complex128", "uint8"])
def test_argsort_positions_int32_or_int64(dt, narrow, monkeypatch):
    from gpunb.core.kernels.sort import run

    monkeypatch.setattr(run, "NARROW_ARGSORT", narrow)
    h = _keys((300_000,), dt, ties=True)
    data.same(gp.argsort(gp.asarray(h)), np.argsort(h, kind="stable"))
    v = np.arange(h.size, dtype=np.int64)
    k, vv = run.sort_flat(gp.asarray(h), gp.asarray(v))
    np.testing.assert_array_equal(vv.get(), np.argsort(h, kind="stable"))


@gpu
def test_default_kind_is_a_sorting_permutation():
    h = _keys((10_000,), "float32", ties=True)
    idx = gp.argsort(gp.asarray(h), kind="quicksort").get()
    assert sorted(idx.tolist()) == list(range(h.size))
    np.testing.assert_array_equal(h[idx], np.sort(h))


@gpu
def test_sort_flat_engine():
    from gpunb.core.kernels.sort.run import sort_flat

    h = _keys((50_000,), "float32", ties=True)
    v = np.arange(h.size, dtype=np.int64)
    k, vv = sort_flat(gp.asarray(h), gp.asarray(v))
    order = np.argsort(h, kind="stable")
    np.testing.assert_array_equal(k.get(), h[order])
    np.testing.assert_array_equal(vv.get(), order)
    for m in (h.size, 100):       # the onesweep passes, and a short array
        kd, _ = sort_flat(gp.asarray(h[:m]), descending=True)
        finite = h[:m][~np.isnan(h[:m])]
        want = np.concatenate([np.sort(finite)[::-1], h[:m][np.isnan(h[:m])]])
        np.testing.assert_array_equal(kd.get(), want)
    hi = _keys((3000,), "int64", ties=True)
    np.testing.assert_array_equal(sort_flat(gp.asarray(hi), descending=True)[0].get(), np.sort(hi)[::-1])


@gpu
@pytest.mark.parametrize("case", ["narrow int64", "equal int64", "signed int32", "float32 [1, 2)",
                                  "float64 ties", "uint16", "int64 [-1000, 1000]", "int64 across 2^40",
                                  "uint32 across 2^24", "int64 with its largest", "int16 around 0"])
def test_passes_with_one_digit_are_skipped(case, monkeypatch):
    """Sorts long enough read the digit histograms back during their first pass and run only
    the later passes whose digit differs between keys (the result may end in the scratch
    buffers), or those of the keys' differences from an offset (integer keys in a narrow
    range that straddles zero or a byte boundary): sorted keys, argsort, pairs and descending
    order stay NumPy's; the number of digit passes launched is checked."""
    from gpunb.core.kernels.sort import run

    monkeypatch.setattr(run, "SKIP_PASSES_MIN", 20_000)
    n = 60_000
    h, want_passes = {
        "narrow int64": (rng.integers(0, 1000, n), 2),
        "equal int64": (np.full(n, -7, np.int64), 1),
        "signed int32": (rng.integers(-300, 300, n).astype(np.int32), 2),      # offset keys
        "int64 [-1000, 1000]": (rng.integers(-1000, 1001, n), 2),
        "int64 across 2^40": (rng.integers(-5000, 5000, n) + (1 << 40), 2),
        "uint32 across 2^24": (rng.integers(-3000, 3000, n).astype(np.uint32) + (1 << 24), 2),
        "int64 with its largest": (np.append(rng.integers(-1000, 1001, n - 1), (1 << 63) - 1), 8),
        "int16 around 0": (rng.integers(-100, 101, n).astype(np.int16), 2),
        "float32 [1, 2)": (rng.uniform(1, 2, n).astype(np.float32), 3),
        "float64 ties": (np.round(rng.uniform(0, 8, n)), 3),     # the first pass always runs
        "uint16": (rng.integers(0, 1 << 16, n).astype(np.uint16), 2),
    }[case]
    launched = []
    execute = run.execute

    def counting(steps, ptrs):
        sweeps = {fn for k in list(run._kernels.values())
                  for name, fn in run._load(k).functions.items() if "_onesweep" in name}
        launched.extend(s for s in steps if s.function in sweeps)
        return execute(steps, ptrs)
    monkeypatch.setattr(run, "execute", counting)
    x = gp.asarray(h)
    data.same(gp.sort(x), np.sort(h))
    assert len(launched) == want_passes
    data.same(gp.argsort(x), np.argsort(h, kind="stable"))
    k, v = run.sort_flat(x, gp.asarray(np.arange(n, dtype=np.int64)))
    np.testing.assert_array_equal(v.get(), np.argsort(h, kind="stable"))
    np.testing.assert_array_equal(run.sort_flat(x, descending=True)[0].get(), np.sort(h)[::-1])


@gpu
@pytest.mark.parametrize("dt", ["int64", "int32", "uint32"])
def test_offset_keys_through_rows_and_sets(dt, monkeypatch):
    """Offset keys wherever the radix sort runs long: rows sorted along an axis (a stable sort
    of (key, position) over all rows, then the rows grouped), argsort of rows, and unique with
    its index, inverse and counts, on narrow signed data across zero (and a byte boundary for
    the unsigned keys)."""
    from gpunb.core.kernels.sort import run

    monkeypatch.setattr(run, "SKIP_PASSES_MIN", 20_000)
    used = []
    offset_passes = run._offset_passes
    monkeypatch.setattr(run, "_offset_passes", lambda *a: used.append(offset_passes(*a)) or used[-1])
    lo, hi = (-(1 << 9), 1 << 9) if dt[0] == "i" else ((1 << 16) - 300, (1 << 16) + 300)
    h = rng.integers(lo, hi, (3, 30_000)).astype(dt)
    x = gp.asarray(h)
    _check(h)
    _check(h, axis=0)
    got = gp.unique(x, return_index=True, return_inverse=True, return_counts=True)
    want = np.unique(h, return_index=True, return_inverse=True, return_counts=True)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(gp.asnumpy(g), w)
    assert any(top for top, _ in used)      # the offset path ran


@gpu
def test_sort_in_a_graph_runs_every_pass(monkeypatch):
    """A graph capture cannot wait for the histograms: every pass is captured and replays."""
    from gpunb.core.kernels.sort import run

    monkeypatch.setattr(run, "SKIP_PASSES_MIN", 20_000)
    h = rng.integers(0, 1000, 60_000)
    x = gp.asarray(h)
    with gp.graph() as g:
        y = gp.sort(x)
    data.same(y, np.sort(h))
    x[...] = gp.asarray(h[::-1].copy() + 5)
    g.replay()
    data.same(y, np.sort(h) + 5)


@gpu
@pytest.mark.parametrize("dt", ["float32", "int64", "complex64"])
def test_portions(dt, monkeypatch):
    """Arrays of more than one portion (2^28 keys on the device): portions made small."""
    monkeypatch.setattr(sp, "PORTION_LIMIT", 100_003)
    _check(_keys((1_000_000,), dt, ties=True))
    h = _keys((64, 40_000), dt, ties=True)
    data.same(gp.sort(gp.asarray(h)), np.sort(h))


@gpu
@pytest.mark.skipif(os.environ.get("GPUNB_HUGE_TESTS") != "1",
                    reason="2^31+ elements: set GPUNB_HUGE_TESTS=1 on a GPU with 40+ GB free")
def test_huge_count():
    n = (1 << 31) + 12345
    h = rng.integers(0, 255, 1 << 20, dtype=np.uint8)
    x = gp.tile(gp.asarray(h), n // h.size + 1)[:n]
    s = gp.sort(x)
    counts = np.bincount(h, minlength=256).astype(np.int64) * (n // h.size)
    counts += np.bincount(h[: n - (n // h.size) * h.size], minlength=256)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    probe = starts[counts > 0]
    got = np.array([s[int(i)].get() for i in probe[:50]])
    np.testing.assert_array_equal(got, np.nonzero(counts)[0][:50].astype(np.uint8))
    assert bool(gp.all(s[1:] >= s[:-1]).get())
