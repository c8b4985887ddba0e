"""Device memory: the driver's stream-ordered memory pool, plus copies and fills, all through
:mod:`.libcuda` (the first array imports neither cuda.core nor cuda.bindings). A freed block
goes back to the pool and is reused without cudaFree; the pool keeps what it reserved (release
threshold raised) until ``free_all_blocks``.
"""

from __future__ import annotations

from . import driver, fastcall, libcuda


CACHED_LIMIT = 1 << 20   # blocks up to this size are recycled by gpunb without a driver call


class MemoryPool:
    """The device's stream-ordered memory pool, with CuPy's ``MemoryPool`` inspection methods.

    Creating one touches nothing; the GPU is used on the first allocation or query.
    """

    def __init__(self, device_id: int | None = None):
        self._device_id = device_id
        self.device_id = device_id if device_id is not None else 0
        self._closed = False
        self._handle = None      # the CUmemoryPool as an int, for the allocation hot path
        # Freed small blocks, kept per (stream, size) and handed out again with no driver call
        # (a driver alloc plus free costs microseconds: more than a small ufunc's kernel).
        # Reuse on the same stream is ordered after the previous user's work by the stream.
        self._free: dict[tuple[int, int], list[int]] = {}
        self._cached = 0
        # streams under graph capture (runtime/graphs.py): their blocks are the graph's own
        # allocations, never recycled here (a recycled block's address would be baked into
        # the graph while something else reuses it)
        self._capturing: set[int] = set()

    def _resource(self) -> int:
        """The device's pool handle, set up on first use: it keeps freed memory reserved (as
        CuPy's pool does) instead of returning it to the driver at every synchronize."""
        if self._handle is None:
            ctx = driver.context(self._device_id)
            self._handle = libcuda.device_pool(ctx.info.ordinal)
            self._device_id = self.device_id = ctx.info.ordinal
        return self._handle

    def malloc(self, nbytes: int, stream=None) -> fastcall.Block:
        """A block of ``nbytes`` (at least 1), ordered on ``stream``. On out of memory, frees
        the pool's cached blocks and retries once, then raises MemoryError."""
        pool = self._handle
        if pool is None:
            self._resource()
            pool = self._handle
        if stream is None:
            st = driver._current.stream     # None: the default stream (an owner never needed)
            s = driver.stream_handle()
        else:
            st = driver.as_stream(stream)
            s = int(st.handle)
        if self._capturing and s in self._capturing:
            block = fastcall.allocate(pool, max(nbytes, 1), s, st, None)
            if block is None:
                raise MemoryError(f"out of GPU memory allocating {nbytes:,} bytes in a graph capture")
            return block
        if nbytes <= CACHED_LIMIT:
            size = (nbytes + 511) & ~511 if nbytes > 0 else 512
            cached = self._free.get((s, size))
            if cached:
                self._cached -= size
                return fastcall.Block(cached.pop(), size, s, st, self)
        else:
            size = nbytes
        block = fastcall.allocate(pool, size, s, st, self if size <= CACHED_LIMIT else None)
        if block is not None:
            return block
        self.free_all_blocks()
        block = fastcall.allocate(pool, size, s, st, self if size <= CACHED_LIMIT else None)
        if block is not None:
            return block
        free, total = mem_info()
        raise MemoryError(
            f"out of GPU memory allocating {size:,} bytes: {free:,} bytes free of {total:,} "
            f"(this pool holds {self.used_bytes():,} bytes in use, {self.total_bytes():,} "
            "reserved)")

    def _release(self, handle: int, size: int, stream: int) -> None:
        """Called by a cached-size block that is no longer referenced."""
        if self._closed:
            fastcall.free(handle, stream)
            return
        self._free.setdefault((stream, size), []).append(handle)
        self._cached += size

    def close(self) -> None:
        """Return the cached blocks to the driver, and from now on every block freed (this
        pool's device context is gone: see :func:`driver.reset_contexts`)."""
        self._closed = True
        self._flush()

    def _flush(self) -> None:
        """Return the cached small blocks to the driver's pool (stream-ordered frees)."""
        free, self._free, self._cached = self._free, {}, 0
        for (stream, _), handles in free.items():
            for h in handles:
                fastcall.free(h, stream)

    def used_bytes(self) -> int:
        """Bytes in live allocations."""
        return libcuda.pool_attribute(self._resource(), libcuda.POOL_USED_MEM_CURRENT) - self._cached

    def total_bytes(self) -> int:
        """Bytes the pool holds from the driver (in use plus cached)."""
        return libcuda.pool_attribute(self._resource(), libcuda.POOL_RESERVED_MEM_CURRENT)

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
                pool = ctx.pool = MemoryPool(ctx.info.ordinal)
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
