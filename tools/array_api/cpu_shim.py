"""Host buffers standing in for GPU memory, so that the conformance suite can be *collected*
on a machine without a GPU (``run.py --collect-only``): the suite builds a few arrays at
import (``xp.asarray(0).dtype``...). Copies and fills work; anything that launches a kernel
still raises :class:`gpunb.GPUUnavailableError`. Never used for a real run."""

from __future__ import annotations

import ctypes

import numpy as np

from gpunb.core.runtime import memory


class _Block(memory.MemoryPointer):
    """A host buffer as the pool's allocation: its own MemoryPointer (see memory.Allocation)."""

    __slots__ = ("buffer",)

    def __init__(self, nbytes: int):
        self.buffer = np.empty(max(int(nbytes), 1), np.uint8)
        super().__init__(self.buffer.ctypes.data, None, 0)


class _Pool:
    device_id = 0

    def malloc(self, nbytes: int, stream=None) -> _Block:
        return _Block(nbytes)


_POOL = _Pool()


def _to_device(dst: int, host, stream=None) -> None:
    host = np.ascontiguousarray(host)
    ctypes.memmove(dst, host.ctypes.data, host.nbytes)


def _to_host(host, src: int, stream=None) -> None:
    ctypes.memmove(host.ctypes.data, src, host.nbytes)


def install() -> None:
    """Replace the memory pool and the copies of :mod:`gpunb.core.runtime.memory`."""
    memory.get_default_memory_pool = lambda: _POOL
    memory.copy_to_device = _to_device
    memory.copy_to_host = _to_host
    memory.copy_device = lambda dst, src, n, stream=None: ctypes.memmove(dst, src, n)
    memory.fill_bytes = lambda ptr, value, n, stream=None: ctypes.memset(ptr, value, n)
