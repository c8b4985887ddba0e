"""Reductions without a GPU: generated kernels compiled by NVRTC, NumPy's dtype rules, the
thread-layout plan, and the errors raised before anything touches the device."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gpunb as gp
from gpunb.core import layout
from gpunb.core.kernels.reduction import ir as rir
from gpunb.core.kernels.reduction import plan as rplan
from gpunb.core.kernels.prelude import prelude
from gpunb.core.kernels.reduction import codegen as rc
from gpunb.core.kernels.elementwise.codegen import VEC_TYPE as _VEC_TYPE
from gpunb.core.build.compiler import compile
from gpunb.core.dtypes import SUPPORTED
from gpunb.core.ndarray import MemoryPointer, ndarray

ARCH = "sm_90"

FUNCS = ["sum", "prod", "max", "min", "argmax", "argmin", "mean", "var", "std", "any", "all",
         "nansum", "nanmax", "nanmin", "count_nonzero"]


@pytest.mark.parametrize("dtype", [d.name for d in SUPPORTED])
def test_every_reduction_compiles(dtype):
    """Every function's kernel for this dtype, in one module: with one reduced dim (the _vec
    entry included) and with three (index arithmetic), compiled for a real arch."""
    kernels = [rir.kernel_for(f, dtype, None, 2, 1) for f in FUNCS]
    kernels += [rir.kernel_for(f, dtype, None, 1, 3) for f in ("sum", "argmin", "var")]
    src = "\n".join([prelude(), _VEC_TYPE] + [rc.body(k) for k in kernels])
    cubin = compile(src, (), ARCH)
    assert cubin[:4] == b"\x7fELF"
    for k in kernels:
        for e in rc.entry_points(k):
            assert f'void {e}(' in src


@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize("dtype", [d.name for d in SUPPORTED])
def test_result_dtype_is_numpys(func, dtype):
    x = np.ones(3, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = np.asarray(getattr(np, func)(x)).dtype
    k = rir.kernel_for(func, dtype)
    assert k.out == expected
    if func in ("sum", "prod") and np.dtype(dtype).kind in "biu":
        assert k.out.itemsize == 8          # int32 sums give int64, as NumPy


def test_kernel_for_uses_numpys_identity_and_nan_rules():
    src = rc.render(rir.kernel_for("nanmax", "float32"))
    assert "gpunb::fmax_" in src and "0x7fc00000" in src       # NaN identity: all-NaN stays NaN
    src = rc.render(rir.kernel_for("max", "float64"))
    assert "gpunb::maximum_" in src and "(-__longlong_as_double(0x7ff0000000000000LL))" in src
    src = rc.render(rir.kernel_for("max", "int8"))
    assert "(-127 - 1)" in src
    src = rc.render(rir.kernel_for("argmax", "float16"))
    assert "isnan_(a.v)" in src and "a.i <= b.i" in src        # first NaN, first index
    assert "isnan" in rc.render(rir.kernel_for("nansum", "complex64"))
    assert "sqrt(" in rc.render(rir.kernel_for("std", "float32"))


@settings(max_examples=300, deadline=None)
@given(M=st.integers(0, 10**7), K=st.integers(0, 10**8), rs=st.sampled_from([0, 1, 4, 8, 16, 4096, 65536]),
       os_=st.sampled_from([0, 1, 4, 8, 16, 4096, 65536]), vec=st.sampled_from([1, 2, 4, 8, 16]),
       resident=st.integers(1, 4096))
def test_plan_covers_every_element_once(M, K, rs, os_, vec, resident):
    p = rplan.plan(M, K, rs, os_, vec, resident)
    block = rc.BLOCK
    assert p.lanes & (p.lanes - 1) == 0 and 1 <= p.lanes <= block
    assert block % p.lanes == 0
    if K:       # every split has at least one run of lanes * vec elements to read
        assert (p.splits - 1) * p.lanes * p.vec < K
    assert 1 <= p.splits <= 65535 and p.grid[1] == p.splits
    if M:
        assert p.grid[0] * (block // p.lanes) >= min(M, p.grid[0] * (block // p.lanes))
        assert p.grid[0] >= 1


def test_plan_picks_the_coalesced_layout():
    full = rplan.plan(1, 1 << 28, 4, 0, 4, 1056)
    assert full.lane_fast and full.lanes == 256 and full.splits > 100       # split to fill the GPU
    rows = rplan.plan(16384, 16384, 4, 65536, 4, 1056)
    assert rows.lane_fast and rows.splits == 1
    cols = rplan.plan(16384, 16384, 65536, 4, 1, 1056)
    assert not cols.lane_fast and cols.lanes * 32 == rc.BLOCK and cols.splits > 1


def test_geometry_collapses_like_numpy():
    x = np.zeros((4, 5, 6), np.float32)
    g = rplan.geometry(x.shape, (0, 1, 2), ["array"], [x.strides], False)
    assert (g.oshape, g.rshape, g.rstr, g.M, g.K) == ((1,), (120,), [(4,)], 1, 120)
    t = x.transpose(2, 0, 1)
    g = rplan.geometry(t.shape, (0, 1, 2), ["array"], [t.strides], True)   # C order kept
    assert g.rshape == (6, 20) and g.rstr == [(4, 24)]
    g = rplan.geometry(t.shape, (0, 1, 2), ["array"], [t.strides], False)  # largest stride first
    assert g.rshape == (120,) and g.rstr == [(4,)]
    assert layout.collapse([1, 1], [[8, 8]]) == ((1,), [(0,)])


def test_geometry_finds_the_array_after_a_scalar():
    """The reduced 'array' operand is found among the strided operands, whatever comes
    before it: a scalar first used to index the strides of the wrong operand."""
    x = np.zeros((8, 16), np.float32)
    m = np.broadcast_to(np.zeros((8, 1), np.float32), x.shape)
    g = rplan.geometry(x.shape, (1,), ["scalar", "outer", "array"], [m.strides, x.strides], False)
    assert g.slot == 1 and g.ostr[1] == (64,) and g.rstr[1] == (4,) and (g.M, g.K) == (8, 16)


def fake(shape, dtype):
    """An ndarray over a made-up pointer: enough for every check made before a launch."""
    dt = np.dtype(dtype)
    strides = np.empty(shape, dt).strides if shape else ()
    return ndarray._view(MemoryPointer(0x10000), shape, strides, dt, None)


def test_errors_before_the_gpu_is_touched():
    a = fake((3, 4), np.float32)
    with pytest.raises(np.exceptions.AxisError):
        gp.sum(a, axis=2)
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):    # NumPy's words
        gp.mean(a, axis=(1, -1))
    with pytest.raises(TypeError):
        gp.argmax(a, axis=(0, 1))
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        gp.max(fake((0, 4), np.float32), axis=0)
    with pytest.raises(ValueError, match="attempt to get argmin of an empty sequence"):
        gp.argmin(fake((3, 0), np.int32), axis=1)
    with pytest.raises(ValueError, match="wrong shape"):
        gp.sum(a, axis=0, out=fake((3,), np.float32))
    with pytest.raises(TypeError, match="out must be a gpunb.ndarray"):
        gp.sum(a, axis=0, out=np.zeros(4, np.float32))
    with pytest.raises(TypeError, match="NumPy array in host memory"):
        gp.sum(np.ones(3))
    with pytest.raises(TypeError, match="not supported on the GPU"):
        gp.sum(a, dtype=np.longdouble)


def test_no_gpu_is_named(no_gpu):
    with pytest.raises(gp.GPUUnavailableError):
        gp.sum(fake((3, 4), np.float32))


def test_warnings_point_at_the_callers_line():
    """NumPy's RuntimeWarnings of empty slices name the user's line, whichever way the call
    came in (the public function, the method, NumPy's dispatch)."""
    import inspect

    a = fake((3, 0), np.float32)
    for call in (lambda: gp.mean(a, axis=1), lambda: a.mean(axis=1), lambda: np.mean(a, axis=1),
                 lambda: gp.var(a, axis=1)):
        line = inspect.getsourcelines(call)[1]
        with pytest.warns(RuntimeWarning) as record:
            try:
                call()
            except gp.GPUUnavailableError:
                pass          # the warning comes before the launch; without a GPU, stop there
        assert record[0].filename == __file__ and record[0].lineno == line


class _FakeContext:
    """What the prepared paths use of a device context (CPU tests)."""

    default_handle = 7

    def __init__(self):
        self.prepared = {}

    def remember(self, key, value):
        self.prepared[key] = value
        return value


def test_replayed_multi_launch_reductions_set_every_slot(monkeypatch):
    """A reduction call seen before (here with dtype=, as Dask's chunk sums call it) replays
    its launches as prepared ones, without a GPU: each launch sees the operand, the new
    result and the call's own temporary buffer in the slots its plan names, its constant
    parameters, grid and dynamic shared memory; the temporary buffer is freed after the
    launches; on the main thread (slots of its own) and on another (the locked set); another
    dtype= or shape is another plan."""
    import ctypes
    import itertools

    from gpunb.core.kernels.execute import Step
    from gpunb.core.kernels.reduction import run as rrun
    from gpunb.core.runtime import driver, fastcall, memory, scratch
    from tests import data

    ptrs = itertools.count(0x100000, 0x10000)
    events = []

    class Block:
        def __init__(self, size):
            self.ptr, self.size = next(ptrs), size
            events.append(("malloc", self.ptr, size))

        def __del__(self):
            events.append(("free", self.ptr))

    class Pool:
        def malloc(self, size, stream=None):
            return Block(size)

    ctx = _FakeContext()
    monkeypatch.setattr(driver, "active", ctx)
    monkeypatch.setattr(driver, "context", lambda ordinal=None: ctx)
    monkeypatch.setattr(driver, "stream_handle", lambda: 7)
    monkeypatch.setattr(memory, "get_default_memory_pool", lambda: Pool())
    monkeypatch.setattr(scratch, "get", lambda size, stream=None: Block(size))   # (a split's)
    monkeypatch.setattr(ndarray, "_empty", classmethod(
        lambda cls, shape, dt: ndarray._view(MemoryPointer(next(ptrs)), shape, (4,) * len(shape),
                                             np.dtype(dt), None)))
    seen = []

    def launch(fn, gx, gy, gz, bx, by, bz, smem, stream, params, extra):
        addrs = ctypes.cast(params, ctypes.POINTER(ctypes.c_void_p))
        values = [ctypes.c_void_p.from_address(addrs[i]).value for i in range(3)]
        seen.append((fn, gx, bx, smem, stream, values))
        events.append(("launch", fn))
        return (0,)

    data.record_launches(monkeypatch)
    monkeypatch.setattr(fastcall, "_cu_launch", launch)
    x = ndarray._view(MemoryPointer(0x5000000), (1 << 24,), (4,), np.dtype("float32"), None)
    const = ctypes.c_void_p(0xABC)
    steps = (Step(11, (528,), (256,), (0, 2, const), 1024), Step(12, (1,), (512,), (2, 1, const)))
    result = ndarray._empty((1,), np.dtype("float32"))
    rrun._prepare("sum", x, (0,), True, np.float32, result, steps, 528 * 4)
    key = ("reduce:call", "sum", x._dtype, x._shape, x._strides, 0, (0,), True, np.float32)
    fast = ctx.prepared[key]
    import threading

    for thread in (False, False, True, False):      # the main thread's slots, another thread's
        events.clear()
        seen.clear()
        if thread:
            got = []
            t = threading.Thread(target=lambda: got.append(
                rrun.reduce("sum", x, axis=(0,), dtype=np.float32, keepdims=True)))
            t.start()
            t.join()
            out, = got
        else:
            out = rrun.reduce("sum", x, axis=(0,), dtype=np.float32, keepdims=True)
        # (the source-made replays allocate the result from the pool too: its 4 bytes)
        events[:] = [e for e in events if e[0] != "malloc" or e[2] != 4]
        temp = events[0][1]
        assert events[0] == ("malloc", temp, 528 * 4)
        assert seen == [(11, 528, 256, 1024, 7, [x.data.ptr, temp, 0xABC]),
                        (12, 1, 512, 0, 7, [temp, out.data.ptr, 0xABC])]
        assert [e[0] for e in events] == ["malloc", "launch", "launch", "free"]
    assert fast(x).shape == (1,)
    assert ctx.prepared.get(key[:-1] + (np.float64,)) is None     # dtype= is in the key


_NULL_GPU_LAUNCHES = r"""
import ctypes, json, sys
sys.path.insert(0, "benchmarks")
import host_null_gpu
host_null_gpu.install()
import numpy as np
import gpunb as gp
from gpunb.core.ndarray import ndarray
from gpunb.core.runtime import fastcall

log = []
def pointers(objects):
    return [o.value if isinstance(o, ctypes.c_void_p) else None for o in objects]
def extents(grid):
    return (tuple(grid) + (1, 1))[:3]
def generic(function, grid, block, shared_mem, stream, params):
    log.append((function, extents(grid), shared_mem, pointers(params)))
# prepared launches (replays write their cuLaunchKernel calls out): known by their
# parameter array's address
made = {}
init = fastcall.Prepared.__init__
def register(self, *a):
    init(self, *a)
    made[self._params] = self
def cu_launch(fn, gx, gy, gz, bx, by, bz, shared_mem, stream, params, extra):
    p = made[params]
    log.append((p.function, (gx, gy, gz), shared_mem, pointers(p.objects)))
    return (0,)
fastcall.launch = generic
fastcall.Prepared.__init__ = register
fastcall._cu_launch = cu_launch

def named(calls):
    # each pointer by its first appearance in the call: the same plan gives the same names
    names = {}
    return [(f, g, s, [None if p is None else names.setdefault(p, len(names)) for p in ps])
            for f, g, s, ps in calls]

out = {}
for case, fn in CASES.items():
    x = ndarray(SHAPE, np.float32)
    seen = []
    for _ in range(5):      # the general path, two locked replays, two of the plan's source
        log.clear()
        r = fn(x)
        seen.append(named([(None, None, None, [x.data.ptr])] + log + [(None, None, None, [r.data.ptr])]))
    out[case] = seen
print(json.dumps(out))
"""


@pytest.mark.parametrize("shape, cases", [
    ((1000,), "{'var': lambda x: x.var(), 'std ddof': lambda x: x.std(ddof=1), "
              "'sum dtype': lambda x: np.sum(x, axis=(0,), keepdims=True, dtype=np.float64)}"),
    ((1 << 22,), "{'var': lambda x: x.var(), 'sum': lambda x: x.sum(), "
                 "'mean dtype': lambda x: x.mean(dtype=np.float64)}"),
    ((300, 70), "{'std axis 0': lambda x: x.std(axis=0), 'var axis 1': lambda x: x.var(axis=1, keepdims=True)}"),
])
def test_replayed_calls_launch_what_the_first_call_launched(shape, cases):
    """Without a GPU (the driver's calls made no-ops): a reduction, var or std seen before
    replays the first call's launches (under the plan's lock, then from its generated
    source): the same kernels and grids, each operand, mean, result and temporary buffer
    pointer in the same parameter as the general path put it."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    code = f"CASES = None\nSHAPE = {shape!r}\n" + _NULL_GPU_LAUNCHES.replace(
        "out = {}", f"CASES = {cases}\nout = {{}}")
    r = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    for case, (first, *replays) in json.loads(r.stdout.splitlines()[-1]).items():
        assert len(first) > 2, case                     # it launched something
        assert all(first == replay for replay in replays), case


def test_replay_of_steps_it_cannot_prepare_keeps_nothing(monkeypatch):
    """``execute.replay`` of steps naming a parameter past the call's pointers: no entry is
    kept (a later call would have launched None), and the launch fails as ``execute``'s."""
    from gpunb.core.kernels import execute as ex
    from gpunb.core.runtime import driver

    ctx = _FakeContext()
    monkeypatch.setattr(driver, "active", ctx)
    monkeypatch.setattr(driver, "stream_handle", lambda: 7)
    bad = (ex.Step(11, (1,), (32,), (0, 3)),)
    for _ in range(2):
        with pytest.raises(IndexError):
            ex.replay(("test.bad",), lambda: bad, (0x1000,))
    assert ctx.prepared == {}
