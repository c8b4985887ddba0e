"""Page-locked host memory (CuPy's ``alloc_pinned_memory``, ``PinnedMemoryPool``,
``get_default_pinned_memory_pool``, cupyx's ``empty_pinned`` family) and copies through it;
the device pool's CuPy limits (``set_limit``, ``get_limit``, ``OutOfMemoryError``).

CPU: the pool, pointers, NumPy views and the array helpers over a fake driver whose
``cuMemHostAlloc`` hands out ctypes buffers. GPU: real page-locked memory, copies both ways
on a stream (``blocking=False``) against NumPy, the pool's reuse, CuPy's frombuffer idiom."""

import ctypes
import gc
import weakref

import numpy as np
import pytest

import gpunb as gp
from gpunb.core.runtime import pinned

gpu = pytest.mark.gpu
rng = np.random.default_rng(2024)


class FakeDriver:
    """cuMemHostAlloc / cuMemFreeHost over ctypes buffers, counting both."""

    def __init__(self):
        self.live, self.allocs, self.frees = {}, 0, []

    def cuMemHostAlloc(self, pp, size, flags):
        buf = ctypes.create_string_buffer(size)
        self.live[ctypes.addressof(buf)] = buf
        pp._obj.value = ctypes.addressof(buf)
        self.allocs += 1
        return 0

    def cuMemFreeHost(self, ptr):
        assert ptr in self.live, "freed a pointer the driver did not hand out"
        self.frees.append(ptr)
        return 0


@pytest.fixture
def fake(monkeypatch):
    f = FakeDriver()
    monkeypatch.setattr(pinned.libcuda, "lib", lambda: f)
    monkeypatch.setattr(pinned.driver, "context", lambda *a: None)
    pool = pinned.PinnedMemoryPool()
    monkeypatch.setattr(pinned, "_allocator", pool.malloc)      # the default allocator, isolated
    f.pool = pool
    return f


def test_pool_keeps_and_reuses_freed_blocks_by_rounded_size(fake):
    pool = pinned.PinnedMemoryPool()
    p = pool.malloc(1000)
    assert p.mem.size == 1024 and len(p) == 1024 and pool.used_bytes() == 1024
    addr = p.ptr
    del p
    gc.collect()
    assert pool.n_free_blocks() == 1 and pool.free_bytes() == 1024 and pool.used_bytes() == 0
    q = pool.malloc(600)                       # also 1024 bytes: the kept block
    assert q.ptr == addr and fake.allocs == 1
    r = pool.malloc(2000)
    assert fake.allocs == 2 and pool.used_bytes() == 1024 + 2048 and pool.total_bytes() == 3072
    del q, r
    gc.collect()
    assert pool.n_free_blocks() == 2 and fake.frees == []
    pool.free_all_blocks()
    assert sorted(fake.frees) == sorted(fake.live) and pool.n_free_blocks() == 0
    assert "PinnedMemoryPool" in repr(pool)


def test_numpy_views_keep_the_memory_alive(fake):
    pool = pinned.PinnedMemoryPool()
    a = np.frombuffer(pool.malloc(64), np.float32, 16)        # CuPy's idiom
    a[:] = np.arange(16)
    gc.collect()
    assert pool.n_free_blocks() == 0
    np.testing.assert_array_equal(a, np.arange(16))
    b = a[4:8]
    del a
    gc.collect()
    assert pool.n_free_blocks() == 0 and b.sum() == 4 + 5 + 6 + 7
    del b
    gc.collect()
    assert pool.n_free_blocks() == 1


def test_pointers(fake):
    p = pinned.alloc_pinned_memory(100)
    assert isinstance(p, pinned.PinnedMemoryPointer) and isinstance(p.mem, pinned.PinnedMemory)
    q = p + 16
    assert q.ptr == p.ptr + 16 and len(q) == len(p) - 16 and q.mem is p.mem and int(q) == q.ptr
    assert int(p.mem) == p.ptr and "PinnedMemory" in repr(q)
    with pytest.raises(ValueError, match="outside"):
        p + (len(p) + 1)
    with pytest.raises(ValueError, match="negative"):
        pinned.alloc_pinned_memory(-1)
    z = pinned.alloc_pinned_memory(0)
    assert len(z) == 0 and np.frombuffer(z, np.uint8).size == 0


def test_allocator_switch_and_custom_allocators(fake, monkeypatch):
    pinned.set_pinned_memory_allocator(None)              # straight from the driver, no pool
    p = pinned.alloc_pinned_memory(100)
    assert p.mem.size == 100
    addr = p.ptr
    del p
    gc.collect()
    assert fake.frees == [addr]
    made = []

    def mine(size):
        made.append(size)
        return pinned.PinnedMemoryPointer(pinned.PinnedMemory(size), 0)
    pool = pinned.PinnedMemoryPool(mine)
    x = pool.malloc(10)
    assert made == [512] and x.mem.size == 512
    del x
    gc.collect()
    pool.malloc(500)            # reused, not made again
    assert made == [512]
    gc.collect()
    pool.free_all_blocks()      # the allocator's pointer is let go, freed by its own memory
    gc.collect()
    assert fake.frees[-1] in fake.live and len(fake.frees) == 2


def test_empty_pinned_family(fake):
    e = gp.empty_pinned((3, 4), np.float64)
    assert e.shape == (3, 4) and e.dtype == np.float64 and e.flags.c_contiguous and e.flags.writeable
    f = gp.empty_pinned((3, 4), "i4", order="F")
    assert f.flags.f_contiguous and f.dtype == np.int32
    assert (gp.zeros_pinned(5) == 0).all() and gp.zeros_pinned(5).dtype == np.float64
    like = np.ones((2, 3), np.float32, order="F")
    z = gp.zeros_like_pinned(like)
    assert z.flags.f_contiguous and z.dtype == np.float32 and (z == 0).all() and z.shape == (2, 3)
    assert gp.empty_like_pinned(like, dtype=np.int8, shape=(7,)).shape == (7,)
    assert gp.empty_like_pinned([[1, 2]]).shape == (1, 2)
    assert gp.empty_pinned((0, 3)).shape == (0, 3) and gp.empty_pinned(4).shape == (4,)
    assert fake.pool.used_bytes() > 0        # they came from the (isolated) default allocator
    with pytest.raises(ValueError, match="negative dimensions"):
        gp.empty_pinned((2, -1))
    with pytest.raises(ValueError, match="order"):
        gp.empty_pinned(3, order="X")


def test_toolkit_queries():
    """gpunb needs no toolkit: CuPy's path queries answer None, the local runtime version is
    NVRTC's (CUDA's encoding)."""
    assert gp.cuda.get_cuda_path() is None and gp.cuda.get_nvcc_path() is None
    v = gp.cuda.get_local_runtime_version()
    assert v == gp.cuda.runtime.runtimeGetVersion() and v >= 12000 and v % 10 == 0


def test_names():
    assert gp.cuda.PinnedMemoryPool is pinned.PinnedMemoryPool
    assert gp.get_default_pinned_memory_pool() is pinned.get_default_pinned_memory_pool()
    assert gp.cuda.alloc_pinned_memory is pinned.alloc_pinned_memory
    assert isinstance(gp.is_available(), bool) and gp.is_available() == gp.cuda.is_available()


@gpu
def test_pinned_copies_match_numpy():
    assert gp.is_available()
    h = rng.standard_normal((512, 300)).astype(np.float32)
    pin = gp.empty_pinned(h.shape, h.dtype)
    pin[...] = h
    s = gp.cuda.Stream()
    x = gp.empty(h.shape, h.dtype)
    x.set(pin, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(x.get(), h)
    out, out2 = gp.zeros_pinned(h.shape, h.dtype), gp.zeros_pinned(h.shape, h.dtype)
    with s:
        y = x * 2
        y.get(stream=s, out=out, blocking=False)
        gp.asnumpy(y, stream=s, out=out2, blocking=False)
    s.synchronize()
    np.testing.assert_array_equal(out, h * 2)
    np.testing.assert_array_equal(out2, h * 2)
    t = gp.empty_pinned(h.shape[::-1], h.dtype)
    np.testing.assert_array_equal(gp.asnumpy(y.T, out=t), (h * 2).T)       # a strided source
    mem = gp.cuda.alloc_pinned_memory(h.nbytes)                             # CuPy's idiom
    arr = np.frombuffer(mem, h.dtype, h.size).reshape(h.shape)
    arr[...] = h
    np.testing.assert_array_equal(gp.asarray(arr).get(), h)
    pool = gp.get_default_pinned_memory_pool()
    del pin, out, out2, t, mem, arr
    gc.collect()
    assert pool.n_free_blocks() >= 1
    a = gp.empty_pinned(1000, np.uint8)
    ptr = a.ctypes.data
    del a
    gc.collect()
    assert gp.empty_pinned(1000, np.uint8).ctypes.data == ptr       # the kept block again
    gc.collect()
    pool.free_all_blocks()
    assert pool.n_free_blocks() == 0


def test_memoize_and_allocator_doors():
    calls = []

    @gp.memoize()
    def f(x, y=1):
        calls.append((x, y))
        return x + y
    assert f(1) == 2 and f(1) == 2 and f(1, y=2) == 3 and calls == [(1, 1), (1, 2)]
    assert f.__name__ == "f"
    gp.clear_memo()
    assert f(1) == 2 and len(calls) == 3
    with pytest.raises(TypeError):
        f([1])                              # the arguments must be hashable, as CuPy's
    with gp.cuda.using_allocator(None):
        calls.append("inside")
    assert calls[-1] == "inside"


def test_pool_limit_arguments():
    p = gp.MemoryPool()
    assert p.get_limit() == 0
    p.set_limit(size=1 << 20)
    assert p.get_limit() == 1 << 20
    p.set_limit()
    assert p.get_limit() == 0
    with pytest.raises(ValueError, match="at one time"):
        p.set_limit(size=1, fraction=0.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        p.set_limit(fraction=1.5)
    with pytest.raises(ValueError, match="non-negative"):
        p.set_limit(size=-1)
    assert gp.cuda.memory.OutOfMemoryError is gp.cuda.OutOfMemoryError
    assert issubclass(gp.cuda.OutOfMemoryError, MemoryError)
    assert gp.cuda.memory.MemoryPool is gp.MemoryPool and gp.cuda.memory.alloc is gp.cuda.alloc


def test_pool_keeps_the_streams_of_its_cached_blocks(monkeypatch):
    """Blocks freed on a stream are cached with the stream object kept alive (a destroyed
    stream's handle must never be freed on or handed out again); past MAX_STREAMS streams the
    oldest one's blocks are freed on it and it is let go. CPU: no driver call is made."""
    from gpunb.core.runtime import memory
    freed = []
    monkeypatch.setattr(memory.fastcall, "free", lambda h, s: freed.append((h, s)))
    pool = memory.MemoryPool()

    class FakeStream:
        pass

    streams = [FakeStream() for _ in range(memory.MAX_STREAMS + 2)]
    alive = [weakref.ref(st) for st in streams]
    for i, st in enumerate(streams):
        for j in range(2):                      # two sizes: two keys for one stream
            a = memory.Allocation(0x1000 * (i + 1) + 512 * j, 512 * (j + 1), 100 + i, st, pool, 0)
            del a
    del streams, st
    assert [r() is not None for r in alive] == [False] * 2 + [True] * memory.MAX_STREAMS
    assert sorted(freed) == [(0x1000, 100), (0x1200, 100), (0x2000, 101), (0x2200, 101)]
    assert pool.n_free_blocks() == 2 * memory.MAX_STREAMS
    freed.clear()
    pool._flush()
    assert len(freed) == 2 * memory.MAX_STREAMS and all(h // 0x1000 - 1 == s - 100 for h, s in freed)
    assert [r() for r in alive] == [None] * len(alive)
    a = memory.Allocation(0x9000, 512, 0, None, pool, 0)    # the default stream: not kept
    del a
    assert pool._streams == {} and pool.n_free_blocks() == 1


def test_first_blocks_come_from_the_slab_while_the_allocator_starts(monkeypatch):
    """The pool's first use starts the driver's stream-ordered allocator on a thread
    (runtime.warmup); until it is done, blocks come from one cuMemAlloc slab, are never
    recycled and count in used_bytes; a request the slab cannot hold waits, and so does a
    pool query; afterwards blocks come from the pool. A fake driver: no GPU."""
    import threading

    from gpunb.core.runtime import driver, memory, warmup

    release, calls = threading.Event(), []

    class FakeLib:
        def cuCtxSetCurrent(self, ctx):
            calls.append(("current", ctx, threading.current_thread().name))
            return 0

        def cuMemAllocFromPoolAsync(self, out, size, pool, stream):
            release.wait(10)                    # the allocator's start-up, held here
            calls.append(("pool alloc", size, pool, stream))
            out._obj.value = 0x7000000
            return 0

        def cuMemFreeAsync(self, ptr, stream):
            calls.append(("pool free", ptr, stream))
            return 0

        def cuMemAlloc_v2(self, out, size):
            calls.append(("slab", size))
            out._obj.value = 0x5000000
            return 0

        def cuMemFree_v2(self, ptr):
            calls.append(("slab free", ptr))
            return 0

    ctx = type("Ctx", (), {"handle": 42, "default_handle": 1,
                           "info": type("Info", (), {"ordinal": 0})()})()
    monkeypatch.setattr(memory.libcuda, "lib", lambda: FakeLib())
    monkeypatch.setattr(memory.libcuda, "device_pool", lambda ordinal: 77)
    monkeypatch.setattr(memory.libcuda, "pool_attribute", lambda pool, attr: 0)
    monkeypatch.setattr(driver, "context", lambda ordinal=None: ctx)
    monkeypatch.setattr(driver, "active", ctx)
    monkeypatch.setattr(driver._current, "ctx", ctx)
    monkeypatch.setattr(driver._current, "stream", None)
    monkeypatch.setattr(memory.fastcall, "allocate", lambda pool, size, s: 0x9000000 + size)
    monkeypatch.setattr(memory.fastcall, "free", lambda ptr, s: None)
    monkeypatch.setattr(warmup, "_started", set())
    pool = memory.MemoryPool()
    a, b = pool.malloc(4000), pool.malloc(1)
    assert (a.ptr, a.size, b.ptr, b.size) == (0x5000000, 4096, 0x5000000 + 4096, 512)
    assert a.owner._pool is pool and not pool._warmup.done and pool._handle is None
    del a
    c = pool.malloc(4000)                       # not recycled: the next slab block
    assert c.ptr == 0x5000000 + 4608 and pool._warmup.live == 4096 + 512
    got = []
    big = threading.Thread(target=lambda: got.append(pool.malloc(warmup.SLAB_BYTES)))
    big.start()
    big.join(0.2)
    assert big.is_alive()                       # the slab cannot hold it: waits for the start-up
    release.set()
    big.join(10)
    assert got[0].ptr == 0x9000000 + warmup.SLAB_BYTES
    assert ("pool alloc", 512, 77, 1) in calls and ("pool free", 0x7000000, 1) in calls
    assert ("current", 42, "gpunb-pool-start") in calls
    assert pool._handle == 77 and pool.used_bytes() == 4096 + 512     # slab blocks still live
    d = pool.malloc(100)
    assert d.ptr == 0x9000000 + 512             # the pool now
    pool.close()
    assert ("slab free", 0x5000000) not in calls     # live slab blocks: the slab stays
    del b, c
    assert pool._warmup.live == 0
    pool._warmup.close()
    assert ("slab free", 0x5000000) in calls and calls.count(("slab", warmup.SLAB_BYTES)) == 1
    # a later pool of the same context: the allocator has started, no thread and no slab
    later = memory.MemoryPool()
    e = later.malloc(100)
    assert e.ptr == 0x9000000 + 512 and later._warmup._thread is None
    assert calls.count(("slab", warmup.SLAB_BYTES)) == 1


@gpu
def test_free_all_blocks_after_streams_are_gone():
    """Small arrays freed on user streams that are then dropped: free_all_blocks and new
    streams' allocations work (a dead stream's handle once crashed the process here)."""
    pool = gp.get_default_memory_pool()
    for trial in range(12):
        s = gp.Stream(non_blocking=True)
        with s:
            x = gp.arange(1000 + trial, dtype=np.float32)
            y = (x * 2).sum()
            assert float(y) == float(np.arange(1000 + trial, dtype=np.float32).sum() * 2)
            del x, y
        s.synchronize()
        del s
        gc.collect()
    pool.free_all_blocks()
    assert pool.n_free_blocks() == 0
    with gp.Stream() as s2:
        z = gp.ones(777, np.float32)
        assert float(z.sum()) == 777.0
    s2.synchronize()


@gpu
def test_pool_limit():
    pool = gp.get_default_memory_pool()
    try:
        pool.set_limit(size=64 << 20)
        a = gp.empty(8 << 20, np.float32)             # 32 MiB: fits
        with pytest.raises(gp.cuda.OutOfMemoryError, match="limit set to"):
            gp.empty(10 << 20, np.float32)            # 40 MiB more: past 64 MiB
        with pytest.raises(MemoryError):
            gp.ones(10 << 20, np.float32)
        b = gp.ones(4 << 20, np.float32)              # 16 MiB: fits
        assert float(b.sum()) == 4 << 20
        del a
        c = gp.ones(10 << 20, np.float32)             # room again once a is freed
        assert c.size == 10 << 20
        pool.set_limit(fraction=0.5)
        assert abs(pool.get_limit() - gp.cuda.Device().mem_info[1] // 2) <= 1
    finally:
        pool.set_limit()
    assert pool.get_limit() == 0 and pool.n_free_blocks() >= 0


@gpu
def test_managed_memory_allocator():
    """CuPy's unified-memory idiom: every array in managed memory (readable from the host
    after a synchronize), results as NumPy's; using_allocator restores the pool after; CuPy's
    reset idiom set_allocator(pool.malloc) is the pool itself."""
    h = rng.standard_normal(100_000).astype(np.float32)
    pool = gp.get_default_memory_pool()
    try:
        gp.cuda.set_allocator(gp.cuda.MemoryPool(gp.cuda.malloc_managed).malloc)
        assert gp.cuda.get_allocator() is not None
        x = gp.asarray(h)
        y = gp.sqrt(gp.abs(x)) + 1
        assert isinstance(y.data.mem, gp.cuda.ManagedMemory)
        gp.synchronize()
        host_view = np.ctypeslib.as_array((ctypes.c_float * y.size).from_address(y.data.ptr))
        np.testing.assert_allclose(host_view, np.sqrt(np.abs(h)) + 1, rtol=1e-6)
        # the kernels' temporary buffers come from the allocator too (a sum's partials, a
        # fused reduction's, cuFFT's work area)
        assert float(y.sum()) == pytest.approx(float((np.sqrt(np.abs(h)) + 1).sum()), rel=1e-4)
        sq = gp.fuse(lambda a: (a * a).sum())
        assert float(sq(x)) == pytest.approx(float((h.astype(np.float64) ** 2).sum()), rel=1e-4)
        np.testing.assert_allclose(gp.fft.rfft(x[:4096]).get(), np.fft.rfft(h[:4096]),
                                   rtol=1e-3, atol=1e-3)
        gp.cuda.set_allocator(pool.malloc)               # CuPy's way back to the pool
        assert gp.cuda.get_allocator() is None
        with gp.cuda.using_allocator(gp.cuda.malloc_managed):
            z = gp.ones(10)
        assert isinstance(z.data.mem, gp.cuda.ManagedMemory) and gp.cuda.get_allocator() is None
        assert not isinstance(gp.ones(10).data.mem, gp.cuda.ManagedMemory)
    finally:
        gp.cuda.set_allocator(None)


@gpu
def test_a_readback_never_waited_for_returns_its_buffer():
    """A small copy to the host begun and then dropped (its caller raised before waiting):
    its page-locked buffer goes back to the device's list, once, with the copy done."""
    from gpunb.core.runtime import driver, memory

    x = gp.asarray(np.arange(16, dtype=np.int32))
    memory.Readback(x.data.ptr, x.nbytes).wait()         # one buffer in the list
    staging = driver.context().staging
    before = len(staging)
    r = memory.Readback(x.data.ptr, x.nbytes)           # takes it
    assert len(staging) == before - 1
    del r
    gc.collect()
    assert len(staging) == before
    np.testing.assert_array_equal(np.frombuffer(memory.Readback(x.data.ptr, x.nbytes).wait(), np.int32),
                                  np.arange(16))
    assert len(staging) == before
