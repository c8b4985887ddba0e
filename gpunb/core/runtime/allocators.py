"""Device memory from elsewhere than the stream-ordered pool, with CuPy's API: the allocator
hook (``set_allocator``, ``get_allocator``; :class:`.memory.MemoryPool` asks its
``_allocator`` first) and CUDA managed memory (``malloc_managed``, :class:`ManagedMemory`),
which CuPy code puts every array in with
``set_allocator(MemoryPool(malloc_managed).malloc)``."""

from __future__ import annotations

import ctypes

from . import driver, libcuda
from .memory import MemoryPointer, MemoryPool, get_default_memory_pool


def set_allocator(allocator=None) -> None:
    """Make the current device's default pool hand out ``allocator(nbytes)`` (a MemoryPointer)
    for every allocation gpunb makes (CuPy's ``cupy.cuda.set_allocator``); None, or a gpunb
    pool's own ``malloc`` on its device, restores the stream-ordered pool."""
    if allocator is not None and not callable(allocator):
        raise TypeError(f"allocator must be callable (nbytes -> MemoryPointer) or None, "
                        f"not {type(allocator).__name__}")
    if allocator is None and driver.active is None:
        return                      # no device in use yet: its pool will start as the default
    pool = get_default_memory_pool()
    owner = getattr(allocator, "__self__", None)
    if owner is pool or (isinstance(owner, MemoryPool) and owner._allocator is None
                         and getattr(allocator, "__func__", None) is MemoryPool.malloc
                         and owner.device_id == pool.device_id):
        allocator = None            # the stream-ordered pool itself (CuPy's reset idiom)
    pool._allocator = allocator


def get_allocator():
    """The allocator set by :func:`set_allocator` on the current device (None: the pool)."""
    return None if driver.active is None else get_default_memory_pool()._allocator


class ManagedMemory:
    """``size`` bytes of CUDA managed (unified) memory (``cupy.cuda.ManagedMemory``):
    reachable from the host and every device, paged in on demand, so arrays may exceed the
    GPU's memory. Freed (``cuMemFree``) when collected.

    Attributes
    ----------
    ptr : int
    size : int
    device_id : int
    """

    __slots__ = ("ptr", "size", "device_id", "__weakref__")

    def __init__(self, size: int):
        size = int(size)
        if size < 0:
            raise ValueError(f"cannot allocate a negative size: {size}")
        ctx = driver.context()
        self.ptr, self.size, self.device_id = 0, size, ctx.info.ordinal
        out = ctypes.c_uint64()
        libcuda.check(libcuda.lib().cuMemAllocManaged(ctypes.byref(out), max(size, 1), 1),   # ATTACH_GLOBAL
                      f"a managed allocation of {size:,} bytes")
        self.ptr = out.value

    def __int__(self) -> int:
        return self.ptr

    def __del__(self):
        ptr, self.ptr = self.ptr, 0
        if ptr:
            try:
                libcuda.lib().cuMemFree_v2(ptr)
            except Exception:       # interpreter shutdown
                pass

    def __repr__(self) -> str:
        return f"<gpunb.cuda.ManagedMemory 0x{self.ptr:x} size={self.size}>"


def malloc_managed(size: int) -> MemoryPointer:
    """``size`` bytes of managed memory as a MemoryPointer (``cupy.cuda.malloc_managed``):
    ``gpunb.cuda.set_allocator(gpunb.cuda.MemoryPool(gpunb.cuda.malloc_managed).malloc)``
    puts every later array in it."""
    mem = ManagedMemory(size)
    return MemoryPointer(mem.ptr, mem, mem.device_id)
