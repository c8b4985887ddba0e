"""Creation and rearranging (issue 12): logspace, geomspace, meshgrid, indices, diag, diagflat,
tri, tril, triu, asarray(copy=, order=), asfortranarray, order= in array/copy/empty/*_like,
ravel/flatten(order=), tile, repeat, rot90, roll (its kernel), pad, resize, trim_zeros,
delete, insert; and the reversed-vector rows entry of the elementwise copy (flip(x).copy()).

Errors and views are checked on the CPU (arrays over a made-up address: every check runs
before a kernel), the roll planner against NumPy through a model of its kernel, and every
new kernel source through NVRTC; values against NumPy on the GPU."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gpunb as gp
from gpunb.core.build.compiler import compile as nvrtc_compile
from gpunb.core.dtypes import SUPPORTED
from gpunb.core.kernels.rearrange import codegen as rcg
from gpunb.core.kernels.rearrange import plan as rplan
from gpunb.core.ndarray import MemoryPointer
from tests import data
from tests.data import fake, same

rng = np.random.default_rng(1212)
gpu = pytest.mark.gpu
BASE = 0x10000


def like_numpy(view, host):
    """The gpunb view has the shape, strides and offset of the NumPy view ``host`` of a base
    array whose first byte is at BASE."""
    base = host.base if host.base is not None else host
    while base.base is not None:
        base = base.base
    offset = host.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    assert view.shape == host.shape
    assert view.strides == host.strides
    assert view.data.ptr - BASE == offset


def raises_like_numpy(ours, theirs):
    """``ours()`` raises what ``theirs()`` raises: the same type and message."""
    with pytest.raises(Exception) as want:
        theirs()
    with pytest.raises(type(want.value)) as got:
        ours()
    assert str(got.value) == str(want.value)


h = np.empty((3, 4), np.float32)
E = [
    (lambda: gp.empty(3, order="X"), lambda: np.empty(3, order="X")),
    (lambda: gp.empty(3, order="K"), lambda: np.empty(3, order="K")),
    (lambda: gp.zeros(3, order="A"), lambda: np.zeros(3, order="A")),
    (lambda: gp.empty_like(fake(), order="Q"), lambda: np.empty_like(h, order="Q")),
    (lambda: fake().ravel("X"), lambda: h.ravel("X")),
    (lambda: fake().copy("X"), lambda: h.copy("X")),
    (lambda: gp.asarray(fake(), dtype="f8", copy=False), lambda: np.asarray(h, dtype="f8", copy=False)),
    (lambda: gp.asarray(fake().T, order="C", copy=False), lambda: np.asarray(h.T, order="C", copy=False)),
    (lambda: gp.asarray([1, 2], copy=False), lambda: np.asarray(np.asarray(h), dtype="f8", copy=False)),
    (lambda: gp.meshgrid(fake((2,)), indexing="x"), lambda: np.meshgrid(h[0], indexing="x")),
    (lambda: gp.diag(fake((2, 2, 2))), lambda: np.diag(np.empty((2, 2, 2)))),
    (lambda: gp.tril(fake(())), lambda: np.tril(np.empty(()))),
    (lambda: gp.triu(fake(())), lambda: np.triu(np.empty(()))),
    (lambda: gp.rot90(fake(), axes=(0, 0)), lambda: np.rot90(h, axes=(0, 0))),
    (lambda: gp.rot90(fake(), axes=(0, 1, 2)), lambda: np.rot90(h, axes=(0, 1, 2))),
    (lambda: gp.rot90(fake(), axes=(0, 5)), lambda: np.rot90(h, axes=(0, 5))),
    (lambda: gp.rot90(fake((3,)), axes=(0, 1)), lambda: np.rot90(h[0], axes=(0, 1))),
    (lambda: gp.tile(fake(), -1), lambda: np.tile(h, -1)),
    (lambda: gp.tile(fake(), 2.5), lambda: np.tile(h, 2.5)),
    (lambda: gp.repeat(fake((3,)), [1, 2]), lambda: np.repeat(h[0, :3], [1, 2])),
    (lambda: gp.repeat(fake((3,)), -1), lambda: np.repeat(h[0, :3], -1)),
    (lambda: gp.repeat(fake((3,)), [1, -2, 1]), lambda: np.repeat(h[0, :3], [1, -2, 1])),
    (lambda: gp.repeat(fake((3,)), "a"), lambda: np.repeat(h[0, :3], "a")),
    (lambda: gp.repeat(fake(), 2, axis=2), lambda: np.repeat(h, 2, axis=2)),
    (lambda: fake().repeat(2, axis=-3), lambda: h.repeat(2, axis=-3)),
    (lambda: gp.roll(fake(), 1, axis=2), lambda: np.roll(h, 1, axis=2)),
    (lambda: gp.pad(fake(), 1.5), lambda: np.pad(h, 1.5)),
    (lambda: gp.pad(fake(), -1), lambda: np.pad(h, -1)),
    (lambda: gp.pad(fake(), ((1, 2), (3, -1))), lambda: np.pad(h, ((1, 2), (3, -1)))),
    (lambda: gp.pad(fake(), ((1, 2), (3, 4), (5, 6))), lambda: np.pad(h, ((1, 2), (3, 4), (5, 6)))),
    (lambda: gp.pad(fake(), 1, mode="nope"), lambda: np.pad(h, 1, mode="nope")),
    (lambda: gp.pad(fake(), 1, mode="edge", constant_values=1),
     lambda: np.pad(h, 1, mode="edge", constant_values=1)),
    (lambda: gp.pad(fake((0, 3)), 1, mode="edge"), lambda: np.pad(h[:0], 1, mode="edge")),
    (lambda: gp.pad(fake(), 1, mode="maximum", stat_length=0),
     lambda: np.pad(h, 1, mode="maximum", stat_length=0)),
    (lambda: gp.resize(fake(), -1), lambda: np.resize(h, -1)),
    (lambda: gp.resize(fake(), (2, -3)), lambda: np.resize(h, (2, -3))),
    (lambda: gp.trim_zeros(fake((3,)), trim="x"), lambda: np.trim_zeros(h[0, :3], trim="x")),
    (lambda: gp.trim_zeros(fake(), axis=2), lambda: np.trim_zeros(h, axis=2)),
    (lambda: gp.delete(fake(), 5, axis=1), lambda: np.delete(h, 5, axis=1)),
    (lambda: gp.delete(fake(), [0, 5], axis=1), lambda: np.delete(h, [0, 5], axis=1)),
    (lambda: gp.delete(fake(), np.array([True, False]), axis=1),
     lambda: np.delete(h, np.array([True, False]), axis=1)),
    (lambda: gp.delete(fake(), 0, axis=2), lambda: np.delete(h, 0, axis=2)),
    (lambda: gp.insert(fake(), 9, 1.0, axis=1), lambda: np.insert(h, 9, 1.0, axis=1)),
    (lambda: gp.insert(fake(), [0, 9], 1.0, axis=1), lambda: np.insert(h, [0, 9], 1.0, axis=1)),
    (lambda: gp.insert(fake(), [[0]], 1.0, axis=1), lambda: np.insert(h, [[0]], 1.0, axis=1)),
    (lambda: gp.insert(fake(), np.ones((2, 2), bool), 1.0), lambda: np.insert(h, np.ones((2, 2), bool), 1.0)),
]


@pytest.mark.parametrize("k", range(len(E)))
def test_errors_match_numpy(k):
    ours, theirs = E[k]
    raises_like_numpy(ours, theirs)


def test_insert_shape_mismatch_message_is_numpys():
    from gpunb._manipulation.edit import _broadcast
    with pytest.raises(ValueError) as want:
        np.insert(h, [0, 1], np.ones((2, 3)), axis=1)
    with pytest.raises(ValueError) as got:
        _broadcast(fake((2, 3)), (3, 2), 2)      # the values against the result's (3, 2) slots
    assert str(got.value) == str(want.value)


def test_host_data_is_refused_where_it_is_data():
    for call in (lambda: gp.tile(np.ones(3), 2), lambda: gp.repeat(np.ones(3), 2),
                 lambda: gp.pad(np.ones(3), 1), lambda: gp.rot90(np.ones((2, 2))),
                 lambda: gp.tril(np.ones((2, 2))), lambda: gp.meshgrid(np.ones(2))):
        with pytest.raises(TypeError, match="host memory"):
            call()
    with pytest.raises(TypeError, match="host values"):
        gp.logspace(fake((2,)), 1)


# -- views, on the CPU -------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4), (1, 5, 2, 3)])
@pytest.mark.parametrize("k", [-3, -1, 0, 1, 2, 3, 6])
@pytest.mark.parametrize("axes", [(0, 1), (1, 0), (-1, 0), (-2, -1)])
def test_rot90_is_numpys_view(shape, k, axes):
    x, host = fake(shape, "int16"), np.empty(shape, np.int16)
    like_numpy(gp.rot90(x, k, axes), np.rot90(host, k, axes))


@pytest.mark.parametrize("shape, k", [((4, 4), 0), ((3, 5), 2), ((3, 5), -1), ((5, 3), -4),
                                      ((3, 5), 7), ((0, 3), 0)])
def test_diag_of_a_matrix_is_numpys_view(shape, k):
    like_numpy(gp.diag(fake(shape, "complex64"), k), np.diag(np.empty(shape, np.complex64), k))


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sizes", [(3,), (3, 4), (2, 3, 4), ()])
def test_meshgrid_views(indexing, sizes):
    xs = [fake((n,)) for n in sizes]
    hs = [np.empty(n, np.float32) for n in sizes]
    for sparse in (False, True):
        got = gp.meshgrid(*xs, indexing=indexing, sparse=sparse, copy=False)
        want = np.meshgrid(*hs, indexing=indexing, sparse=sparse, copy=False)
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.strides == w.strides


@pytest.mark.parametrize("shape, order, axes", [
    ((3, 4), "C", None), ((3, 4), "F", None), ((2, 3, 4), "C", (2, 0, 1)), ((2, 3, 4), "F", (1, 0, 2)),
])
@pytest.mark.parametrize("ravel_order", ["C", "F", "A", "K", None])
def test_ravel_views_follow_numpy(shape, order, axes, ravel_order):
    host = np.empty(shape, np.float64, order=order)
    x = fake(shape, "float64", order=order)
    if axes is not None:
        host, x = host.transpose(axes), x.transpose(axes)
    want = host.ravel(ravel_order)
    if np.shares_memory(want, host):      # NumPy gives a view: so must we, with its strides
        like_numpy(x.ravel(ravel_order), want)


def test_asarray_without_a_copy_is_the_same_view():
    x = fake((3, 4)).T
    assert gp.asarray(x) is x
    assert gp.asarray(x, copy=False, order="F") is x
    assert gp.asarray(x, dtype="float32", copy=None) is x
    assert gp.asfortranarray(x) is x
    assert gp.array(x, copy=False, order="K") is x
    assert gp.array(x, copy=False, ndmin=4).shape == (1, 1, 4, 3)


# -- the roll kernel, modelled on the CPU ------------------------------------------------------

def model_roll(host, shifts):
    """What the roll kernel computes from its plan: every output element's source byte offset
    from the collapsed geometry, looked up among the host view's elements by their offsets."""
    p = rplan.plan(host.shape, host.strides, host.itemsize, shifts)
    ext, st, roll = rplan.collapse(host.shape, host.strides, shifts)
    by_offset = {sum(i * s for i, s in zip(ix, host.strides)): host[ix] for ix in np.ndindex(host.shape)}
    out = []
    for ix in np.ndindex(*ext):
        out.append(by_offset[sum(((i + r) % n) * s for i, r, n, s in zip(ix, roll, ext, st))])
    steps = p.n * (rcg.vector_width(rcg.RollKernel(host.itemsize, p.ndim)) if p.entry == "vec" else 1)
    assert steps == host.size
    return np.array(out, host.dtype).reshape(host.shape)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(1, 5), min_size=1, max_size=4), st.data())
def test_roll_plan_matches_numpy(shape, draw):
    big = [2 * s for s in shape]
    base = np.arange(int(np.prod(big)), dtype=np.int32).reshape(big)
    sl = tuple(slice(None, None, draw.draw(st.sampled_from([1, -1, 2]))) for _ in shape)
    host = base[sl][tuple(slice(0, s) for s in shape)]
    if draw.draw(st.booleans()):
        host = host.T
    shifts = draw.draw(st.lists(st.integers(-7, 7), min_size=host.ndim, max_size=host.ndim))
    want = host
    for ax, s in enumerate(shifts):
        want = np.roll(want, s, ax)
    np.testing.assert_array_equal(model_roll(host, shifts), want)


def test_roll_plan_collapses_and_vectorizes():
    assert rplan.collapse((4, 5, 6), (120, 24, 4), (1, 0, 0)) == ([120], [4], [90])
    assert rplan.collapse((4, 5, 6), (120, 24, 4), (1, 2, 0)) == ([4, 30], [120, 4], [3, 18])
    assert rplan.plan((2**26,), (4,), 4, (12345,)).entry == "vec"
    assert rplan.plan((8192, 8190), (8190 * 4, 4), 4, (1, 1)).entry == "one"
    assert rplan.plan((2**31,), (1,), 1, (3,)).entry == "wide"


def _pad_map(mode, j, n):
    """The kernel's index maps (``pad_map`` in the pad kernel's source), in Python."""
    if mode == "edge":
        return 0 if j < 0 else n - 1
    if mode == "wrap":
        return j % n
    if mode == "reflect":
        if n == 1:
            return 0
        p = 2 * (n - 1)
        t = j % p
        return t if t < n else p - t
    p = 2 * n
    t = j % p
    return t if t < n else p - 1 - t


def model_pad(host, widths, mode, consts, fortran):
    """What the pad kernel computes from its plan: per output element (in the kernel's axis
    order), the source by the per-axis maps, or the constant of the highest-priority axis out
    of range."""
    p = rplan.plan_pad(host.shape, host.strides, host.itemsize, widths, fortran)
    nd = p.ndim
    E = rcg.vector_width(rcg.PadKernel(host.itemsize, nd, mode))
    w = p.words
    if p.wide:
        ext, before, n, st, prio = (list(w[i * nd:(i + 1) * nd]) for i in range(5))
    else:
        iters = list(w[:nd])
        before, n = list(w[3 * nd:4 * nd]), list(w[4 * nd:5 * nd])
        st = [v - (1 << 32) if v >= 1 << 31 else v for v in w[5 * nd:6 * nd]]
        prio = [v - (1 << 32) if v >= 1 << 31 else v for v in w[6 * nd:7 * nd]]
        ext = iters[:-1] + [iters[-1] * (E if p.entry == "vec" else 1)]
    by_offset = {sum(i * s for i, s in zip(ix, host.strides)): host[ix] for ix in np.ndindex(host.shape)}
    out = []
    for ix in np.ndindex(*ext):
        best, fill, off = -1, None, 0
        for d in range(nd):
            j = ix[d] - before[d]
            if not 0 <= j < n[d]:
                if mode == "constant":
                    if prio[d] > best:
                        best, fill = prio[d], consts[p.perm[d]][0 if j < 0 else 1]
                    j = 0
                else:
                    j = _pad_map(mode, j, n[d])
            off += j * st[d]
        out.append(fill if best >= 0 else by_offset[off])
    res = np.array(out, host.dtype).reshape(ext)
    shape = tuple(b + m + a for m, (b, a) in zip(host.shape, widths))
    if fortran:
        return res.reshape([shape[d] for d in reversed(range(host.ndim))]).transpose()
    return res.reshape(shape)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(0, 4), min_size=1, max_size=3), st.data())
def test_pad_plan_matches_numpy(shape, draw):
    mode = draw.draw(st.sampled_from(["constant", "edge", "wrap", "reflect", "symmetric"]))
    if mode != "constant":
        shape = [max(1, s) for s in shape]
    big = [2 * s + 1 for s in shape]
    base = np.arange(int(np.prod(big)), dtype=np.int16).reshape(big)
    sl = tuple(slice(None, None, draw.draw(st.sampled_from([1, -1, 2]))) for _ in shape)
    host = base[sl][tuple(slice(0, s) for s in shape)]
    if draw.draw(st.booleans()):
        host = np.asfortranarray(host)
    widths = [tuple(draw.draw(st.lists(st.integers(0, 9), min_size=2, max_size=2))) for _ in shape]
    consts = np.array(draw.draw(st.lists(st.integers(-99, 99), min_size=2 * len(shape),
                                         max_size=2 * len(shape))), np.int16).reshape(-1, 2)
    fortran = host.ndim > 1 and host.flags.f_contiguous and not host.flags.c_contiguous
    want = np.pad(host, widths, mode, **({"constant_values": consts.tolist()} if mode == "constant" else {}))
    if want.size == 0:
        return        # no launch: run.pad returns the empty array before planning
    np.testing.assert_array_equal(model_pad(host, widths, mode, consts, fortran), want)


@pytest.mark.parametrize("kernel", [rcg.RollKernel(1, 1), rcg.RollKernel(2, 2), rcg.RollKernel(4, 3),
                                    rcg.RollKernel(8, 1), rcg.RollKernel(16, 6), rcg.RepeatIndexKernel(),
                                    rcg.RepeatKernel(1), rcg.RepeatKernel(2), rcg.RepeatKernel(4),
                                    rcg.RepeatKernel(8)]
                         + [rcg.PadKernel(s, d, m) for s, d in ((1, 3), (4, 2), (16, 1))
                            for m in ("constant", "edge", "wrap", "reflect", "symmetric")])
def test_rearrange_kernels_compile(kernel):
    src = rcg.render(kernel)
    nvrtc_compile(src, (), "sm_90")
    for entry in rcg.entry_points(kernel):
        assert f"void {entry}(" in src


def test_reversed_rows_entry_compiles_and_is_planned():
    from gpunb.core.kernels.elementwise import codegen as ecg
    from gpunb.core.kernels.elementwise import ir as eir
    from gpunb.core.kernels.elementwise.plan import _row_vectors
    src = ecg.render(eir.copy_kernel("float32", "float32", "array", "strided", 1))
    nvrtc_compile(src, (), "sm_90")
    assert "bcast & 65536u" in src

    class A:
        def __init__(self, ptr, itemsize):
            self.data, self.itemsize = MemoryPointer(ptr), itemsize
    # flip(x).copy() of 1024 float32: the source runs backwards from its last element
    assert _row_vectors((1024,), [(-4,), (4,)], [A(0x1000 + 1023 * 4, 4), A(0x2000, 4)], 1, 4) == 1 << 16
    assert _row_vectors((1024,), [(-4,), (4,)], [A(0x1000 + 1022 * 4, 4), A(0x2000, 4)], 1, 4) is None
    assert _row_vectors((1024,), [(8,), (4,)], [A(0x1000, 4), A(0x2000, 4)], 1, 4) is None
    assert _row_vectors((8, 1024), [(4096, 4), (4096, 4)], [A(0x1000, 4), A(0x2000, 4)], 1, 4) == 0


def test_tril_triu_are_one_fused_kernel():
    from gpunb._creation import matrices
    for f in (matrices._keep_lower, matrices._keep_upper):
        ins = f.inspect(np.ones((2, 3, 4), np.float32), np.arange(3, dtype=np.int32).reshape(3, 1),
                        np.arange(4, dtype=np.int32), np.int32(-1), np.float32(0), arch="sm_90")
        assert ins.source.count("__global__") >= 1 and "?" in ins.source


# -- GPU: values against NumPy -----------------------------------------------------------------

def rand(shape, dtype):
    return data.rand(shape, dtype, rng=rng, scale=3, bound=100)


def on_gpu(host, layout):
    """``host`` as a GPU array in ``layout``: 'C', 'F', 'T' (a transposed view), 'neg' (a view
    with every axis reversed) or 'step' (every other element of a bigger array)."""
    if layout == "C" or host.ndim == 0:
        return gp.asarray(host)
    if layout == "F":
        return gp.asfortranarray(gp.asarray(host))
    if layout == "T":
        return gp.asarray(np.ascontiguousarray(host.T)).T
    if layout == "neg":
        return gp.flip(gp.asarray(np.ascontiguousarray(np.flip(host))))
    big = np.zeros([2 * s for s in host.shape], host.dtype)
    big[tuple(slice(None, None, 2) for _ in host.shape)] = host
    return gp.asarray(big)[tuple(slice(None, None, 2) for _ in host.shape)]


LAYOUTS = ["C", "F", "T", "neg", "step"]
shapes = st.lists(st.integers(0, 5), min_size=0, max_size=6).filter(lambda s: np.prod(s) <= 2000)


@gpu
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shapes, st.sampled_from(SUPPORTED), st.sampled_from(LAYOUTS), st.data())
def test_roll_tile_repeat_rot90_match_numpy(shape, dt, layout, draw):
    host = rand(tuple(shape), dt)
    x = on_gpu(host, layout)
    same(x, host)
    nd = host.ndim
    if nd:
        axes = draw.draw(st.lists(st.integers(-nd, nd - 1), min_size=1, max_size=3))
        shifts = draw.draw(st.lists(st.integers(-9, 9), min_size=len(axes), max_size=len(axes)))
        same(gp.roll(x, shifts, axis=tuple(axes)), np.roll(host, shifts, axis=tuple(axes)))
        ax = draw.draw(st.integers(-nd, nd - 1))
        same(gp.repeat(x, 3, axis=ax), np.repeat(host, 3, axis=ax))
        counts = draw.draw(st.lists(st.integers(0, 3), min_size=host.shape[ax], max_size=host.shape[ax]))
        same(gp.repeat(x, counts, axis=ax), np.repeat(host, counts, axis=ax))
        same(gp.repeat(x, gp.asarray(np.array(counts, np.int64)), axis=ax),
             np.repeat(host, counts, axis=ax))
    same(gp.roll(x, 5), np.roll(host, 5))
    same(gp.repeat(x, 2), np.repeat(host, 2))
    same(x.repeat(0), host.repeat(0))
    reps = tuple(draw.draw(st.lists(st.integers(0, 3), min_size=0, max_size=4)))
    same(gp.tile(x, reps), np.tile(host, reps))
    if nd >= 2:
        k = draw.draw(st.integers(-5, 5))
        same(gp.rot90(x, k, axes=(nd - 1, 0)), np.rot90(host, k, axes=(nd - 1, 0)))


@gpu
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(0, 4), min_size=0, max_size=4).filter(lambda s: np.prod(s) <= 500),
       st.sampled_from(SUPPORTED), st.sampled_from(LAYOUTS), st.data())
def test_pad_matches_numpy(shape, dt, layout, draw):
    host = rand(tuple(shape), dt)
    x = on_gpu(host, layout)
    nd = host.ndim
    width = draw.draw(st.one_of(
        st.integers(0, 6),
        st.tuples(st.integers(0, 6), st.integers(0, 6)),
        st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=nd, max_size=nd)))
    modes = ["constant", "edge", "wrap", "reflect", "symmetric", "linear_ramp", "maximum", "minimum", "mean",
             "median"]
    mode = draw.draw(st.sampled_from(modes))
    kw = {}
    if mode == "constant":
        kw["constant_values"] = draw.draw(st.sampled_from([0, 7, (1, 2), ((1, 2),) * max(nd, 1)]))
    if mode in ("reflect", "symmetric"):
        kw["reflect_type"] = draw.draw(st.sampled_from(["even", "odd"]))
    if mode == "linear_ramp":
        # (a negative ramp into an unsigned dtype is a float-to-unsigned cast out of range:
        # undefined in C; NumPy wraps on x86, the GPU saturates)
        kw["end_values"] = draw.draw(st.sampled_from([0, 5, (3, 2) if np.dtype(dt).kind == "u" else (3, -2)]))
    if mode in ("maximum", "minimum", "mean", "median"):
        kw["stat_length"] = draw.draw(st.sampled_from([None, 1, 2, (1, 3)]))
    if mode in ("mean", "median", "linear_ramp") and np.dtype(dt).kind == "b":
        return        # NumPy's arithmetic on bool here raises or differs by its own rules
    try:
        with np.errstate(all="ignore"):
            want = np.pad(host, width, mode, **kw)
    except Exception as e:
        with pytest.raises(type(e)):
            gp.pad(x, width, mode, **kw)
        return
    got = gp.pad(x, width, mode, **kw)
    if mode in ("mean", "median", "linear_ramp") and np.dtype(dt).kind in "fc":
        # summed in another order: a mean near zero of mixed signs is off by a few roundings
        # of the values' size, not of its own
        scale = float(np.abs(host).max()) if host.size else 1.0
        np.testing.assert_allclose(gp.asnumpy(got), want, rtol=2e-3 if dt == np.float16 else 1e-6,
                                   atol=8 * float(np.finfo(dt).eps) * max(scale, 1.0))
        assert got.dtype == want.dtype
    else:
        same(got, want)


@gpu
@pytest.mark.parametrize("dt", SUPPORTED)
def test_pad_large_and_fortran(dt):
    host = rand((37, 29), dt)
    x = gp.asfortranarray(gp.asarray(host))
    got = gp.pad(x, ((3, 50), (40, 2)), "reflect")
    same(got, np.pad(host, ((3, 50), (40, 2)), "reflect"))
    assert got.flags.f_contiguous
    same(gp.pad(x, ((3, 50), (40, 2)), "wrap"), np.pad(host, ((3, 50), (40, 2)), "wrap"))
    same(gp.pad(x, {1: (2, 3)}), np.pad(host, {1: (2, 3)}))


@gpu
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shapes, st.sampled_from(SUPPORTED), st.sampled_from(LAYOUTS), st.data())
def test_edit_functions_match_numpy(shape, dt, layout, draw):
    host = rand(tuple(shape), dt)
    if draw.draw(st.booleans()) and host.size:
        host[tuple(slice(0, 1) for _ in shape)] = 0       # some zeros to trim
    x = on_gpu(host, layout)
    new = tuple(draw.draw(st.lists(st.integers(0, 6), min_size=0, max_size=3)))
    same(gp.resize(x, new), np.resize(host, new))
    same(gp.trim_zeros(x), np.trim_zeros(host)) if host.ndim else None
    for trim in ("f", "b", "fb"):
        if host.ndim:
            same(gp.trim_zeros(x, trim, axis=-1), np.trim_zeros(host, trim, axis=-1))
    nd = host.ndim
    axis = None if nd == 0 or draw.draw(st.booleans()) else draw.draw(st.integers(-nd, nd - 1))
    n = host.size if axis is None else host.shape[axis]
    if n:
        objs = [draw.draw(st.integers(-n, n - 1)), slice(None, None, 2), slice(n - 1, 0, -3),
                sorted(set(draw.draw(st.lists(st.integers(0, n - 1), max_size=4)))),
                np.arange(n) % 3 == 0]
        for obj in objs:
            same(gp.delete(x, obj, axis), np.delete(host, obj, axis))
        for obj in [draw.draw(st.integers(-n, n)), [0, n, 1, 1], slice(0, n, 2)]:
            same(gp.insert(x, obj, 7, axis), np.insert(host, obj, 7, axis))
        mask = np.arange(n) % 2 == 1
        same(gp.delete(x, gp.asarray(mask), axis), np.delete(host, mask, axis))
        where = np.array([0, n - 1, 0], np.int64)
        same(gp.delete(x, gp.asarray(where), axis), np.delete(host, where, axis))
    if host.size:
        same(gp.insert(x, 1, gp.asarray(np.array([3, 4], dt)), None),
             np.insert(host, 1, np.array([3, 4], dt), None))


@gpu
@pytest.mark.parametrize("dt", SUPPORTED)
def test_creation_matrices_and_grids_match_numpy(dt):
    for n, m, k in [(4, 4, 0), (3, 5, 1), (5, 3, -2), (0, 3, 0), (1, 1, 9)]:
        same(gp.tri(n, m, k, dtype=dt), np.tri(n, m, k, dtype=dt))
    for shape in [(4,), (3, 5), (2, 3, 4), (2, 1, 3, 4), (0, 3), (3, 0)]:
        host = rand(shape, dt)
        for layout in LAYOUTS:
            x = on_gpu(host, layout)
            for k in (-2, -1, 0, 1, 3):
                same(gp.tril(x, k), np.tril(host, k))
                same(gp.triu(x, k), np.triu(host, k))
    for v in [rand((4,), dt), rand((0,), dt), rand((3, 3), dt)]:
        for k in (-1, 0, 2):
            same(gp.diag(gp.asarray(v), k), np.diag(v, k))
            same(gp.diagflat(gp.asarray(v), k), np.diagflat(v, k))
    xs = [rand((n,), dt) for n in (3, 4, 2)]
    for indexing in ("xy", "ij"):
        for sparse in (False, True):
            for got, want in zip(gp.meshgrid(*map(gp.asarray, xs), indexing=indexing, sparse=sparse),
                                 np.meshgrid(*xs, indexing=indexing, sparse=sparse)):
                same(got, want)
    for dims in [(2, 3), (4,), (), (2, 0, 3)]:
        same(gp.indices(dims, dtype=dt if np.dtype(dt).kind in "iuf" else int),
             np.indices(dims, dtype=dt if np.dtype(dt).kind in "iuf" else int))
        for got, want in zip(gp.indices(dims, sparse=True), np.indices(dims, sparse=True)):
            same(got, want)


@gpu
def test_ranges_match_numpy():
    for args, kw in [((0, 3), {}), ((1, 2), {"num": 7, "base": 2.0, "endpoint": False}),
                     (([0, 1], [2, 5]), {"num": 4, "axis": 1}), ((0, 3), {"dtype": np.float32})]:
        same(gp.logspace(*args, **kw), np.logspace(*args, **kw))
    for args, kw in [((1, 1000), {"num": 4}), ((-1, -1000), {"num": 5}), ((1j, 1000j), {"num": 4}),
                     ((1 + 1j, -8 - 8j), {"num": 6, "endpoint": False}), (([1, 2], [10, 20]), {"num": 3, "axis": -1})]:
        same(gp.geomspace(*args, **kw), np.geomspace(*args, **kw))


@gpu
@pytest.mark.parametrize("dt", SUPPORTED)
def test_orders_match_numpy(dt):
    host = rand((3, 4, 5), dt)
    views = {"C": host, "F": np.asfortranarray(host), "T": host.transpose(2, 0, 1),
             "neg": host[::-1, :, ::-1], "step": host[::2, 1:, ::2]}
    for name, h in views.items():
        x = gp.asarray(np.ascontiguousarray(h))
        if name == "F":
            x = gp.asfortranarray(x)
        elif name == "T":
            x = gp.asarray(np.ascontiguousarray(host)).transpose(2, 0, 1)
        elif name == "neg":
            x = gp.asarray(np.ascontiguousarray(host))[::-1, :, ::-1]
        elif name == "step":
            x = gp.asarray(np.ascontiguousarray(host))[::2, 1:, ::2]
        for order in ("C", "F", "A", "K"):
            same(x.ravel(order), h.ravel(order))
            same(x.flatten(order), h.flatten(order))
            c, w = x.copy(order), h.copy(order)
            same(c, w)
            assert c.flags.c_contiguous == w.flags.c_contiguous
            assert c.flags.f_contiguous == w.flags.f_contiguous
            assert sorted(c.strides) == sorted(w.strides), (name, order)
            for f in ("empty_like", "zeros_like", "ones_like"):
                got, want = getattr(gp, f)(x, order=order), getattr(np, f)(h, order=order)
                assert got.strides == want.strides, (f, name, order)
                if f != "empty_like":
                    same(got, want)
            got = gp.asarray(x, order=order if order != "K" else None)
            same(got, np.asarray(h, order=order if order != "K" else None))
        f = gp.asfortranarray(x)
        assert f.flags.f_contiguous
        same(f, np.asfortranarray(h))
        same(gp.copy(x, order="K"), np.copy(h, order="K"))
        assert gp.copy(x, order="K").strides == np.copy(h, order="K").strides
    for order in ("C", "F"):
        for f, g in [(gp.zeros, np.zeros), (gp.ones, np.ones), (gp.empty, np.empty)]:
            assert f((2, 3, 4), dt, order=order).strides == g((2, 3, 4), dt, order=order).strides
        assert gp.full((2, 3), 5, dt, order=order).strides == np.full((2, 3), 5, dt, order=order).strides
        got = gp.array(host, order=order)
        assert got.strides == np.array(host, order=order).strides
        same(got, host)


@gpu
@pytest.mark.parametrize("dt", SUPPORTED)
@pytest.mark.parametrize("n", [1, 7, 1024, 4099])
def test_flip_copies_match_numpy(dt, n):
    host = rand((n,), dt)
    x = gp.asarray(host)
    same(gp.flip(x).copy(), np.flip(host).copy())
    same(gp.flip(x[1:]).copy(), np.flip(host[1:]).copy())
    m = rand((3, n), dt)
    y = gp.asarray(m)
    same(gp.flip(y, 1).copy(), np.flip(m, 1).copy())
    same(gp.flip(y).copy(), np.flip(m).copy())
    same(gp.flip(y, 1) + y, np.flip(m, 1) + m) if np.dtype(dt).kind != "b" else None


@gpu
def test_asarray_copy_semantics():
    x = gp.asarray(np.arange(12.0).reshape(3, 4))
    assert gp.asarray(x) is x
    c = gp.asarray(x, copy=True)
    assert c is not x and c.data.ptr != x.data.ptr
    same(c, np.arange(12.0).reshape(3, 4))
    f = gp.asarray(x, order="F")
    assert f.flags.f_contiguous and f.data.ptr != x.data.ptr
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        gp.asarray(x.T, order="C", copy=False)
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        gp.asarray([1, 2], copy=False)


@gpu
@pytest.mark.parametrize("dtype", ["bool", "int8", "float16", "float32", "int64", "complex64", "complex128"])
def test_repeat_small_counts_along_the_last_axis(dtype):
    # counts whose r elements are under 16 bytes take the vector-store repeat kernel; sizes
    # that are not a multiple of the vector, 2-d rows and axis=None flattening included
    for shape in ((1,), (7,), (1001,), (3, 5), (2, 3, 4)):
        host = rand(shape, dtype)
        x = gp.asarray(host)
        for count in (2, 3, 5):
            same(gp.repeat(x, count, axis=-1), np.repeat(host, count, axis=-1))
            same(gp.repeat(x, count), np.repeat(host, count))
