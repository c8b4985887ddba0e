"""Split reductions combined in one launch: the last block of each output group combines the
partial states (``runtime.scratch``: per-stream tickets). Without a GPU: the plan, the
scratch's rules and the constants the kernels share with it; on the GPU, against NumPy: every
function and dtype split, tickets reused launch after launch, two streams at once, graph
captures, user and fused reductions."""

import threading

import numpy as np
import pytest

import gpunb as gp
from gpunb.core.dtypes import SUPPORTED
from gpunb.core.kernels.reduction import codegen as rc
from gpunb.core.kernels.reduction import ir as rir
from gpunb.core.kernels.reduction import state as rs
from gpunb.core.kernels.reduction import plan as rplan
from gpunb.core.runtime import memory, scratch
from tests.test_reduction_gpu import FUNCS, _PRODUCTS, call, check, data_for

gpu = pytest.mark.gpu


def test_kernels_and_scratch_agree_on_the_tickets():
    from gpunb.core import abi

    assert (rs.TICKETS, rs.TICKET_BYTES) == (scratch.TICKETS, scratch.TICKET_BYTES) == (abi.TICKETS, abi.TICKET_BYTES)
    src = rc.render(rir.kernel_for("sum", "float32", None, 1, 1))
    assert "atomicInc" in src and "void reduce_sum_afloat32_to_float32_o1r1_combine(" in src
    assert f"constexpr long long TICKET_BYTES = {scratch.TICKET_BYTES};" in src


def test_a_split_is_one_step_and_never_more_groups_than_tickets():
    p = rplan.plan(1, 1 << 24, 4, 0, 4, 1056)
    assert p.splits > 1 and p.grid == (1, p.splits)
    # 8192 outputs of 64 lanes need 2048 blocks: under the resident count, but more groups than
    # tickets only when the tickets run short (here: 1024 of them)
    few = rplan.plan(2048, 1 << 16, 4, 0, 4, 100000)
    assert few.splits > 1
    old = rs.TICKETS
    try:
        rs.TICKETS = few.grid[0] - 1
        assert rplan.plan(2048, 1 << 16, 4, 0, 4, 100000).splits == 1
    finally:
        rs.TICKETS = old


def test_the_last_block_combines_its_group_in_one_pass_where_it_fits():
    one = rplan.split_combine_plan(1, 512)
    assert one.lane_fast and one.lanes == 256
    assert rplan.split_combine_plan(1, 20).lanes == 32
    for group, S in ((128, 32), (32, 500), (256, 8), (2, 3)):
        c = rplan.split_combine_plan(group, S)
        assert not c.lane_fast and rc.THREADS // c.lanes >= group and c.lanes <= max(1, S * 2)
    assert rplan.split_combine_plan(1024, 40).lanes == 1     # several passes, a thread each


class _Loaded:
    """A loaded kernel's stand-in for plan.steps: functions by name, 132 SMs, 8 blocks each."""

    def __init__(self, func, dtype):
        self.kernel = rir.kernel_for(func, dtype, None, 1, 1)
        self.functions = {e: e for e in rc.entry_points(self.kernel)}
        self.occupancy = {e: 8 for e in self.functions}
        self.sm_count, self.vec = 132, max(1, 16 // np.dtype(dtype).itemsize)


def _steps(func, dtype, shape, axis):
    from gpunb.core.ndarray import MemoryPointer, ndarray

    dt = np.dtype(dtype)
    strides = tuple(int(np.prod(shape[d + 1:])) * dt.itemsize for d in range(len(shape)))
    x = ndarray._view(MemoryPointer(1 << 20), shape, strides, dt, None)
    g = rplan.geometry(shape, (axis,), ["array"], [strides], False)
    return rplan.steps(_Loaded(func, dtype), g, 1, x, 1.0)


@pytest.mark.parametrize("func,dtype,shape,axis,launches,splits", [
    ("sum", "float32", (1 << 24,), 0, 1, rplan.SPLIT_CAP),        # one output: the cap
    ("sum", "float32", (65536, 64), 0, 1, 64),     # 64 columns: fewer splits, one launch
    ("argmax", "float32", (65536, 64), 0, 2, 256),  # large states: the combine launch
    ("sum", "float32", (4096, 1024), 0, 1, 32),    # the states fit the last block
    ("sum", "float32", (64, 1000), 0, 1, 1),       # enough outputs: no split
])
def test_split_modes(func, dtype, shape, axis, launches, splits):
    steps, temp = _steps(func, dtype, shape, axis)
    assert len(steps) == launches and steps[0].grid[1] == splits
    mode = steps[0].params[7].value                 # final_: 1 at once, 0 last block, 2 combine launch
    assert mode == (1 if splits == 1 else 0 if launches == 1 else 2)
    assert temp == (0 if splits == 1 else rs.TICKET_BYTES + splits * np.prod(shape[1:]) * rplan.STATE_BYTES)
    if launches == 2:
        assert steps[1].function.endswith("_combine")


class _Block:
    made = []

    def __init__(self, size, stream):
        self.ptr, self.size, self.stream = 0x1000 * (len(_Block.made) + 1), size, stream
        _Block.made.append(self)


class _Pool:
    def __init__(self):
        self._scratch, self._capturing, self._allocator = {}, set(), None

    def malloc(self, size, stream=None):
        return _Block(size, stream)


def test_scratch_is_kept_per_stream_grown_and_zeroed_once(monkeypatch):
    pool, zeroed = _Pool(), []
    _Block.made.clear()
    monkeypatch.setattr(memory, "get_default_memory_pool", lambda: pool)
    monkeypatch.setattr(scratch, "_zero", lambda ptr, stream: zeroed.append((ptr, stream)))
    a = scratch.get(scratch.TICKET_BYTES + 4096, 7)
    assert scratch.get(scratch.TICKET_BYTES + 100, 7) is a          # kept: no new zeroing
    assert zeroed == [(a.ptr, 7)] and a.stream == 7 and a.size >= scratch.TICKET_BYTES + 4096
    b = scratch.get(a.size + 1, 7)                                    # grown, zeroed again
    assert b is not a and pool._scratch[7] is b and zeroed[-1] == (b.ptr, 7)
    c = scratch.get(100 + scratch.TICKET_BYTES, 9)                    # another stream's own
    assert c is not b and pool._scratch[9] is c
    # a stream under capture, or a scratch over the limit: a block per call, zeroed each time
    pool._capturing.add(11)
    d1, d2 = scratch.get(scratch.TICKET_BYTES + 64, 11), scratch.get(scratch.TICKET_BYTES + 64, 11)
    assert d1 is not d2 and 11 not in pool._scratch and zeroed[-2:] == [(d1.ptr, 11), (d2.ptr, 11)]
    e = scratch.get(scratch.KEEP_LIMIT + 1, 7)
    assert e is not pool._scratch[7] and zeroed[-1] == (e.ptr, 7)
    pool._capturing.add(7)          # a stream with a kept scratch, then captured: never the kept one
    f = scratch.get(scratch.TICKET_BYTES + 64, 7)
    assert f is not pool._scratch[7] and zeroed[-1] == (f.ptr, 7)
    pool._capturing.discard(7)
    # the per-thread default stream (handle 2): a scratch for each thread
    mine, got = scratch.get(scratch.TICKET_BYTES + 64, 2), []
    t = threading.Thread(target=lambda: got.append(scratch.get(scratch.TICKET_BYTES + 64, 2)))
    t.start()
    t.join()
    assert got[0] is not mine and scratch.get(scratch.TICKET_BYTES + 64, 2) is mine
    for s in range(100, 100 + scratch.KEEP_STREAMS):                  # the oldest stream's goes
        scratch.get(scratch.TICKET_BYTES + 64, s)
    assert len(pool._scratch) == scratch.KEEP_STREAMS and 7 not in pool._scratch


@gpu
@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize("dtype", [d.name for d in SUPPORTED])
def test_every_function_and_dtype_split(func, dtype):
    """A full reduction long enough to split (1-, 2-, 8- and 16-byte states; index states),
    and rows of a 2-D array (several output groups, each with its own ticket)."""
    dt = np.dtype(dtype)
    for shape, axis in (((70001,), None), ((3, 50000), 1)):
        if func in _PRODUCTS:       # ones but for a few small factors: no overflow, exact
            x = np.ones(shape, dt)
            x.reshape(-1)[np.random.default_rng(9).integers(0, x.size, 10)] = 2 if dt.kind != "b" else 0
        else:
            x = data_for(func, shape, dt)
        kw = {} if axis is None else {"axis": axis}
        check(func, call(func, gp.asarray(x), **kw), x, **kw)


@gpu
def test_tickets_are_ready_for_every_next_launch():
    """Many split reductions of different geometries back to back on one stream, and a
    column split between them: a ticket left non-zero would end a later one early."""
    rng = np.random.default_rng(5)
    hs = [rng.standard_normal(n).astype(np.float32) for n in (1 << 16, 300001, 1 << 22, 99999)]
    cols = rng.standard_normal((20000, 64)).astype(np.float32)
    gs, gc = [gp.asarray(h) for h in hs], gp.asarray(cols)
    got = []
    for _ in range(20):
        for g in gs:
            got.append(g.sum())
            got.append(g.argmax())
        got.append(gc.sum(axis=0))
    want = []
    for _ in range(20):
        for h in hs:
            want += [h.sum(dtype=np.float64), h.argmax()]
        want.append(cols.sum(axis=0, dtype=np.float64))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.get(), w, rtol=1e-4, atol=1e-2)


@gpu
def test_two_streams_at_once_keep_their_own_tickets():
    """Split sums on two non-blocking streams from two threads, interleaved on the GPU, then
    on each thread's own default stream (``Stream.ptds``, one handle for both): each stream's
    scratch is its own."""
    rng = np.random.default_rng(6)
    hs = [rng.standard_normal(1 << 21).astype(np.float32) + k for k in range(2)]
    xs = [gp.asarray(h) for h in hs]
    gp.synchronize()

    def work(k, ptds, results):
        s = gp.cuda.Stream.ptds if ptds else gp.Stream(non_blocking=True)
        with s:
            for _ in range(200):
                results[k].append(xs[k].sum())
            s.synchronize()

    for ptds in (False, True):
        results = [[], []]
        threads = [threading.Thread(target=work, args=(k, ptds, results)) for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for k in range(2):
            got = np.array([float(r.get()) for r in results[k]])
            np.testing.assert_allclose(got, hs[k].sum(dtype=np.float64), rtol=1e-4)


@gpu
def test_graph_captured_split_reduction_replays_with_its_own_scratch():
    """A captured split reduction gets a scratch of the graph's own (zeroed by a memset node):
    replays after an in-place update follow it, with other split reductions run between."""
    rng = np.random.default_rng(7)
    h = rng.standard_normal(1 << 20).astype(np.float32)
    x, other = gp.asarray(h), gp.asarray(h[::-1].copy())
    x.sum()
    with gp.graph() as g:
        y = x.sum()
        z = x.max(axis=0)
    np.testing.assert_allclose(float(y.get()), h.sum(dtype=np.float64), rtol=1e-4)
    for k in range(5):
        x[...] = gp.asarray(h + k)
        g.replay()
        assert float(other.sum().get()) == pytest.approx(h.sum(dtype=np.float64), rel=1e-4)
        np.testing.assert_allclose(float(y.get()), (h + k).sum(dtype=np.float64), rtol=1e-4)
        assert float(z.get()) == (h + k).max()


@gpu
def test_capture_on_a_stream_that_kept_a_scratch():
    """CuPy's capture API on a stream whose scratch was made before: the graph gets its own,
    so the stream's later reductions and the graph's replays on another stream both hold."""
    rng = np.random.default_rng(10)
    h = rng.standard_normal(1 << 20).astype(np.float32)
    x, w = gp.asarray(h), gp.asarray(h * 2)
    s, other = gp.cuda.Stream(non_blocking=True), gp.cuda.Stream(non_blocking=True)
    s.wait_event(gp.cuda.Stream.null.record())
    with s:
        x.sum()                                 # the stream's kept scratch
        s.begin_capture()
        y = x.sum()
        g = s.end_capture()
    s.synchronize()
    sums = []
    for _ in range(50):
        g.launch(other)
        with s:
            sums.append(w.sum())
    other.synchronize()
    s.synchronize()
    np.testing.assert_allclose(float(y.get()), h.sum(dtype=np.float64), rtol=1e-4)
    np.testing.assert_allclose([float(v.get()) for v in sums], 2 * h.sum(dtype=np.float64), rtol=1e-4)


@gpu
def test_user_and_fused_reductions_split():
    h = np.random.default_rng(8).standard_normal(1 << 20).astype(np.float32)
    x = gp.asarray(h)
    sumsq = gp.ReductionKernel("T x", "T y", "x * x", "a + b", "y = a", "0", "split_sumsq")
    np.testing.assert_allclose(float(sumsq(x).get()), (h.astype(np.float64) ** 2).sum(), rtol=1e-4)

    @gp.fuse
    def energy(v):
        return gp.sum(v * v + gp.sin(v))

    want = (h.astype(np.float64) ** 2 + np.sin(h.astype(np.float64))).sum()
    for _ in range(3):          # the plan, then its replays
        np.testing.assert_allclose(float(energy(x).get()), want, rtol=1e-4)
