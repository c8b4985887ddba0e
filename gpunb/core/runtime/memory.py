"""Device memory: the driver's stream-ordered memory pool, plus copies and fills, all through
:mod:`.libcuda` (the first array imports neither cuda.core nor cuda.bindings). A freed block
goes back to the pool and is reused without cudaFree; the pool keeps what it reserved (release
threshold raised) until ``free_all_blocks``.
"""

from __future__ import annotations

import ctypes

import numpy as np

from ..errors import OutOfMemoryError
from . import driver, fastcall, libcuda, warmup


CACHED_LIMIT = 1 << 20   # blocks up to this size are recycled by gpunb without a driver call
MAX_STREAMS = 8          # streams whose freed blocks are cached at one time (see MemoryPool._streams)
PER_THREAD = 2           # CU_STREAM_PER_THREAD: each thread's own default stream behind one handle


def stream_key(s: int):
    """Stream handle ``s`` as the pool's per-stream tables key it (cached blocks, scratch):
    the handle itself, but (2, thread) for handle 2, a different stream in each thread."""
    return (s, driver.get_ident()) if s == PER_THREAD else s


class MemoryPointer:
    """Where an array's data starts: ``ptr`` (an int address) and the buffer that owns it.

    CuPy's ``cupy.cuda.MemoryPointer`` interface: pointer arithmetic (``p + nbytes``), ``mem``
    (the owning buffer), and the raw copies ``copy_from_device``, ``copy_from_host``,
    ``copy_from``, ``copy_to_host``, ``memset`` (each also ``*_async`` on a stream). Host memory
    is an int address, a ``ctypes.c_void_p`` or a NumPy array. The synchronous forms wait for
    the copy as CuPy's do; the ``_async`` forms are ordered on ``stream`` (default: the current
    stream) and return at once."""

    __slots__ = ("ptr", "owner", "device_id")

    def __init__(self, ptr: int, owner=None, device_id: int = 0):
        self.ptr, self.owner, self.device_id = int(ptr), owner, device_id

    def __int__(self) -> int:
        return self.ptr

    def __repr__(self) -> str:
        return f"<gpunb.MemoryPointer 0x{self.ptr:x} device={self.device_id}>"

    @property
    def mem(self):
        """The buffer that owns this memory (keeps it alive)."""
        return self.owner

    def __add__(self, offset: int) -> "MemoryPointer":
        return MemoryPointer(self.ptr + int(offset), self.owner, self.device_id)

    __radd__ = __add__

    def __sub__(self, offset: int) -> "MemoryPointer":
        return MemoryPointer(self.ptr - int(offset), self.owner, self.device_id)

    def copy_from_device_async(self, src, size: int, stream=None) -> None:
        """Copy ``size`` bytes from device memory ``src`` (a MemoryPointer or address) here."""
        copy_device(self.ptr, int(src), _size(size), stream)

    def copy_from_host_async(self, mem, size: int, stream=None) -> None:
        """Copy ``size`` bytes from host memory ``mem`` here."""
        copy_host_to_device(self.ptr, _host_address(mem), _size(size), stream)

    def copy_to_host_async(self, mem, size: int, stream=None) -> None:
        """Copy ``size`` bytes from here to host memory ``mem`` (valid once the stream reaches it)."""
        copy_device_to_host(_host_address(mem), self.ptr, _size(size), stream, wait=False)

    def memset_async(self, value: int, size: int, stream=None) -> None:
        """Set ``size`` bytes here to the byte ``value``."""
        fill_bytes(self.ptr, int(value), _size(size), stream)

    def copy_from_async(self, mem, size: int, stream=None) -> None:
        """Copy ``size`` bytes from ``mem``: device memory if a MemoryPointer, else host """
        if isinstance(mem, MemoryPointer):
            self.copy_from_device_async(mem, size, stream)
        else:
            self.copy_from_host_async(mem, size, stream)

    def copy_from_device(self, src, size: int) -> None:
        self.copy_from_device_async(src, size)
        wait_stream(None)

    def copy_from_host(self, mem, size: int) -> None:
        self.copy_from_host_async(mem, size)
        wait_stream(None)

    def copy_from(self, mem, size: int) -> None:
        self.copy_from_async(mem, size)
        wait_stream(None)

    def copy_to_host(self, mem, size: int) -> None:
        copy_device_to_host(_host_address(mem), self.ptr, _size(size), None, wait=True)

    def memset(self, value: int, size: int) -> None:
        self.memset_async(value, size)
        wait_stream(None)




def _size(size) -> int:
    n = int(size)
    if n < 0:
        raise ValueError(f"size must not be negative, got {n}")
    return n


def _host_address(mem) -> int:
    """A host pointer as an int: from an int, a ctypes pointer or a NumPy array."""
    if isinstance(mem, np.ndarray):
        if not mem.flags.c_contiguous:
            raise ValueError("host memory must be a C-contiguous NumPy array")
        return mem.ctypes.data
    value = getattr(mem, "value", mem)      # ctypes.c_void_p
    if value is None or isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"host memory must be an address (int), a ctypes pointer or a NumPy "
                        f"array, not {type(mem).__name__}")
    return value


class Allocation(MemoryPointer):
    """A block of pool memory that is also the MemoryPointer to its start (its own ``owner``):
    one object per allocation, because a small call's host time counts every object. Freed
    (stream-ordered, on the stream it was allocated on) when the last reference goes; views
    keep it alive through their pointers' ``owner``."""

    __slots__ = ("size", "_stream", "_keep", "_pool", "__weakref__")

    owner = property(lambda self: self)
    mem = owner
    handle = property(lambda self: self.ptr)

    def __init__(self, ptr: int, size: int, stream: int, keep, pool, device_id: int):
        # keep: the stream object, alive until the stream-ordered free is queued;
        # pool: the MemoryPool that recycles the block (None: freed to the driver)
        self.ptr, self.size, self._stream, self._keep, self._pool, self.device_id = (
            ptr, size, stream, keep, pool, device_id)

    def __del__(self):
        ptr = self.ptr
        if not ptr:
            return
        self.ptr = 0
        pool = self._pool
        if pool is None or pool._closed:
            fastcall.free(ptr, self._stream)
            return
        key = (self._stream, self.size)     # MemoryPool._free, inline (host time)
        cached = pool._free.get(key)
        if cached is None:
            pool._first_of(key, ptr, self._keep)
        else:
            cached.append(ptr)

    def __repr__(self) -> str:
        return f"<gpunb allocation 0x{self.ptr:x} {self.size} bytes device={self.device_id}>"


_new_allocation = Allocation.__new__


class _PerThreadAllocation(Allocation):
    """A block ordered on handle 2, CUDA's per-thread default stream: one handle, a different
    stream in each thread. It is cached under its thread's key (``(2, thread)``, as CuPy's pool
    keys per-thread streams), so that another thread's default stream, which is not ordered
    after this thread's queued work, never gets it. Dropped in another thread, even a large
    block goes to its thread's cache instead of a free that the dropping thread's stream
    would order wrongly; the pool frees those with the device idle (``_flush``)."""

    __slots__ = ("_key",)

    def __del__(self):
        ptr = self.ptr
        if not ptr:
            return
        self.ptr = 0
        pool, key = self._pool, self._key
        if pool._closed or (self.size > CACHED_LIMIT and key[1] == driver.get_ident()):
            fastcall.free(ptr, PER_THREAD)
            return
        cached = pool._free.get((key, self.size))
        if cached is None:
            pool._first_of((key, self.size), ptr, self._keep)
        else:
            cached.append(ptr)


class _SlabAllocation(Allocation):
    """A block of the start-up slab (:mod:`.warmup`; ``_keep`` holds the :class:`~.warmup.Warmup`):
    dropped, not recycled, when the last reference goes."""

    __slots__ = ()

    def __del__(self):
        if self.ptr:
            self.ptr = 0
            self._keep.live -= self.size


class MemoryPool:
    """The device's stream-ordered memory pool, with CuPy's ``MemoryPool`` inspection methods.

    ``MemoryPool(allocator)`` (CuPy's form, e.g. ``MemoryPool(gpunb.cuda.malloc_managed)``)
    hands out ``allocator(nbytes)`` instead, uncached; the inspection methods then answer 0.
    Creating one touches nothing; the GPU is used on the first allocation or query.
    """

    def __init__(self, allocator=None, *, device_id: int | None = None):
        if allocator is not None and not callable(allocator):
            raise TypeError(f"allocator must be a callable allocator(nbytes) -> MemoryPointer, "
                            f"not {type(allocator).__name__}")
        self._allocator = allocator
        self._device_id = device_id
        self.device_id = device_id if device_id is not None else 0
        self._closed = False
        self._handle = None      # the CUmemoryPool as an int, for the allocation hot path
        # Freed small blocks, kept per (stream, size) and handed out again with no driver call
        # (a driver alloc plus free costs microseconds: more than a small ufunc's kernel).
        # Reuse on the same stream is ordered after the previous user's work by the stream.
        self._free: dict[tuple[int, int], list[int]] = {}
        # The stream objects of those blocks' streams, kept alive while blocks are cached
        # for them: a stream destroyed under its cached blocks would leave a dead handle to
        # free them on (a crash in free_all_blocks) and to hand them out on (a new stream at
        # the same address). At most MAX_STREAMS; the oldest one's blocks are freed first.
        self._streams: dict[int, object] = {}
        # streams under graph capture (runtime/graphs.py): their blocks are the graph's own
        # allocations, never recycled here (a recycled block's address would be baked into
        # the graph while something else reuses it)
        self._capturing: set[int] = set()
        self._scratch: dict = {}    # split reductions' per stream (.scratch; ptds: per thread)
        self._limit = 0         # set_limit's bytes (0: none)
        self._pending = None    # the pool handle while the allocator starts (see _first_blocks)
        self._warmup = None     # that start-up (warmup.Warmup), made on first use

    def _resource(self) -> int:
        """The device's pool handle, set up on first use: it keeps freed memory reserved (as
        CuPy's pool does) instead of returning it to the driver at every synchronize. Waits
        for the allocator's start-up."""
        if self._handle is None:
            self._start()
            self._warmup.wait()
            self._handle = self._pending
        return self._handle

    def _start(self) -> None:
        """First use: the pool's handle and the allocator's start-up thread."""
        if self._pending is None:
            with driver._lock:
                if self._pending is None:
                    ctx = driver.context(self._device_id)
                    pool = libcuda.device_pool(ctx.info.ordinal)
                    self._device_id = self.device_id = ctx.info.ordinal
                    self._warmup = warmup.Warmup(ctx.handle, pool, ctx.default_handle)
                    self._pending = pool

    def _first_blocks(self, nbytes: int):
        """While the allocator starts (:mod:`.warmup`): a slab block of ``nbytes``; None once
        the pool's handle is set (after the start-up, or at once when the slab will not do)."""
        self._start()
        w = self._warmup
        if not w.done and not self._limit and not self._capturing:
            ptr, size = w.carve(nbytes)
            if ptr:
                return _SlabAllocation(ptr, size, 0, w, self, self.device_id)
        w.wait()
        self._handle = self._pending
        return None

    def malloc(self, nbytes: int, stream=None) -> Allocation:
        """A block of ``nbytes`` (at least 1), ordered on ``stream``, as its MemoryPointer. On
        out of memory, frees the pool's cached blocks and retries once, then raises
        MemoryError."""
        custom = self._allocator
        if custom is not None:          # set_allocator's or MemoryPool(allocator)'s
            return custom(max(nbytes, 1))
        pool = self._handle
        if pool is None:
            block = self._first_blocks(nbytes)
            if block is not None:
                return block
            pool = self._handle
        if stream is None:
            # driver.stream_handle(), inline: the stream object is wanted too (one read each)
            cur = driver.main if driver.get_ident() == driver.MAIN else driver._current
            st = cur.stream             # None: the default stream (an owner never needed)
            if st is not None:
                s = int(st.handle)
            elif cur.ctx is driver.active is not None:
                s = cur.ctx.default_handle
            else:
                s = driver.stream_handle()
        else:
            st = driver.as_stream(stream)
            s = int(st.handle)
        if self._capturing and s in self._capturing:
            ptr = fastcall.allocate(pool, max(nbytes, 1), s)
            if not ptr:
                raise OutOfMemoryError(f"out of GPU memory allocating {nbytes:,} bytes in a graph capture")
            return Allocation(ptr, max(nbytes, 1), s, st, None, self.device_id)
        if nbytes <= CACHED_LIMIT:
            size = (nbytes + 511) & ~511 if nbytes > 0 else 512
            if s == PER_THREAD:
                return self._per_thread(size, st)
            cached = self._free.get((s, size))
            if cached:
                # Allocation(...) without its __init__ frame (1.1k of a + b's 26.6k instructions)
                block = _new_allocation(Allocation)
                block.ptr, block.size, block._stream, block._keep, block._pool, block.device_id = (
                    cached.pop(), size, s, st, self, self.device_id)
                return block
            recycler = self
        elif s == PER_THREAD:
            return self._per_thread(nbytes, st)
        else:
            size, recycler = nbytes, None
        return Allocation(self._allocate(size, s), size, s, st, recycler, self.device_id)

    def _allocate(self, size: int, s: int) -> int:
        """``size`` bytes from the driver's pool on stream handle ``s``; on out of memory, the
        cached blocks are freed and it tries once more, then raises OutOfMemoryError."""
        if self._limit:
            self._within_limit(size)
        ptr = fastcall.allocate(self._handle, size, s)
        if not ptr:
            self.free_all_blocks()
            ptr = fastcall.allocate(self._handle, size, s)
            if not ptr:
                free, total = mem_info()
                raise OutOfMemoryError(
                    f"out of GPU memory allocating {size:,} bytes: {free:,} bytes free of {total:,} "
                    f"(this pool holds {self.used_bytes():,} bytes in use, {self.total_bytes():,} "
                    "reserved)")
        return ptr

    def _per_thread(self, size: int, st) -> Allocation:
        """A block of ``size`` bytes (rounded when cached) on this thread's default stream
        (see :class:`_PerThreadAllocation`)."""
        key = stream_key(PER_THREAD)
        cached = self._free.get((key, size)) if size <= CACHED_LIMIT else None
        block = _new_allocation(_PerThreadAllocation)
        block.ptr = cached.pop() if cached else self._allocate(size, PER_THREAD)
        block.size, block._stream, block._keep, block._pool, block.device_id, block._key = (
            size, PER_THREAD, st, self, self.device_id, key)
        return block

    def _within_limit(self, size: int) -> None:
        """Raise OutOfMemoryError if ``size`` more bytes would pass the limit (the cached
        blocks are given back first, as CuPy's pool frees its free blocks)."""
        held = libcuda.pool_attribute(self._handle, libcuda.POOL_USED_MEM_CURRENT)
        if held + size <= self._limit:
            return
        self._flush()
        live = self.used_bytes()
        if live + size > self._limit:
            raise OutOfMemoryError(
                f"out of GPU memory allocating {size:,} bytes: {live:,} bytes in use, limit set "
                f"to {self._limit:,} bytes (MemoryPool.set_limit)")

    def set_limit(self, size=None, fraction=None) -> None:
        """Limit the bytes this pool hands out (CuPy's ``MemoryPool.set_limit``): ``size``
        in bytes, or ``fraction`` of the device's memory; neither, or 0, removes the limit.
        An allocation past it raises OutOfMemoryError."""
        if size is not None and fraction is not None:
            raise ValueError("size and fraction cannot be specified at one time")
        if fraction is not None:
            fraction = float(fraction)
            if not 0 <= fraction <= 1:
                raise ValueError(f"fraction must be between 0 and 1, not {fraction}")
            self._resource()
            size = int(mem_info()[1] * fraction)
        size = 0 if size is None else int(size)
        if size < 0:
            raise ValueError(f"size must be non-negative, not {size}")
        self._limit = size

    def get_limit(self) -> int:
        """The limit set by :meth:`set_limit` in bytes (0: none)."""
        return self._limit

    def n_free_blocks(self) -> int:
        """The number of cached free blocks (CuPy's ``MemoryPool.n_free_blocks``)."""
        return sum(len(handles) for handles in list(self._free.values()))

    def close(self) -> None:
        """Return the cached blocks to the driver, and from now on every block freed (this
        pool's device context is gone: see :func:`driver.reset_contexts`)."""
        self._closed = True
        self._flush()
        if self._warmup is not None:
            self._warmup.close()

    def _first_of(self, key: tuple[int, int], ptr: int, stream) -> None:
        """Cache ``ptr``, the first block of its (stream handle, size) ``key``, keeping
        ``stream`` (the stream object; None: the default stream, never destroyed) alive."""
        s = key[0]
        if stream is not None and s not in self._streams:
            if len(self._streams) >= MAX_STREAMS:
                self._flush_stream(next(iter(self._streams)))
            self._streams[s] = stream
        self._free[key] = [ptr]

    def _flush_stream(self, s) -> None:
        """Free the blocks cached for stream handle ``s`` (or per-thread key ``(2, thread)``)
        and let its stream object go."""
        self._scratch.pop(s, None)
        free = {k: self._free.pop(k) for k in [k for k in self._free if k[0] == s]}
        self._free_cached(free)
        self._streams.pop(s, None)

    def _flush(self) -> None:
        """Return the cached small blocks to the driver's pool (stream-ordered frees, each
        on its own stream, still alive: ``_streams`` holds it)."""
        self._scratch = {}
        free, self._free = self._free, {}
        self._free_cached(free)
        self._streams = {}

    @staticmethod
    def _free_cached(free: dict) -> None:
        me = stream_key(PER_THREAD)
        if any(type(s) is tuple and s != me for s, _ in free):
            # another thread's default stream has no handle here to order the frees on:
            # wait for the device, after which any stream will do
            _wait_device()
        for (s, _), handles in free.items():
            for h in handles:
                fastcall.free(h, s if type(s) is int else PER_THREAD)

    def used_bytes(self) -> int:
        """Bytes in live allocations."""
        if self._allocator is not None and self._handle is None:
            return 0
        return (libcuda.pool_attribute(self._resource(), libcuda.POOL_USED_MEM_CURRENT)
                - self._cached() + self._slab_live())

    def _slab_live(self) -> int:
        return self._warmup.live if self._warmup is not None else 0

    def _cached(self) -> int:
        """Bytes in the cached small blocks."""
        return sum(size * len(handles) for (_, size), handles in list(self._free.items()))

    def total_bytes(self) -> int:
        """Bytes the pool holds from the driver (in use plus cached)."""
        if self._allocator is not None and self._handle is None:
            return 0
        return (libcuda.pool_attribute(self._resource(), libcuda.POOL_RESERVED_MEM_CURRENT)
                + self._slab_live())      # the start-up slab's live blocks count as held

    def free_bytes(self) -> int:
        """Cached bytes ready for reuse."""
        return self.total_bytes() - self.used_bytes()

    def free_all_blocks(self) -> None:
        """Return every cached (unused) block to the driver."""
        pool = self._resource()
        self._flush()
        driver.synchronize()
        libcuda.check(libcuda.lib().cuMemPoolTrimTo(pool, 0), "trimming the memory pool")

    def __repr__(self) -> str:
        return f"<gpunb.MemoryPool device={self._device_id}>"


def _wait_device() -> None:
    driver.context()
    libcuda.check(libcuda.lib().cuCtxSynchronize(), "waiting to free another thread's blocks")


def get_default_memory_pool() -> MemoryPool:
    """The memory pool of the current device (CuPy's ``get_default_memory_pool``): one per
    device, kept in its context (so the first allocation, which picks the device, and every
    later one share it)."""
    ctx = driver.active or driver.context()
    pool = ctx.pool
    if pool is None:
        with driver._lock:
            pool = ctx.pool
            if pool is None:
                pool = ctx.pool = MemoryPool(device_id=ctx.info.ordinal)
    return pool


def mem_info() -> tuple[int, int]:
    """(free, total) bytes of device memory, as the driver reports them."""
    driver.device()
    free, total = driver.check(driver._driver_module().cuMemGetInfo(), "memory query")
    return int(free), int(total)


def _stream_handle(stream) -> int:
    if stream is None:
        return driver.stream_handle()
    return int(driver.as_stream(stream).handle)


def _sync(handle: int) -> None:
    libcuda.check(libcuda.lib().cuStreamSynchronize(handle), "a stream synchronize")


def copy_to_device(dst_ptr: int, host, stream=None) -> None:
    """Copy a C-contiguous NumPy array into device memory (ordered on ``stream``)."""
    if host.nbytes:
        copy_host_to_device(dst_ptr, host.ctypes.data, host.nbytes, stream)


def copy_to_host(host, src_ptr: int, stream=None) -> None:
    """Copy device memory into a C-contiguous NumPy array; waits for the copy."""
    if host.nbytes:
        copy_device_to_host(host.ctypes.data, src_ptr, host.nbytes, stream)


def copy_host_to_device(dst_ptr: int, host_addr: int, nbytes: int, stream=None) -> None:
    """Copy ``nbytes`` from the host address ``host_addr`` to device memory (ordered on ``stream``)."""
    if nbytes:
        libcuda.check(libcuda.lib().cuMemcpyHtoDAsync_v2(dst_ptr, host_addr, nbytes, _stream_handle(stream)),
                      "copy to the device")


def copy_device_to_host(host_addr: int, src_ptr: int, nbytes: int, stream=None, wait=True) -> None:
    """Copy ``nbytes`` of device memory to the host address ``host_addr``; ``wait``: until done."""
    if nbytes:
        s = _stream_handle(stream)
        libcuda.check(libcuda.lib().cuMemcpyDtoHAsync_v2(host_addr, src_ptr, nbytes, s), "copy to the host")
        if wait:
            _sync(s)


class Readback:
    """A small device-to-host copy queued now and waited for later, so that work queued in
    between keeps the GPU busy while the host waits (a sort reads its digit histograms back
    while its first pass runs). The copy lands in a page-locked buffer of the device's (kept
    for reuse; cuMemHostAlloc is slow); :meth:`wait` returns a NumPy copy of it."""

    __slots__ = ("_buf", "_nbytes", "_ctx")

    def __init__(self, src_ptr: int, nbytes: int, stream=None):
        ctx = driver.context()
        buf = None
        with driver._lock:          # threads share the device's list
            for i, b in enumerate(ctx.staging):
                if b[1] >= nbytes:
                    buf = ctx.staging.pop(i)
                    break
        if buf is None:
            d, host, event = libcuda.lib(), ctypes.c_void_p(), ctypes.c_void_p()
            size = max(nbytes, 1 << 14)
            libcuda.check(d.cuMemHostAlloc(ctypes.byref(host), size, 0), "page-locked allocation")
            libcuda.check(d.cuEventCreate(ctypes.byref(event), 2), "event creation")   # no timing
            buf = (host.value, size, event.value)
        s = _stream_handle(stream)
        d = libcuda.lib()
        libcuda.check(d.cuMemcpyDtoHAsync_v2(buf[0], src_ptr, nbytes, s), "copy to the host")
        libcuda.check(d.cuEventRecord(buf[2], s), "event record")
        self._buf, self._nbytes, self._ctx = buf, nbytes, ctx

    def __del__(self):
        # never waited for (its caller raised in between, e.g. solve's later allocations):
        # the buffer goes back to the device's list once its copy is done, not leaked
        buf, self._buf = getattr(self, "_buf", None), None
        if buf is not None:
            try:
                libcuda.lib().cuEventSynchronize(buf[2])
                self._ctx.staging.append(buf)
            except Exception:       # (interpreter shutdown, a lost context: nothing to keep)
                pass

    def wait(self) -> bytes:
        """The bytes copied (waits for the copy; the buffer goes back to the device's list)."""
        buf, self._buf = self._buf, None
        try:
            libcuda.check(libcuda.lib().cuEventSynchronize(buf[2]), "waiting for a copy to the host")
            return ctypes.string_at(buf[0], self._nbytes)
        finally:
            self._ctx.staging.append(buf)


def wait_stream(stream=None) -> None:
    """Wait until the work queued on ``stream`` (default: the current stream) is done."""
    _sync(_stream_handle(stream))


def copy_device(dst_ptr: int, src_ptr: int, nbytes: int, stream=None) -> None:
    if nbytes:
        libcuda.check(libcuda.lib().cuMemcpyDtoDAsync_v2(dst_ptr, src_ptr, nbytes, _stream_handle(stream)),
                      "device-to-device copy")


def fill_bytes(ptr: int, value: int, nbytes: int, stream=None) -> None:
    if nbytes:
        libcuda.check(libcuda.lib().cuMemsetD8Async(ptr, value & 0xFF, nbytes, _stream_handle(stream)),
                      "memset")

