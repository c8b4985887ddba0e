"""Scratch memory of split reductions: zeroed tickets, then partial states.

A reduction with too few outputs to fill the device splits each output's elements over
``S`` blocks; each block writes a partial state and takes a ticket (``atomicInc`` on a
counter of its output group), and the block that takes the last ticket combines the ``S``
states and writes the output, in the same launch. A second launch to combine them cost
about 4 us of GPU time on an H100 (a 2**20-element float32 sum took 21 us, 10.5 without
it) and a launch of host time. The counters must be zero when a launch starts; the last
block's ``atomicInc`` wraps its counter back to zero, so a buffer that started zeroed stays
so after every launch that completes.

Hence one buffer per stream, kept: launches on one stream run one after another, so none
of them sees another's tickets or states, and the buffer is zeroed once, when it is made or
grown. Elsewhere (a stream under graph capture, whose kernels would otherwise bake in a
buffer that other work on that stream keeps using; a scratch larger than
:data:`KEEP_LIMIT`; a custom allocator) each call gets a block of its own from the pool and
a memset of its tickets, ordered before the launch on the same stream.
"""

from __future__ import annotations

from ..abi import TICKET_BYTES, TICKETS  # noqa: F401 (the tickets' layout, shared with codegen)
from . import driver, libcuda, memory

KEEP_LIMIT = 8 << 20        # kept per stream up to this size (bigger ones: a block per call)
KEEP_STREAMS = memory.MAX_STREAMS


def get(nbytes: int, stream: int | None = None):
    """A block of at least ``nbytes`` (tickets included: ``TICKET_BYTES + ...``) on the
    stream with handle ``stream`` (default: the current one), its first ``TICKET_BYTES``
    zero when the launch ordered next on that stream starts. Hold it until the launch is
    queued (a block of its own is freed, stream-ordered, when dropped)."""
    pool = memory.get_default_memory_pool()
    s = driver.stream_handle() if stream is None else stream
    key = memory.stream_key(s)      # (Stream.ptds: one handle, a stream in each thread)
    kept = pool._scratch.get(key)
    if kept is not None and kept.size >= nbytes and s not in pool._capturing:
        return kept
    if nbytes > KEEP_LIMIT or pool._allocator is not None or s in pool._capturing:
        block = pool.malloc(nbytes, s)
        _zero(block.ptr, s)
        return block
    if kept is None and len(pool._scratch) >= KEEP_STREAMS:
        pool._scratch.pop(next(iter(pool._scratch)))     # (freed after its stream's launches)
    size = max(nbytes, 2 * kept.size if kept is not None else 64 << 10)
    block = pool._scratch[key] = pool.malloc(min(size, KEEP_LIMIT), s)
    _zero(block.ptr, s)
    return block


def _zero(ptr: int, stream: int) -> None:
    libcuda.check(libcuda.lib().cuMemsetD32Async(ptr, 0, TICKETS, stream), "zeroing a reduction's tickets")
