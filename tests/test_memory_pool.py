"""The pool's cache of freed small blocks and CUDA's per-thread default stream (handle 2: one
handle, a different stream in each thread). A block freed by one thread's default stream must
never go to another thread's, which is not ordered after the first thread's queued work. Without
a GPU: the keys, the foreign drop and the flush, with the driver's calls recorded; on the GPU: two
threads at once, results against NumPy."""

import threading
from types import SimpleNamespace

import numpy as np
import pytest

import gpunb as gp
from gpunb.core.runtime import driver, fastcall, memory


class _Driver:
    """fastcall's allocate/free and the device wait, recorded."""

    def __init__(self, monkeypatch):
        self.next, self.frees, self.waits = 0x1000, [], 0
        monkeypatch.setattr(fastcall, "allocate", self.allocate)
        monkeypatch.setattr(fastcall, "free", lambda ptr, s: self.frees.append((ptr, s)))
        monkeypatch.setattr(memory, "_wait_device", self.wait)
        monkeypatch.setattr(driver, "as_stream", lambda s: SimpleNamespace(handle=s))

    def allocate(self, pool, size, stream):
        self.next += 1 << 21
        return self.next

    def wait(self):
        self.waits += 1


def _pool():
    pool = memory.MemoryPool()
    pool._handle = 1            # started: no slab, no driver
    return pool


def _in_thread(fn):
    out = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join()
    return out[0]


def test_per_thread_default_stream_blocks_stay_with_their_thread(monkeypatch):
    d, pool = _Driver(monkeypatch), _pool()
    a = pool.malloc(1000, 2)
    ptr, key = a.ptr, (2, threading.get_ident())
    assert a._key == key and a.size == 1024
    del a
    assert pool._free == {(key, 1024): [ptr]} and not d.frees
    # another thread's default stream: a new block, never this thread's cached one
    theirs = _in_thread(lambda: pool.malloc(1000, 2))
    assert theirs.ptr != ptr and theirs._key[1] != threading.get_ident()
    again = pool.malloc(1000, 2)                  # this thread gets its own back
    assert again.ptr == ptr and pool._free[(key, 1024)] == []
    # an ordinary stream's blocks are keyed by handle as before
    b = pool.malloc(1000, 7)
    bp = b.ptr
    del b
    assert pool._free[(7, 1024)] == [bp] and pool.malloc(1000, 7).ptr == bp


def test_a_block_dropped_in_another_thread_goes_back_to_its_own(monkeypatch):
    d, pool = _Driver(monkeypatch), _pool()
    small, big = pool.malloc(100, 2), pool.malloc(memory.CACHED_LIMIT + 1, 2)
    sp, bp, key = small.ptr, big.ptr, small._key
    box = [small, big]
    del small, big
    _in_thread(lambda: box.clear())               # the last references go in another thread
    # no free on the dropping thread's stream: both cached for their thread
    assert not d.frees
    assert pool._free[(key, 512)] == [sp] and pool._free[(key, memory.CACHED_LIMIT + 1)] == [bp]
    # a large block dropped by its own thread goes straight back to the driver
    mine = pool.malloc(memory.CACHED_LIMIT + 5, 2)
    mp = mine.ptr
    del mine
    assert d.frees == [(mp, 2)]
    # freeing another thread's blocks waits for the device first (no stream orders them here)
    other = _in_thread(lambda: pool.malloc(100, 2))
    op, okey = other.ptr, other._key
    _in_thread(lambda: other.__del__())
    assert pool._free[(okey, 512)] == [op]
    d.frees.clear()
    pool._flush_stream(key)                       # this thread's own: no wait
    assert d.waits == 0 and sorted(d.frees) == sorted([(sp, 2), (bp, 2)])
    pool._flush()
    assert d.waits == 1 and d.frees[-1] == (op, 2) and pool._free == {}


def test_closed_pool_frees_per_thread_blocks_at_once(monkeypatch):
    d, pool = _Driver(monkeypatch), _pool()
    a = pool.malloc(100, 2)
    ptr = a.ptr
    pool._closed = True
    del a
    assert d.frees == [(ptr, 2)] and pool._free == {}


gpu = pytest.mark.gpu


@gpu
def test_two_threads_on_their_default_streams_never_share_a_block():
    """Each thread allocates, computes and frees small arrays on ``Stream.ptds`` in a loop,
    checking every result against NumPy; and a block one thread freed is never handed to the
    other while both run."""
    pool = gp.get_default_memory_pool()
    seen, errors = {}, []
    rng = np.random.default_rng(7)
    xs = [rng.standard_normal(4096).astype(np.float32) for _ in range(2)]

    def work(k):
        mine = seen.setdefault(k, set())
        try:
            with gp.cuda.Stream.ptds:
                x = gp.asarray(xs[k])
                for i in range(200):
                    y = gp.sin(x) * (i + 1) + k
                    mine.add(y.data.ptr)
                    z = gp.cumsum(y)
                    np.testing.assert_allclose(z.get(), np.cumsum(np.sin(xs[k]) * (i + 1) + k,
                                                                  dtype=np.float32), rtol=1e-3, atol=1e-2)
        except Exception as e:            # re-raised below, in the test's thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert not (seen[0] & seen[1])
    keys = {k[0] for k in pool._free if type(k[0]) is tuple}
    assert len(keys) >= 2                 # each thread's blocks cached under its own key
    pool.free_all_blocks()
    assert not any(type(k[0]) is tuple for k in pool._free)
