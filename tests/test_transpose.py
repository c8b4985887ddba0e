"""The tiled transpose copy: its kernels compiled by real NVRTC, its applicability rule and
index arithmetic checked against NumPy on the CPU, and its results on the GPU."""

import collections
import types
import warnings

import numpy as np
import pytest

import gpunb
from gpunb.core.kernels import loader
from gpunb.core.kernels.transpose import plan as tplan
from gpunb.core.kernels.transpose import run as tr
from gpunb.core.kernels.transpose import codegen as cg
from gpunb.core.build.compiler import compile as nvrtc_compile
from gpunb.core.build.cubin import read_kernels
from gpunb.core.dtypes import SUPPORTED
from tests import data

ARCH = "sm_90"
CASTS = [("float64", "float32"), ("int32", "float64"), ("float32", "float16"),
         ("complex64", "complex128"), ("bool", "int8"), ("float16", "float64"),
         ("complex128", "float16"), ("float64", "bool"), ("complex64", "float32"),
         ("uint8", "complex128"), ("int64", "int8")]
PAIRS = [(d, d) for d in SUPPORTED] + [(np.dtype(a), np.dtype(b)) for a, b in CASTS]


# -- codegen: every kernel compiles --------------------------------------------------------------

def test_every_dtype_pair_compiles():
    prelude = cg.prelude()
    bodies = [cg.source(cg.kernel_name(s, d), s, d) for s, d in PAIRS]
    assert all(b.startswith(prelude) for b in bodies)
    cubin = nvrtc_compile(prelude + "\n".join(b[len(prelude):] for b in bodies), (), ARCH)
    infos = read_kernels(cubin)
    for s, d in PAIRS:
        info = infos[cg.kernel_name(s, d)]
        assert info.param_sizes == (8, 8, 8 * cg.ARG_WORDS)
        assert info.shared_bytes == cg.shared_bytes(s, d)
        assert info.shared_bytes <= 48 * 1024          # static shared memory limit
        assert info.local_bytes == 0, f"{s}->{d} spills to local memory"


def test_one_kernel_compiles_alone():
    src = cg.source("t", "float32", "float32")
    assert "t" in read_kernels(nvrtc_compile(src, (), ARCH))


def test_tile_shapes():
    assert cg.tile_shape("float32", "float32") == (64, 64)
    assert cg.tile_shape("int8", "int8") == (64, 64)
    assert cg.tile_shape("complex128", "complex128") == (32, 32)
    assert cg.tile_shape("float32", "complex128") == (32, 32)
    for s, d in PAIRS:
        ti, tj = cg.tile_shape(s, d)
        assert ti % cg.BLOCK_X == 0 and tj % cg.BLOCK_Y == 0 and ti % cg.BLOCK_Y == 0


def test_same_dtype_copies_the_bits():
    src = cg.source("t", "float16", "float16")
    assert "tile[jj][ii] = held[kr][ki];" in src and "gpunb::store" not in src.split('extern "C"')[1]


def test_cast_is_the_elementwise_copy_cast():
    src = cg.source("t", "float64", "float16")
    # float64 -> float16 rounds once (to_half(double)), as the elementwise copy kernel does
    assert "gpunb::load(gpunb::store<gpunb::half>(v0))" in src
    assert "tile[jj][ii] = gpunb::store<gpunb::half>(v1);" in src


# -- plan: the applicability rule on NumPy-made layouts ------------------------------------------

def _plan(src, dst):
    return tplan.plan(dst.shape, src.strides, dst.strides, src.itemsize, dst.itemsize)


def _base(n, dtype):
    return np.arange(n).astype(dtype)


def _addr(a):
    return a.__array_interface__["data"][0]


def _run_kernel(words, src_flat, so0, dst_flat, do0):
    """What the kernel does, from the argument words it receives, on flat buffers (``so0`` and
    ``do0`` index the elements its pointers point at): the tile walk, the batch walk and the
    edge guards, with NumPy."""
    I, J, src_j, dst_i, tiles_i, tiles_j, ntiles = words[:7]
    nb = cg.MAX_BATCH_DIMS
    bshape, sb, db = words[7:7 + nb], words[7 + nb:7 + 2 * nb], words[7 + 2 * nb:]
    ti, tj = cg.tile_shape(src_flat.dtype, dst_flat.dtype)
    for t in range(ntiles):
        rest = t // tiles_j
        tile_j = t - rest * tiles_j
        b = rest // tiles_i
        tile_i = rest - b * tiles_i
        so, do, r = 0, 0, b
        for d in range(nb - 1, -1, -1):
            q = r // bshape[d]
            idx = r - q * bshape[d]
            r = q
            so += idx * sb[d]
            do += idx * db[d]
        assert r == 0
        i0, j0 = tile_i * ti, tile_j * tj
        ni, nj = min(ti, I - i0), min(tj, J - j0)
        ii, jj = np.arange(ni)[:, None], np.arange(nj)[None, :]
        s_idx = so0 + so + i0 + j0 * src_j + ii + jj * src_j
        d_idx = do0 + do + i0 * dst_i + j0 + ii * dst_i + jj
        assert s_idx.min() >= 0 and d_idx.min() >= 0       # no silent wrap-around
        dst_flat[d_idx] = src_flat[s_idx].astype(dst_flat.dtype)


def _emulate(p, src, src_base, dst, dst_base):
    """The kernel run on the flat buffers under ``src`` and ``dst`` as ``try_copy`` would."""
    def origin(view, base, offset):
        byte = _addr(view) - _addr(base) + offset
        assert byte % view.itemsize == 0
        return byte // view.itemsize

    _run_kernel(tplan.arguments(p, src.dtype, dst.dtype), src_base, origin(src, src_base, p.src_offset),
                dst_base, origin(dst, dst_base, p.dst_offset))


def _check(src, src_base, dst, dst_base, applies=True):
    """``plan`` applies (or not) and, emulated, copies exactly what NumPy copies."""
    p = _plan(src, dst)
    assert (p is not None) == applies, p
    if p is None:
        return None
    expect = dst_base.copy()
    off = dst.__array_interface__["data"][0] - dst_base.__array_interface__["data"][0]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        np.ndarray(dst.shape, dst.dtype, buffer=expect, offset=off,
                   strides=dst.strides)[...] = src.astype(dst.dtype)
        _emulate(p, src, src_base, dst, dst_base)
    np.testing.assert_array_equal(dst_base, expect)
    return p


def _dst_for(src, dtype=None, transposed=None):
    """A fresh destination for ``src``: C-contiguous, or a transposed view (``axes``) of a
    C-contiguous buffer. Returns (dst view, its flat base)."""
    dtype = np.dtype(dtype or src.dtype)
    base = np.full(src.size + 3, -1).astype(dtype)
    if transposed is None:
        return base[:src.size].reshape(src.shape), base
    inv = np.argsort(transposed)
    shape = tuple(src.shape[a] for a in inv)
    return base[:src.size].reshape(shape).transpose(transposed), base


def test_2d_transpose():
    base = _base(100 * 70, "float32")
    a = base.reshape(100, 70)
    dst, dbase = _dst_for(a.T)
    p = _check(a.T, base, dst, dbase)
    assert (p.I, p.J, p.src_j, p.dst_i, p.batch) == (70, 100, 70, 100, (1,))


def test_2d_destination_transposed():
    base = _base(100 * 70, "float64")
    a = base.reshape(100, 70)                     # contiguous source
    dst, dbase = _dst_for(a, transposed=(1, 0))  # dst = b.T with b of shape (70, 100)
    p = _check(a, base, dst, dbase)
    assert (p.I, p.J) == (70, 100)


@pytest.mark.parametrize("perm,applies", [((0, 2, 1), True), ((2, 1, 0), True), ((1, 0, 2), False),
                                          ((1, 2, 0), True), ((2, 0, 1), True), ((0, 1, 2), False)])
def test_3d_permutations(perm, applies):
    base = _base(20 * 40 * 50, "int32")
    a = base.reshape(20, 40, 50)
    src = a.transpose(perm)
    dst, dbase = _dst_for(src)
    _check(src, base, dst, dbase, applies)
    # and the other way round: a contiguous source into a permuted destination
    dst, dbase = _dst_for(a, transposed=perm)
    _check(a, base, dst, dbase, applies)


@pytest.mark.parametrize("index", [
    (slice(None, None, -1),), (slice(None), slice(None, None, -1)),
    (slice(None, None, -1), slice(None, None, -1)), (slice(3, 90, 2),),
    (slice(1, -1), slice(2, -3)), (slice(None, None, -3), slice(None, 50))])
def test_sliced_and_reversed_sources(index):
    base = _base(100 * 70, "float32")
    a = base.reshape(100, 70)[index]
    dst, dbase = _dst_for(a.T)
    _check(a.T, base, dst, dbase)


def test_reversed_unit_axis_is_turned_around():
    base = _base(100 * 70, "int16")
    src = base.reshape(100, 70)[:, ::-1].T         # unit stride -2 along i
    dst, dbase = _dst_for(src)
    p = _check(src, base, dst, dbase)
    assert p.src_offset == 69 * -2 and p.dst_offset == 69 * 100 * 2


def test_3d_sliced_permutations():
    base = _base(36 * 50 * 40, "float64")
    a = base.reshape(36, 50, 40)
    for src in (a[::2, 1:, ::-1].transpose(0, 2, 1), a[::-1, :, 3:].transpose(2, 1, 0),
                a[1:20, ::-1, ::-1].transpose(1, 2, 0)):
        _check(src, base, *_dst_for(src))
    src = a[:4, ::-1, ::-1].transpose(1, 2, 0)     # j has 4 elements: left to elementwise
    _check(src, base, *_dst_for(src), applies=False)


def test_casts():
    for s, d in CASTS:
        base = _base(40 * 30, s)
        a = base.reshape(40, 30)
        dst, dbase = _dst_for(a.T, d)
        _check(a.T, base, dst, dbase)


@pytest.mark.parametrize("ndim", [4, 5, 6])
def test_batches_of_several_axes(ndim):
    rng = np.random.default_rng(ndim)
    shape = (3, 2, 4, 2, 5, 3)[:ndim - 2] + (20, 17)
    base = _base(int(np.prod(shape)), "float32")
    a = base.reshape(shape)
    for _ in range(20):
        perm = tuple(rng.permutation(ndim))
        src = a.transpose(perm)
        dst, dbase = _dst_for(src)
        p = _plan(src, dst)
        if p is not None:
            _check(src, base, dst, dbase)
            assert len(p.batch) <= cg.MAX_BATCH_DIMS


def test_random_layouts_against_numpy():
    rng = np.random.default_rng(7)
    applied = 0
    for _ in range(150):
        ndim = int(rng.integers(2, 5))
        shape = tuple(int(n) for n in rng.integers(1, 40, ndim))
        base = _base(int(np.prod(shape)), "int32")
        a = base.reshape(shape)
        index = tuple(slice(None, None, int(rng.choice([1, 1, 2, -1, -2]))) for _ in shape)
        src = a[index].transpose(tuple(rng.permutation(ndim)))
        dst, dbase = _dst_for(src)
        p = _plan(src, dst)
        if p is not None:
            applied += 1
            _check(src, base, dst, dbase)
    assert applied > 10


def test_contiguous_copies_are_left_to_the_elementwise_kernel():
    base = _base(100 * 70, "float32")
    a = base.reshape(100, 70)
    dst, dbase = _dst_for(a)
    _check(a, base, dst, dbase, applies=False)
    dst, dbase = _dst_for(a.T, transposed=(1, 0))     # F-order copy of a.T: same layout
    _check(a.T, base, dst, dbase, applies=False)
    src = a[:, ::2]                                   # no unit-stride axis in the source
    dst, dbase = _dst_for(src)
    _check(src, base, dst, dbase, applies=False)
    src = a[10:50]                                    # a contiguous block
    dst, dbase = _dst_for(src)
    _check(src, base, dst, dbase, applies=False)


def test_broadcast_sources_are_rejected():
    x = np.arange(70, dtype=np.float32)
    src = np.broadcast_to(x[:, None], (70, 100))
    dst = np.empty((70, 100), np.float32)
    assert _plan(src, dst) is None
    src = np.broadcast_to(np.arange(70 * 100, dtype=np.float32).reshape(70, 100).T[None], (3, 100, 70))
    dst = np.empty((3, 100, 70), np.float32)
    assert _plan(src, dst) is None


def test_narrow_and_empty_shapes():
    for shape in [(1000, 3), (3, 1000), (1, 1), (1, 500), (15, 200)]:
        a = _base(shape[0] * shape[1], "float32").reshape(shape)
        assert _plan(a.T, np.empty(a.T.shape, np.float32)) is None, shape
    a = np.empty((0, 50), np.float32)
    assert _plan(a.T, np.empty((50, 0), np.float32)) is None
    base = _base(16 * 300, "float32")
    a = base.reshape(16, 300)
    _check(a.T, base, *_dst_for(a.T))      # MIN_EXTENT itself is enough


def test_narrow_shapes_plan_when_allowed(monkeypatch):
    monkeypatch.setattr(tplan, "MIN_EXTENT", 1)
    for shape in [(1000, 3), (3, 1000), (2, 2), (33, 65)]:
        base = _base(shape[0] * shape[1], "float64")
        a = base.reshape(shape)
        dst, dbase = _dst_for(a.T)
        _check(a.T, base, dst, dbase)


def test_misaligned_strides_are_rejected():
    # byte strides that are not a multiple of the itemsize (possible through interop)
    assert tplan.plan((40, 40), (4, 162), (160, 4), 4, 4) is None
    assert tplan.plan((40, 40), (4, 160), (160, 4), 4, 4) is not None


def test_self_overlapping_layouts_are_rejected():
    # two unit-stride axes in one array: an overlapping (as_strided) view
    assert tplan.plan((40, 40, 40), (4, 4, 160), (6400, 160, 4), 4, 4) is None
    assert tplan.plan((40, 40, 40), (6400, 4, 160), (4, 4, 160), 4, 4) is None


def test_too_many_batch_axes_are_rejected():
    a = _base(3 * 3 * 3 * 3 * 20 * 20, "float32").reshape(3, 3, 3, 3, 20, 20)
    src = a.transpose(1, 3, 0, 2, 5, 4)     # four batch axes, no two of which merge
    assert _plan(src, np.empty(src.shape, np.float32)) is None
    src = a.transpose(0, 1, 3, 2, 5, 4)     # four batch axes, merging into two
    p = _check(src, a.base, *_dst_for(src))
    assert p.batch == (9, 3, 3)


# -- try_copy on the CPU: the launch it makes, run by the emulator on host memory ---------------

class _HostArray:
    """What try_copy reads of a gpunb ndarray, over a NumPy array in host memory."""

    def __init__(self, a):
        self.shape, self.strides, self.itemsize = a.shape, a.strides, a.itemsize
        self.dtype, self.size = a.dtype, a.size
        self.data = types.SimpleNamespace(ptr=_addr(a))


@pytest.fixture
def host_launches(monkeypatch):
    """try_copy with its kernel replaced by the emulator: returns the list of launches made
    (grid, block, shared bytes) and a function registering the flat buffers pointers fall in."""
    buffers, launches = [], []

    def flat_of(ptr):
        for b in buffers:
            if _addr(b) <= ptr < _addr(b) + b.nbytes:
                assert (ptr - _addr(b)) % b.itemsize == 0
                return b, (ptr - _addr(b)) // b.itemsize
        raise AssertionError("pointer outside every buffer")

    def execute(steps, call_params, temp_bytes=0, stream=None):
        (step,) = steps
        assert step.function == "kernel"
        launches.append((step.grid, step.block, step.shared_mem))
        params = [call_params[p] if isinstance(p, int) else p for p in step.params]
        src_flat, so0 = flat_of(params[0].value)
        dst_flat, do0 = flat_of(params[1].value)
        assert len(params[2]) == cg.ARG_WORDS
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            _run_kernel(list(params[2]), src_flat, so0, dst_flat, do0)

    # the loaded kernel: any entry point, 7 resident blocks on a 1-SM device
    fake = types.SimpleNamespace(functions=collections.defaultdict(lambda: "kernel"),
                                 occupancy=collections.defaultdict(lambda: 7), sm_count=1)
    monkeypatch.setattr(loader, "get", lambda family, key, make: fake)
    monkeypatch.setattr(tr, "execute", execute)
    return launches, buffers.append


@pytest.mark.parametrize("case", ["2d", "reversed", "dst_transposed", "cast", "batch"])
def test_try_copy_launches_what_numpy_computes(case, host_launches):
    launches, register = host_launches
    sbase = _base(6 * 80 * 90, "float32")
    a = sbase.reshape(6, 80, 90)
    ddtype = "float16" if case == "cast" else "float32"
    src = {"2d": a[0].T, "reversed": a[1, ::-2, ::-1].T, "dst_transposed": a[2],
           "cast": a[3, 5:].T, "batch": a[:, ::-1].transpose(0, 2, 1)}[case]
    dst, dbase = _dst_for(src, ddtype, transposed=(1, 0) if case == "dst_transposed" else None)
    register(sbase)
    register(dbase)
    before = tr.launch_count
    assert tr.try_copy(_HostArray(src), _HostArray(dst))
    assert tr.launch_count == before + 1
    np.testing.assert_array_equal(dst, src.astype(ddtype))
    assert dbase[src.size:].tolist() == [-1, -1, -1]       # nothing written past the end
    ((grid, block, shared),) = launches
    ti, tj = cg.tile_shape(src.dtype, dst.dtype)
    p = _plan(src, dst)
    ntiles = int(np.prod(p.batch)) * -(-p.I // ti) * -(-p.J // tj)
    assert grid == (min(ntiles, 7),) and block == (cg.BLOCK_X, cg.BLOCK_Y) and shared == 0


def test_try_copy_declines_without_launching(host_launches):
    launches, register = host_launches
    a = _base(40 * 50, "float32").reshape(40, 50)
    assert not tr.try_copy(_HostArray(a), _HostArray(np.empty_like(a)))               # contiguous
    b = np.broadcast_to(a[:1], (40, 50))
    assert not tr.try_copy(_HostArray(b.T), _HostArray(np.empty((50, 40), np.float32)))
    raw = np.zeros(4 * 40 * 50 + 4, np.uint8)
    odd = raw[2:2 + 4 * 40 * 50].view(np.float32).reshape(40, 50)                     # misaligned
    assert _plan(odd.T, np.empty((50, 40), np.float32)) is not None
    assert not tr.try_copy(_HostArray(odd.T), _HostArray(np.empty((50, 40), np.float32)))
    empty = np.empty((0, 50), np.float32)
    assert tr.try_copy(_HostArray(empty.T), _HostArray(np.empty((50, 0), np.float32)))
    assert launches == []
    with pytest.raises(ValueError):
        tr.try_copy(_HostArray(a), _HostArray(np.empty((50, 40), np.float32)))


# -- the GPU -----------------------------------------------------------------------------------

gpu = pytest.mark.gpu
rng = np.random.default_rng(2024)


def rand(shape, dtype):
    return data.rand(shape, dtype, rng=rng, scale=100, bound=1000)


def _gpu_copy(src, dst):
    """try_copy, asserting it ran exactly when plan says it applies; otherwise the ordinary
    assignment. Returns whether the tiled kernel ran."""
    before = tr.launch_count
    applies = dst.size == 0 or _plan(src, dst) is not None
    assert tr.try_copy(src, dst) == applies
    if not applies:
        dst[...] = src
    else:
        assert tr.launch_count == before + (dst.size > 0)
    return applies


@gpu
@pytest.mark.parametrize("dtype", SUPPORTED, ids=lambda d: d.name)
def test_gpu_2d_every_dtype(dtype):
    a = rand((67, 130), dtype)
    g = gpunb.asarray(a)
    out = gpunb.empty((130, 67), dtype)
    assert tr.try_copy(g.T, out)
    np.testing.assert_array_equal(out.get(), a.T)
    # the destination transposed: b.T[...] = g
    b = gpunb.empty((130, 67), dtype)
    assert tr.try_copy(g, b.T)
    np.testing.assert_array_equal(b.get(), a.T)


@gpu
@pytest.mark.parametrize("shape", [(1, 1), (33, 65), (65, 33), (1000, 3), (3, 1000), (0, 7),
                                   (7, 0), (16, 16), (17, 200), (513, 1025)])
def test_gpu_odd_sizes(shape):
    a = rand(shape, "float32")
    out = gpunb.empty(shape[::-1], "float32")
    _gpu_copy(gpunb.asarray(a).T, out)
    np.testing.assert_array_equal(out.get(), a.T)


@gpu
@pytest.mark.parametrize("shape", [(1000, 3), (3, 1000), (2, 2), (1, 70), (33, 65)])
@pytest.mark.parametrize("dtype", ["int8", "float32", "complex128"])
def test_gpu_narrow_shapes_through_the_kernel(shape, dtype, monkeypatch):
    monkeypatch.setattr(tplan, "MIN_EXTENT", 1)
    a = rand(shape, dtype)
    out = gpunb.empty(shape[::-1], dtype)
    applies = _gpu_copy(gpunb.asarray(a).T, out)
    assert applies == (min(shape) > 1)
    np.testing.assert_array_equal(out.get(), a.T)


@gpu
@pytest.mark.parametrize("perm", [(0, 2, 1), (2, 1, 0), (1, 0, 2), (1, 2, 0), (2, 0, 1)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "complex128", "float16"])
def test_gpu_3d_permutations(perm, dtype):
    a = rand((20, 70, 90), dtype)
    g = gpunb.asarray(a)
    src = g.transpose(perm)
    out = gpunb.empty(src.shape, dtype)
    ran = _gpu_copy(src, out)
    assert ran == (perm != (1, 0, 2))
    np.testing.assert_array_equal(out.get(), a.transpose(perm))


@gpu
@pytest.mark.parametrize("index", [
    (slice(None, None, -1),), (slice(None), slice(None, None, -1)),
    (slice(None, None, -1), slice(None, None, -1)), (slice(3, 190, 2),),
    (slice(1, -1), slice(2, -3)), (slice(None, None, -3), slice(None, 50))])
def test_gpu_sliced_and_reversed_sources(index):
    a = rand((200, 150), "float32")
    src = gpunb.asarray(a)[index].T
    out = gpunb.empty(src.shape, "float32")
    assert _gpu_copy(src, out)
    np.testing.assert_array_equal(out.get(), a[index].T)


@gpu
def test_gpu_sliced_4d():
    a = rand((20, 50, 40, 17), "float64")
    g = gpunb.asarray(a)
    ran = 0
    for index, perm in [((Ellipsis, slice(None, None, -1)), (3, 2, 1, 0)),
                        ((Ellipsis, slice(None, None, -1)), (0, 3, 2, 1)),
                        ((slice(None, None, 2), slice(1, None), slice(None, None, -1), slice(1, None)),
                         (3, 1, 0, 2)),
                        ((slice(None, None, -1), slice(None, None, 3), slice(2, None),
                          slice(None, None, -1)), (1, 3, 2, 0)),
                        ((slice(None, None, -1), Ellipsis, 1), (2, 1, 0)),      # no unit axis
                        ((slice(None, None, 2), slice(1, None)), (1, 0, 2, 3))]:  # same unit axis
        src, expect = g[index].transpose(perm), a[index].transpose(perm)
        out = gpunb.empty(src.shape, "float64")
        ran += _gpu_copy(src, out)
        np.testing.assert_array_equal(out.get(), expect)
    assert ran == 4


@gpu
@pytest.mark.parametrize("s,d", CASTS)
def test_gpu_casts(s, d):
    a = rand((70, 90), s)
    g = gpunb.asarray(a)
    out = gpunb.empty((90, 70), d)
    assert tr.try_copy(g.T, out)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        expect = a.T.astype(d)
    np.testing.assert_array_equal(out.get(), expect)
    got = g.T.astype(d)                              # the public path
    np.testing.assert_array_equal(got.get(), expect)


@gpu
def test_gpu_many_tiles_few_blocks(monkeypatch):
    a = rand((3, 300, 260), "float32")
    g = gpunb.asarray(a)
    k = cg.TransposeKernel(g.dtype, g.dtype)
    lk = loader.get(cg, ("transpose", k.src, k.dst), lambda: k)
    monkeypatch.setattr(lk, "sm_count", 1)            # blocks loop over 3 * 5 * 5 tiles
    monkeypatch.setitem(lk.occupancy, k.name, 5)
    out = gpunb.empty((3, 260, 300), "float32")
    assert tr.try_copy(g.transpose(0, 2, 1), out)
    np.testing.assert_array_equal(out.get(), a.transpose(0, 2, 1))


@gpu
def test_gpu_public_paths_equal_numpy():
    for dtype in ("float32", "float64", "int16", "complex64", "bool"):
        a = rand((130, 67), dtype)
        g = gpunb.asarray(a)
        np.testing.assert_array_equal(gpunb.ascontiguousarray(g.T).get(), a.T)
        np.testing.assert_array_equal(g.T.copy().get(), a.T)
        out = gpunb.empty((67, 130), dtype)
        out[...] = g.T
        np.testing.assert_array_equal(out.get(), a.T)
        b = gpunb.empty((67, 130), dtype)
        b.T[...] = g
        np.testing.assert_array_equal(b.get(), a.T)


@gpu
def test_copy_into_uses_the_tiled_kernel():
    """Needs the call in elementwise.run.assign (``if try_copy(src, dst): return``)."""
    g = gpunb.asarray(rand((130, 67), "float32"))
    before = tr.launch_count
    g.T.copy()
    assert tr.launch_count == before + 1
    b = gpunb.empty((67, 130), "float32")
    b.T[...] = g
    assert tr.launch_count == before + 2


_NULL_GPU_REPLAYS = r"""
import sys
sys.path.insert(0, "benchmarks")
import host_null_gpu
host_null_gpu.install()
import gpunb as gp
from gpunb.core.kernels.transpose import run as trun
out = {}
for dt in ("float32", "float16", "complex64"):
    src = gp.empty((64, 96), dt)
    dst = gp.empty((96, 64), dt)
    before = trun.launch_count
    for _ in range(3):              # the first call plans; the others replay
        dst[...] = src.T
    out[dt] = trun.launch_count - before
print(out)
"""


def test_transposed_assignments_replay_without_a_gpu():
    """Without a GPU (the driver's calls made no-ops): a transposing assignment seen before
    replays its tiled copy (each of three calls launches it once), for several dtypes."""
    import ast
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    r = subprocess.run([sys.executable, "-c", _NULL_GPU_REPLAYS], cwd=root, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert ast.literal_eval(r.stdout.splitlines()[-1]) == {"float32": 3, "float16": 3, "complex64": 3}
