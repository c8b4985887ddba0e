"""Advanced indexing, the gather/scatter kernels, ufunc.at and the indexing routines.
Errors are checked on the CPU against NumPy (arrays over a made-up address: every check runs
before a kernel); every kernel variant is compiled by NVRTC; the kernels' index arithmetic is
emulated on the CPU from the planned argument words; values against NumPy on the GPU."""

import ctypes

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gpunb as gp
from gpunb.core.build.compiler import compile as nvrtc_compile
from gpunb.core.dtypes import SUPPORTED
from gpunb.core.kernels.indexing import codegen as cg
from gpunb.core.kernels.indexing.plan import Index, plan
from gpunb.core.ndarray import MemoryPointer, ndarray
from tests import data
from tests.data import fake, same

rng = np.random.default_rng(12)
gpu = pytest.mark.gpu
INT_TYPES = [d for d in SUPPORTED if d.kind in "iu"]


def rand(shape, dtype):
    return data.rand(shape, dtype, rng=rng, scale=3, bound=100)


# -- CPU: kernels compile ----------------------------------------------------------------------

def _variants():
    out = [cg.IndexKernel("gather", d, (i,), ("raise",), 1) for d in SUPPORTED for i in ("int64", "int32")]
    out += [cg.IndexKernel("gather", "float32", (i,), (m,), 2) for i in INT_TYPES for m in cg.MODES]
    out += [cg.IndexKernel("scatter", d, ("int64", "uint8"), ("raise", "wrap"), 3, value=v)
            for d in SUPPORTED for v in ("float64", "complex64", "bool", d.name)]
    out += [cg.IndexKernel("fill", d, (), (), 2, mask=True) for d in SUPPORTED]
    out += [cg.IndexKernel("fill", "int16", ("int64",), ("clip",), 2, wide=True)]
    for d in SUPPORTED:
        for op in cg.OPS:
            if d.kind == "b" and op == "subtract":
                continue
            out.append(cg.IndexKernel("at", d, ("int64",), ("raise",), 1, value=d, op=op, loop=d))
    out += [cg.IndexKernel("at", "int8", ("int64",), ("raise",), 1, value="float64", op=op, loop="float64")
            for op in cg.OPS]
    out += [cg.IndexKernel("at", "float32", ("int32",), ("raise",), 2, value="float64", op="add", loop="float64")]
    return out


def test_every_kernel_variant_compiles_for_sm_90():
    for k in _variants():
        assert nvrtc_compile(cg.render(k), (), "sm_90"), k.name


def test_streaming_hints_where_cuda_has_them():
    """Index loads and a gather's stores are evict-first (__ldcs/__stcs) for the types CUDA
    has them for; bool, 8-bit and complex values are loaded and stored plainly."""
    src = cg.render(cg.IndexKernel("gather", "float32", ("int64",), ("raise",), 1))
    assert "__ldcs((const long long*)" in src and "__stcs((float*)" in src
    src = cg.render(cg.IndexKernel("gather", "complex64", ("int8",), ("wrap",), 1))
    assert "__ldcs" not in src and "__stcs" not in src
    src = cg.render(cg.IndexKernel("scatter", "bool", ("int32",), ("raise",), 1, value="bool"))
    assert "__ldcs((const int*)" in src and "__stcs" not in src


def test_plan_collapses_and_counts_words():
    p = plan((4, 5), (20, 4), (20, 4), [Index((0, 0), 7, 8, 0)])
    assert p.shape == (20,) and p.n == 20 and not p.wide
    k = cg.IndexKernel("gather", "float32", ("int64",), ("raise",), len(p.shape))
    assert len(p.words) == cg.arg_words(k)
    p = plan((3, 4), (0, 4), (16, 4), [Index((8, 0), 9, 12, 1)])
    assert p.shape == (3, 4) and p.words[:3] == (12, 3, 4)
    assert plan((), (), (), []).n == 1


def test_launch_passes_pointers_words_and_value(monkeypatch):
    """The launch glue, with the loader and the driver call stubbed: parameter order, the
    planned words, a fill value's bits, and one plan per layout."""
    from gpunb.core.kernels.indexing import run as irun

    calls = []

    class Loaded:
        def __init__(self, k):
            self.kernel, self.functions, self.occupancy, self.sm_count = k, {k.name: 7}, {k.name: 4}, 2

    def launched(self, stream, blocks=0):       # the objects' values at the launch
        calls.append((self.function, self.grid, self.block, stream,
                      [bytes(o) if isinstance(o, ctypes.Array) else o.value for o in self.objects]))

    monkeypatch.setattr(irun.loader, "get", lambda fam, key, make: Loaded(make()))
    monkeypatch.setattr(irun.fastcall.Prepared, "launch", launched)
    monkeypatch.setattr(irun.driver, "current_stream", lambda: (None, 5))
    monkeypatch.setattr(irun, "_err_dev", 0x999)
    x, out, idx = fake((10, 3)), fake((4, 3)), fake((4,), "int64")
    ix = Index((8, 0), 10, 12, 0)
    words = bytes((ctypes.c_int64 * len(plan((4, 3), (0, 4), (12, 4), [ix]).words))(
        *plan((4, 3), (0, 4), (12, 4), [ix]).words))
    for x2 in (x, fake((10, 3))):               # the second call: the same objects, new pointers
        irun.launch("gather", x2, out, [(idx, ix)], (4, 3), (0, 4), (12, 4))
        fn, grid, block, stream, params = calls[-1]
        assert (fn, grid, block, stream) == (7, (1, 1, 1), (cg.THREADS, 1, 1), 5)
        assert params[:4] == [x2.data.ptr, out.data.ptr, idx.data.ptr, 0x999]
        assert params[4] == words
    irun.launch("fill", fake((5,), "float16"), None, [], (5,), (2,), (0,), value=np.float16(1.5))
    assert calls[-1][-1][-1] == np.float16(1.5).tobytes()
    assert len(irun._plans) >= 2 and len(irun._launches) >= 2


# -- CPU: NumPy's errors ------------------------------------------------------------------------

BAD_INDICES = [[5], (slice(None), [-4]), [0.5], np.array([True]), [[True, False, True]], (0, 0, [0]),
               np.array([1.0]), [1, "a"], (np.array([0, 1]), np.array([0, 1, 2])),
               (Ellipsis, Ellipsis, [0]), (np.array([True, False]), np.array([True])),
               ([0], 5), (np.zeros((2, 3, 1), bool),)]


@pytest.mark.parametrize("index", BAD_INDICES, ids=range(len(BAD_INDICES)))
def test_bad_indices_raise_numpys_errors(index):
    host = np.zeros((2, 3), np.float32)
    with pytest.raises(Exception) as want:
        host[index]
    with pytest.raises(type(want.value)) as got:
        fake((2, 3))[index]
    assert str(got.value) == str(want.value)
    with pytest.raises(type(want.value)) as got:
        fake((2, 3))[index] = 1.0
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("call", [
    lambda x: x.take([7]), lambda x: x.take([1], mode="bad"), lambda x: x.take([1], axis=3),
    lambda x: x.take([-7]), lambda x: np.take(x, [[4]], axis=1), lambda x: x.diagonal(0, 0, 0),
    lambda x: np.diagonal(x, 0, 5, 0), lambda x: np.diagonal(x[0]),
    lambda x: np.take_along_axis(x, np.array([1]), 0), lambda x: np.take_along_axis(x, np.array([[1.0]]), 0),
    lambda x: np.take_along_axis(x, np.array([[5]]), 0), lambda x: np.compress([[True]], x),
    lambda x: np.choose([0, 1], [x[0], x[1]], mode="bad"), lambda x: np.choose([3], [x[0]]),
    lambda x: np.select([], []), lambda x: np.select([x[0]], [x[0], x[1]]),
    lambda x: np.put(x, [9], 1.0), lambda x: np.put_along_axis(x, np.array([[1]]), 5, axis=None),
    lambda x: np.ravel_multi_index(([9], [0]), (2, 3)), lambda x: np.unravel_index([7], (2, 3)),
    lambda x: np.diag_indices_from(x), lambda x: np.tril_indices_from(x[0]),
    lambda x: np.add.at(x, [0]),
], ids=range(23))
def test_routine_errors_match_numpy(call):
    host = np.zeros((2, 3), np.float32)
    with pytest.raises(Exception) as want:
        call(host)
    with pytest.raises(type(want.value)) as got:
        call(fake((2, 3)))
    assert str(got.value) == str(want.value)


def test_unsupported_ufunc_at_names_the_ufunc():
    with pytest.raises(TypeError, match="sin.at is not supported"):
        gp.sin.at(fake((3,)), [0])
    with pytest.raises(TypeError, match="divide.at is not supported"):
        gp.divide.at(fake((3,)), [0], 1.0)
    with pytest.raises(TypeError, match="boolean subtract"):
        gp.subtract.at(fake((3,), bool), [0], fake((1,), bool))


def test_diagonal_is_a_view():
    x = fake((3, 4, 5))
    for args in [(0, 0, 1), (1, 0, 2), (-2, 2, 1), (7, 0, 1), (0, -1, 0)]:
        d = x.diagonal(*args)
        want = np.empty((3, 4, 5), np.float32).diagonal(*args)
        assert d.shape == want.shape and (d.size == 0 or d.strides == want.strides)
        assert d.base is x


# -- GPU: values against NumPy ------------------------------------------------------------------

@st.composite
def fancy(draw):
    """A shape (0-6 dims, some empty) and an index mixing arrays, ints, slices, None, Ellipsis,
    masks."""
    nd = draw(st.integers(1, 6))
    shape = tuple(draw(st.lists(st.integers(0 if nd > 1 else 1, 4), min_size=nd, max_size=nd)))
    items, axis = [], 0
    bshape = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=2)))
    used_mask = False
    while axis < nd:
        kind = draw(st.sampled_from(["arr", "slice", "int", "none", "mask", "stop"]))
        n = shape[axis]
        if kind == "stop":
            break
        if kind == "arr" and n and not used_mask:
            items.append(rng.integers(-n, n, bshape))
            axis += 1
        elif kind == "slice":
            items.append(slice(draw(st.integers(-5, 5)), None, draw(st.sampled_from([1, 2, -1, -2]))))
            axis += 1
        elif kind == "int" and n:
            items.append(draw(st.integers(-n, n - 1)))
            axis += 1
        elif kind == "none":
            items.append(None)
        elif kind == "mask" and not used_mask and not any(isinstance(i, np.ndarray) for i in items):
            k = draw(st.integers(1, min(2, nd - axis)))
            items.append(rng.integers(0, 2, shape[axis:axis + k]).astype(bool))
            axis += k
            used_mask = True
    if draw(st.booleans()):      # anywhere when it covers no axis (it still separates), else last
        items.insert(draw(st.integers(0, len(items))) if axis == nd else len(items), Ellipsis)
    if not any(isinstance(i, np.ndarray) for i in items):
        items.insert(0, np.array(True))     # a 0-d mask: an advanced index over no axis
    return shape, tuple(items)


@settings(max_examples=300, deadline=None)
@given(fancy())
def test_result_shape_and_placement_match_numpy(case):
    """The resolved result shape (B's placement included) for GPU index arrays, on the CPU."""
    from gpunb.core.kernels.indexing.resolve import resolve
    shape, index = case
    if any(isinstance(i, np.ndarray) and i.dtype == bool for i in index):
        return
    want = np.zeros(shape, np.float32)[index]
    gidx = tuple(fake(i.shape, i.dtype) if isinstance(i, np.ndarray) else i for i in index)
    r = resolve(fake(shape), gidx)
    assert r.shape == want.shape
    assert len(r.strides) == len(r.shape) and all(len(ix.strides) == len(r.shape) for _, ix in r.indices)


@gpu
@settings(max_examples=150, deadline=None)
@given(fancy(), st.sampled_from(["C", "F", "neg"]), st.booleans())
def test_getitem_and_setitem_match_numpy(case, layout, on_gpu):
    shape, index = case
    h = rand(shape, "float32")
    x = gp.asarray(h)
    if layout == "F":
        x = gp.asarray(np.asfortranarray(h))
    elif layout == "neg":
        h2 = rand(shape, "float32")[tuple(slice(None, None, -1) for _ in shape)]
        h, x = h2, gp.asarray(h2[tuple(slice(None, None, -1) for _ in shape)])[tuple(slice(None, None, -1) for _ in shape)]
    gidx = tuple(gp.asarray(i) if on_gpu and isinstance(i, np.ndarray) else i for i in index)
    want = h[index]
    same(x[gidx], want)
    v = rand(want.shape, "float32")
    hv = h.copy()
    hv[index] = 7.0
    xv = x.copy()
    xv[gidx] = 7.0
    same(xv, hv)
    if _unique_targets(h.shape, index):
        hv[index] = v
        xv[gidx] = gp.asarray(v)
        same(xv, hv)


def _unique_targets(shape, index):
    pos = np.arange(int(np.prod(shape))).reshape(shape)[index]
    return np.unique(pos).size == pos.size


DTYPE_PAIRS = [(d, INT_TYPES[k % len(INT_TYPES)]) for k, d in enumerate(SUPPORTED)]
DTYPE_PAIRS += [(np.dtype("float32"), i) for i in INT_TYPES]


@gpu
@pytest.mark.parametrize("dtype, itype", DTYPE_PAIRS, ids=str)
def test_every_dtype_and_index_dtype(dtype, itype):
    h = rand((5, 6), dtype)
    idx = np.array([0, 4, 2, 3], itype)
    x = gp.asarray(h)
    same(x[gp.asarray(idx)], h[idx])
    same(x[:, gp.asarray(idx)], h[:, idx])
    same(gp.take(x, gp.asarray(idx), axis=1), np.take(h, idx, axis=1))
    v = rand((4, 6), dtype)
    hv, xv = h.copy(), x.copy()
    hv[idx] = v
    xv[gp.asarray(idx)] = gp.asarray(v)
    same(xv, hv)


@gpu
@pytest.mark.parametrize("dtype", SUPPORTED, ids=str)
@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "maximum", "minimum"])
def test_ufunc_at_repeated_indices_match_numpy(dtype, op):
    if dtype.kind == "b" and op == "subtract":
        pytest.skip("NumPy refuses boolean subtract")
    # small integers (exact in every dtype, sums order-free), and NaN where floats have it
    a = (rng.integers(0, 3, 10) if dtype.kind != "b" else rng.integers(0, 2, 10)).astype(dtype)
    b = (rng.integers(0, 2, 40) if dtype.kind != "b" else rng.integers(0, 2, 40)).astype(dtype)
    if op == "multiply":
        b = np.where(b == 0, 1, b).astype(dtype)
    if dtype.kind in "fc" and op in ("maximum", "minimum"):
        b[5] = np.nan
    idx = rng.integers(-10, 10, 40)
    want = a.copy()
    getattr(np, op).at(want, idx, b)
    got = gp.asarray(a)
    getattr(gp, op).at(got, gp.asarray(idx), gp.asarray(b))
    same(got, want)
    got = gp.asarray(a)
    getattr(gp, op).at(got, list(idx), gp.asarray(b))
    same(got, want)


@gpu
def test_numpy_ufunc_at_runs_gpunbs():
    a = np.zeros(4, np.int32)
    np.add.at(a, [0, 0, 3], 2)
    x = gp.asarray(np.zeros(4, np.int32))
    np.add.at(x, gp.asarray(np.array([0, 0, 3])), 2)
    same(x, a)


@gpu
def test_ufunc_at_casts_like_numpy():
    for a, b in [(np.zeros(3, np.int8), 1.5), (np.zeros(3, np.int8), np.array([1000, 7])),
                 (np.ones(3, np.float32), np.float64(1e-9)), (np.zeros(3, np.float16), 0.1)]:
        want = a.copy()
        np.add.at(want, [0, 0], b)
        got = gp.asarray(a)
        gp.add.at(got, [0, 0], gp.asarray(b) if isinstance(b, np.ndarray) else b)
        same(got, want)
        want = a.copy()
        np.maximum.at(want, [1, 1], b)
        got = gp.asarray(a)
        gp.maximum.at(got, [1, 1], gp.asarray(b) if isinstance(b, np.ndarray) else b)
        same(got, want)


@gpu
def test_out_of_bounds_gpu_indices_raise_at_the_next_synchronization():
    x = gp.asarray(np.arange(5.0))
    y = x[gp.asarray(np.array([1, 7]))]          # no error yet: nothing waited
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 0 with size 5"):
        y.get()
    same(x[gp.asarray(np.array([1, 2]))], np.arange(5.0)[[1, 2]])   # the error was cleared
    x[gp.asarray(np.array([-9]))] = 1.0
    with pytest.raises(IndexError, match="earlier indexing call"):
        gp.synchronize()
    same(x, np.arange(5.0))                       # the write was skipped
    gp.add.at(x, gp.asarray(np.array([5])), 1.0)
    with pytest.raises(IndexError):
        float(x[0])
    same(gp.take(x, gp.asarray(np.array([7, -1])), mode="wrap"), np.take(np.arange(5.0), [7, -1], mode="wrap"))
    same(gp.take(x, gp.asarray(np.array([7, -1])), mode="clip"), np.take(np.arange(5.0), [7, -1], mode="clip"))


@gpu
def test_boolean_masks():
    h = rand((4, 5, 3), "float64")
    x = gp.asarray(h)
    for m in [h > 0, (h > 0)[:, :, 0], (h > 0)[:, 0, 0], np.array(True), np.array(False)]:
        same(x[gp.asarray(m)], h[m])
        same(x[m], h[m])
        hv, xv = h.copy(), x.copy()
        hv[m] = -1.0
        xv[gp.asarray(m)] = -1.0
        same(xv, hv)
    m = h > 0
    v = rand((int(m.sum()),), "float64")
    hv, xv = h.copy(), x.copy()
    hv[m] = v
    xv[gp.asarray(m)] = gp.asarray(v)
    same(xv, hv)
    xt = gp.asarray(h).transpose(2, 0, 1)
    same(xt[gp.asarray(m.transpose(2, 0, 1))], h.transpose(2, 0, 1)[m.transpose(2, 0, 1)])


@gpu
def test_iadd_through_an_index_is_get_add_set():
    h = np.arange(6.0)
    x = gp.asarray(h)
    idx = np.array([1, 3, 5])
    h[idx] += 10
    x[gp.asarray(idx)] += 10
    same(x, h)


@gpu
def test_routines_match_numpy():
    h = rand((4, 5), "float32")
    x = gp.asarray(h)
    i = np.array([[0, 2], [4, 1]])
    for mode in ("raise", "wrap", "clip"):
        same(gp.take(x, i, axis=1, mode=mode), np.take(h, i, axis=1, mode=mode))
    same(gp.take(x, 7), np.asarray(np.take(h, 7)))
    same(x.take(gp.asarray(i)), h.take(i))
    ia = rng.integers(0, 4, (4, 5))
    same(gp.take_along_axis(x, gp.asarray(ia), 0), np.take_along_axis(h, ia, 0))
    same(gp.take_along_axis(x, gp.asarray(ia[:1]), 0), np.take_along_axis(h, ia[:1], 0))
    hp, xp = h.copy(), x.copy()
    np.put_along_axis(hp, ia[:1], 9.0, 0)
    gp.put_along_axis(xp, gp.asarray(ia[:1]), 9.0, 0)
    same(xp, hp)
    hp, xp = h.copy(), x.copy()
    np.put(hp, [0, 7, 19], np.array([1.0, 2.0], np.float32))
    gp.put(xp, [0, 7, 19], gp.asarray(np.array([1.0, 2.0], np.float32)))
    same(xp, hp)
    xp.put(gp.asarray(np.array([3, 25])), -1.0, mode="wrap")
    hp.put([3, 25], -1.0, mode="wrap")
    same(xp, hp)
    hp, xp = h.copy(), x.copy()
    np.place(hp, hp > 0, np.array([5.0, 6.0], np.float32))
    gp.place(xp, gp.asarray(h > 0), gp.asarray(np.array([5.0, 6.0], np.float32)))
    same(xp, hp)
    c = np.array([[0, 1, 2, 1, 0]] * 4)
    ch = [h, -h, h * 2]
    same(gp.choose(gp.asarray(c), [gp.asarray(a) for a in ch]), np.choose(c, ch))
    same(gp.choose(gp.asarray(c + 1), [gp.asarray(a) for a in ch], mode="wrap"), np.choose(c + 1, ch, mode="wrap"))
    cond = np.array([True, False, True, True])
    same(gp.compress(cond, x, axis=0), np.compress(cond, h, axis=0))
    same(x.compress(gp.asarray(cond[:3]), axis=1), h.compress(cond[:3], axis=1))
    same(gp.extract(gp.asarray(h > 0), x), np.extract(h > 0, h))
    same(gp.select([gp.asarray(h > 1), gp.asarray(h < 0)], [x, gp.asarray(-h)], 5),
         np.select([h > 1, h < 0], [h, -h], 5))
    same(gp.diagonal(x, 1), np.diagonal(h, 1).copy())
    for got, want in [(gp.tril_indices(4, 1), np.tril_indices(4, 1)), (gp.triu_indices_from(x), np.triu_indices_from(h)),
                      (gp.diag_indices(3, 3), np.diag_indices(3, 3)), (gp.ix_([0, 2], [True, False, True]), np.ix_([0, 2], [True, False, True])),
                      (gp.unravel_index(gp.asarray(np.array([3, 17])), (4, 5)), np.unravel_index([3, 17], (4, 5))),
                      (gp.unravel_index([3, 17], (4, 5), order="F"), np.unravel_index([3, 17], (4, 5), order="F"))]:
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same(g, np.asarray(w))
    same(gp.ravel_multi_index((gp.asarray(np.array([1, 3])), gp.asarray(np.array([2, 6]))), (4, 5), mode="clip"),
         np.ravel_multi_index(([1, 3], [2, 6]), (4, 5), mode="clip"))


@gpu
def test_empty_and_zero_d():
    h = rand((3, 0, 2), "int16")
    x = gp.asarray(h)
    same(x[[0, 2]], h[[0, 2]])
    same(x[:, [], 1], h[:, [], 1])
    z = gp.asarray(np.array(4.0))
    same(z[np.array(True)], np.array(4.0)[np.array(True)])
    same(gp.asarray(np.arange(4))[gp.asarray(np.array(2))], np.arange(4)[np.array(2)])


# -- CPU: the kernels' index arithmetic, emulated over a host buffer -----------------------------

class _Emulated:
    """Device memory as a host byte buffer, and each gather/scatter launch run element by
    element from the planned argument words exactly as the generated kernel reads them: the
    parser, the layouts and the words are checked against NumPy with no GPU."""

    BASE = 0x10000000

    def __init__(self, monkeypatch):
        from gpunb._indexing import basic, gather
        from gpunb.core.kernels.indexing import resolve
        from gpunb.core.kernels.indexing import run as irun
        from gpunb.core.kernels.scan import run as srun
        self.mem, self.top = np.zeros(1 << 22, np.uint8), 0
        mp = monkeypatch
        mp.setattr(ndarray, "_empty", classmethod(lambda cls, shape, dt: self.empty(shape, dt)))
        mp.setattr(ndarray, "get", lambda a, *args, **kw: self.view(a).copy())
        mp.setattr(ndarray, "copy", lambda a, order="C": self.up(np.ascontiguousarray(self.view(a))))
        mp.setattr(resolve, "upload", self.up)
        mp.setattr(irun, "launch", self.launch)
        mp.setattr(srun, "nonzero_flat", lambda a: self.up(np.flatnonzero(self.view(a))))
        mp.setattr(srun, "nonzero_nd", lambda a: self.up(np.array(np.nonzero(self.view(a))).reshape(a.ndim, -1)))
        mp.setattr(srun, "select", lambda v, m: self.up(self.view(v)[self.view(m).astype(bool)]))
        for mod in (basic, gather):
            mp.setattr(mod, "assign", lambda d, v: self.view(d).__setitem__(
                Ellipsis, self.view(v) if isinstance(v, ndarray) else v))

    def empty(self, shape, dt):
        dt, shape = np.dtype(dt), tuple(shape)
        ptr = self.BASE + self.top
        self.top += (int(np.prod(shape)) * dt.itemsize + 511) // 256 * 256
        from gpunb.core import layout
        return ndarray._view(MemoryPointer(ptr), shape, layout.c_strides(shape, dt.itemsize), dt, None)

    def view(self, a):
        return np.ndarray(a.shape, a.dtype, buffer=self.mem, offset=a.data.ptr - self.BASE, strides=a.strides)

    def up(self, h):
        h = np.asarray(h)
        a = self.empty(h.shape, h.dtype)
        self.view(a)[...] = h
        return a

    def at(self, ptr, dt):
        return np.ndarray((), dt, buffer=self.mem, offset=ptr - self.BASE)

    def launch(self, kind, a, o, indices, space, a_strides, o_strides, *, mask=None, mask_strides=None,
               value=None, op=None, loop=None):
        p = plan(space, a_strides, o_strides, [ix for _, ix in indices], mask_strides)
        if p.n == 0:
            return
        N, M, w = len(p.shape), len(indices), p.words
        shape, S, V = w[1:1 + N], w[1 + N:1 + 2 * N], w[1 + 2 * N:1 + 3 * N]
        T = [w[1 + (3 + m) * N:1 + (4 + m) * N] for m in range(M)]
        K = w[1 + (3 + M) * N:1 + (4 + M) * N] if mask is not None else None
        rest = w[1 + (3 + M + (mask is not None)) * N:]
        size, step = rest[:M], rest[M:2 * M]
        for i in range(p.n):
            c = np.unravel_index(i, shape)
            off, voff = np.dot(c, S), np.dot(c, V)
            ok = True
            for m, (arr, ix) in enumerate(indices):
                v = int(self.at(arr.data.ptr + int(np.dot(c, T[m])), arr.dtype))
                n = size[m]
                k = {"raise": v + n if v < 0 else v, "wrap": v % n, "clip": min(max(v, 0), n - 1)}[ix.mode]
                if not 0 <= k < n:
                    ok, k = False, 0
                off += k * step[m]
            dst = self.at(a.data.ptr + int(off), a.dtype)
            if kind == "gather":
                self.at(o.data.ptr + int(voff), a.dtype)[...] = dst
            elif not ok:
                continue
            elif kind == "scatter":
                dst[...] = self.at(o.data.ptr + int(voff), o.dtype).astype(a.dtype)
            elif kind == "fill" and (K is None or self.at(mask.data.ptr + int(np.dot(c, K)), np.bool_)):
                dst[...] = value
            elif kind == "at":
                b = self.at(o.data.ptr + int(voff), o.dtype).astype(loop)
                dst[...] = getattr(np, op)(dst.astype(loop), b).astype(a.dtype)


@settings(max_examples=150, deadline=None)
@given(fancy(), st.booleans(), st.sampled_from(["C", "neg"]))
def test_emulated_getitem_setitem_and_at_match_numpy(case, on_gpu, layout_):
    shape, index = case
    with pytest.MonkeyPatch.context() as mp:
        emu = _Emulated(mp)
        h = rand(shape, "float32")
        rev = tuple(slice(None, None, -1) for _ in shape)
        x = emu.up(h) if layout_ == "C" else emu.up(h[rev])[rev]
        gidx = tuple(emu.up(i) if on_gpu and isinstance(i, np.ndarray) else i for i in index)
        want = h[index]
        got = x[gidx].get()
        assert got.shape == want.shape and np.array_equal(got, want)
        h[index] = 7.0
        x[gidx] = 7.0
        np.testing.assert_array_equal(emu.view(x), h)
        v = rand(want.shape, "float32").round()
        if _unique_targets(shape, index):
            h[index] = v
            x[gidx] = emu.up(v)
            np.testing.assert_array_equal(emu.view(x), h)
        np.add.at(h, index, v)
        gp.add.at(x, gidx, emu.up(v))
        np.testing.assert_array_equal(emu.view(x), h)


def test_emulated_routines_match_numpy():
    with pytest.MonkeyPatch.context() as mp:
        emu = _Emulated(mp)
        h = rand((4, 5), "float32")
        x = emu.up(h)
        i = np.array([[0, 2], [4, 1]])
        for mode, j in (("raise", i - 2), ("wrap", i + 3), ("clip", i + 3)):
            np.testing.assert_array_equal(gp.take(x, j, axis=1, mode=mode).get(), np.take(h, j, axis=1, mode=mode))
        ia = rng.integers(0, 4, (1, 5))
        np.testing.assert_array_equal(gp.take_along_axis(x, emu.up(ia), 0).get(), np.take_along_axis(h, ia, 0))
        gp.put_along_axis(x, emu.up(ia), 9.0, 0)
        np.put_along_axis(h, ia, 9.0, 0)
        gp.put(x, [0, 7, 19], emu.up(np.array([1.0, 2.0], np.float32)))
        np.put(h, [0, 7, 19], np.array([1.0, 2.0], np.float32))
        x.put(emu.up(np.array([3, 25])), -1.0, mode="wrap")
        h.put([3, 25], -1.0, mode="wrap")
        gp.place(x, emu.up(h > 0), emu.up(np.array([5.0, 6.0], np.float32)))
        np.place(h, h > 0, np.array([5.0, 6.0], np.float32))
        np.testing.assert_array_equal(emu.view(x), h)
        cond = np.array([True, False, True, True])
        np.testing.assert_array_equal(gp.compress(cond, x, axis=0).get(), np.compress(cond, h, axis=0))
        np.testing.assert_array_equal(x.compress(emu.up(cond[:3]), axis=1).get(), h.compress(cond[:3], axis=1))
        np.testing.assert_array_equal(gp.extract(emu.up(h > 0), x).get(), np.extract(h > 0, h))
        np.testing.assert_array_equal(gp.take(x.T, [[1], [0]]).get(), np.take(h.T, [[1], [0]]))


@pytest.mark.parametrize("shape", [(7,), (5, 3), (0,), (4, 0, 2)])
@pytest.mark.parametrize("sl", [slice(1, -1), slice(None, None, -1), slice(5, 2), slice(None, None, 2),
                                slice(-100, 100, 3), slice(3, 1, -1), slice(0, 0)])
def test_single_slice_view_matches_the_index_parser(shape, sl):
    """``x[slice]`` takes a short path past the basic-index parser: the same view, NumPy's."""
    from gpunb.core import layout

    a = fake(shape)
    v = a[sl]
    want_shape, want_strides, off = layout.basic_index(a.shape, a.strides, 4, (sl,))
    assert (v.shape, v.strides, v.data.ptr - a.data.ptr) == (want_shape, want_strides, off)
    assert v.shape == np.zeros(shape, np.float32)[sl].shape
