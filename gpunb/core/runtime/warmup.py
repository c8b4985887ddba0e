"""The first allocations of a device context, while the driver's stream-ordered allocator
starts up.

A process's first ``cuMemAllocFromPoolAsync`` costs about 11 ms on an H100 whatever the pool
(the default one, a created one, any size: measured), against 0.2-0.6 ms for a plain
``cuMemAlloc``: it is the allocator's one-time start-up, and it was most of what the first
``asarray`` spent above the driver's floor (``cuInit`` and the context). So the pool's first
use starts that allocation on a background thread (ctypes releases the GIL for the call) and,
until it is done, hands out blocks carved from one ``cuMemAlloc`` slab of :data:`SLAB_BYTES`:
memory any stream may use at once, never recycled (a freed slab block is dropped), freed with
the pool. A request the slab cannot hold, a graph capture, a limit set, or the start-up
failing: the caller waits for the thread and takes the pool, as it always did.
"""

from __future__ import annotations

import ctypes
import threading

from . import libcuda

SLAB_BYTES = 1 << 20
_ALIGN = 512            # the pool's rounding: a slab block is aligned as a pool block is
_started: set[int] = set()      # contexts whose allocator has started: a later pool needs no slab


class Warmup:
    """The start-up of one device's pool: the background thread and the slab.

    ``done`` turns True (from the thread) once the pool's first allocation and free were
    queued; :meth:`carve` hands out slab blocks until then."""

    __slots__ = ("done", "error", "_thread", "_slab", "_next", "live", "_ctx")

    def __init__(self, ctx_handle: int, pool: int, stream: int):
        self.done = False
        self.error = None
        self._slab = 0          # the slab's address, made on the first carve
        self._next = 0          # its next free byte
        self.live = 0           # bytes of slab blocks not yet dropped (the pool's used_bytes)
        self._ctx = ctx_handle
        self._thread = None
        if ctx_handle in _started:
            self.done = True
            return
        self._thread = threading.Thread(target=self._run, args=(pool, stream),
                                        name="gpunb-pool-start", daemon=True)
        self._thread.start()

    def _run(self, pool: int, stream: int) -> None:
        try:
            d = libcuda.lib()
            libcuda.check(d.cuCtxSetCurrent(self._ctx), "making the device's context current")
            ptr = ctypes.c_uint64()
            libcuda.check(d.cuMemAllocFromPoolAsync(ctypes.byref(ptr), _ALIGN, pool, stream),
                          "the memory pool's first allocation")
            libcuda.check(d.cuMemFreeAsync(ptr.value, stream), "the memory pool's first free")
            _started.add(self._ctx)
        except Exception as e:      # the caller's own pool allocation raises it where it matters
            self.error = e
        self.done = True

    def wait(self) -> None:
        """Until the thread is done (its error, if any, is left for the pool's own calls)."""
        if self._thread is not None:
            self._thread.join()

    def carve(self, nbytes: int) -> tuple[int, int]:
        """(address, size) of a slab block of ``nbytes`` rounded as the pool rounds, or (0, 0)
        when the slab cannot hold it (the caller then waits and uses the pool)."""
        size = max((nbytes + _ALIGN - 1) & ~(_ALIGN - 1), _ALIGN)
        if self._slab == 0:
            ptr = ctypes.c_uint64()
            if libcuda.lib().cuMemAlloc_v2(ctypes.byref(ptr), SLAB_BYTES):
                return 0, 0         # (out of memory or worse: the pool's call will say)
            self._slab = self._next = ptr.value
        if self._next + size > self._slab + SLAB_BYTES:
            return 0, 0
        ptr, self._next = self._next, self._next + size
        self.live += size
        return ptr, size

    def close(self) -> None:
        """Free the slab, unless a block of it is still alive (arrays outlive a context reset:
        the slab then stays, 1 MiB)."""
        self.wait()
        if self._slab and not self.live:
            d = libcuda.lib()
            if not d.cuCtxSetCurrent(self._ctx):
                d.cuMemFree_v2(self._slab)
            self._slab = 0
