"""Page-locked (pinned) host memory, with CuPy's API (``cupy.cuda.alloc_pinned_memory``,
``PinnedMemoryPool``, ``cupy.get_default_pinned_memory_pool``, ``cupyx.empty_pinned``).

Copies between the GPU and page-locked memory run at the bus's full speed and, on a stream,
without the host waiting: ``a.get(stream=s, out=pinned, blocking=False)`` and
``a.set(pinned, stream=s)`` return at once. Pageable NumPy memory is staged by the driver
and waited for.

A :class:`PinnedMemoryPointer` is a ctypes array over the memory, so it has the buffer
protocol and CuPy's idiom works: ``numpy.frombuffer(alloc_pinned_memory(n), dtype, count)``
(the array keeps the memory alive). The pool keeps freed blocks, by size rounded up to 512
bytes, for the next allocation of that size (``cuMemHostAlloc`` takes milliseconds for large
sizes); ``free_all_blocks()`` gives them back to the driver. Nothing touches the GPU before
the first allocation.
"""

from __future__ import annotations

import ctypes
import math
import threading

import numpy as np

from .. import layout
from . import driver, libcuda

UNIT = 512                 # CuPy's rounding of pooled sizes
_PORTABLE = 0x01           # CU_MEMHOSTALLOC_PORTABLE: usable from every context


class PinnedMemory:
    """``size`` bytes of page-locked host memory (``cupy.cuda.PinnedMemory``), freed, or
    given back to its pool, when collected.

    Attributes
    ----------
    ptr : int
        The host address (0 for size 0).
    size : int
        The size in bytes.
    """

    __slots__ = ("ptr", "size", "_pool", "__weakref__")

    def __init__(self, size: int, _ptr: int = 0, _pool=None):
        size = int(size)
        if size < 0:
            raise ValueError(f"cannot allocate a negative size: {size}")
        self.ptr, self.size, self._pool = _ptr, size, _pool
        if size and not _ptr:
            driver.context()            # the driver needs a current context
            host = ctypes.c_void_p()
            libcuda.check(libcuda.lib().cuMemHostAlloc(ctypes.byref(host), size, _PORTABLE),
                          f"a page-locked allocation of {size} bytes")
            self.ptr = host.value

    def __int__(self) -> int:
        return self.ptr

    def __del__(self):
        ptr, self.ptr = self.ptr, 0
        if not ptr:
            return
        if self._pool is not None:
            self._pool._give_back(ptr, self.size)
        else:
            _free(ptr)

    def __repr__(self) -> str:
        return f"<gpunb.cuda.PinnedMemory 0x{self.ptr:x} size={self.size}>"


def _free(ptr: int) -> None:
    try:
        libcuda.lib().cuMemFreeHost(ptr)
    except Exception:       # interpreter shutdown: the library may already be gone
        pass


class PinnedMemoryPointer(ctypes.Array):
    """A pointer into :class:`PinnedMemory` (``cupy.cuda.PinnedMemoryPointer``): a ctypes
    byte array over the rest of the memory from ``ptr`` on (the buffer protocol: NumPy views
    it without a copy), holding the memory alive.

    Attributes
    ----------
    mem : PinnedMemory
    ptr : int
        The address it points at.
    """

    _type_ = ctypes.c_byte
    _length_ = 0

    def __new__(cls, mem: PinnedMemory, offset: int = 0):
        offset = int(offset)
        if not 0 <= offset <= mem.size:
            raise ValueError(f"offset {offset} is outside the memory's {mem.size} bytes")
        n = mem.size - offset
        typ = _pointer_types.get(n)
        if typ is None:
            if len(_pointer_types) > 1024:
                _pointer_types.clear()
            typ = _pointer_types[n] = type("PinnedMemoryPointer", (PinnedMemoryPointer,), {"_length_": n})
        p = typ.from_address(mem.ptr + offset if n else ctypes.addressof(_EMPTY))
        p.mem, p.ptr = mem, mem.ptr + offset
        return p

    def __init__(self, mem=None, offset=0):     # everything is set by __new__
        pass

    def __int__(self) -> int:
        return self.ptr

    def __add__(self, offset: int) -> PinnedMemoryPointer:
        return PinnedMemoryPointer(self.mem, self.ptr - self.mem.ptr + int(offset))

    def __repr__(self) -> str:
        return f"<gpunb.cuda.PinnedMemoryPointer 0x{self.ptr:x} of {self.mem!r}>"


_pointer_types: dict = {}
_EMPTY = ctypes.c_byte()


def _malloc(size: int) -> PinnedMemoryPointer:
    return PinnedMemoryPointer(PinnedMemory(size), 0)


class PinnedMemoryPool:
    """A pool of page-locked host memory (``cupy.cuda.PinnedMemoryPool``): freed blocks are
    kept, by size rounded up to 512 bytes, and reused by later allocations of that size.

    Parameters
    ----------
    allocator : callable, optional
        ``allocator(size) -> PinnedMemoryPointer`` for new blocks (default: the driver's
        ``cuMemHostAlloc``).
    """

    def __init__(self, allocator=None):
        self._allocator = allocator
        self._free: dict[int, list[int]] = {}
        self._lock = threading.Lock()
        self._in_use = 0
        self._held: dict[int, PinnedMemoryPointer] = {}     # blocks from a custom allocator

    def malloc(self, size: int) -> PinnedMemoryPointer:
        """``size`` bytes (at least: rounded up to 512) as a :class:`PinnedMemoryPointer`."""
        size = int(size)
        if size < 0:
            raise ValueError(f"cannot allocate a negative size: {size}")
        if size == 0:
            return PinnedMemoryPointer(PinnedMemory(0), 0)
        rounded = -(-size // UNIT) * UNIT
        with self._lock:
            blocks = self._free.get(rounded)
            ptr = blocks.pop() if blocks else 0
            self._in_use += rounded
        if not ptr:
            try:
                ptr = self._new(rounded)
            except BaseException:
                with self._lock:
                    self._in_use -= rounded
                raise
        return PinnedMemoryPointer(PinnedMemory(rounded, ptr, self), 0)

    def _new(self, size: int) -> int:
        if self._allocator is None:
            block = PinnedMemory(size)
            ptr, block.ptr = block.ptr, 0           # owned by the pool from here on
            return ptr
        p = self._allocator(size)
        self._held[int(p.ptr)] = p                  # keeps the allocator's memory alive
        return int(p.ptr)

    def _give_back(self, ptr: int, size: int) -> None:
        with self._lock:
            self._free.setdefault(size, []).append(ptr)
            self._in_use -= size

    def free_all_blocks(self) -> None:
        """Give the kept free blocks back (to the driver, or to the custom allocator)."""
        with self._lock:
            free, self._free = self._free, {}
        for blocks in free.values():
            for ptr in blocks:
                if self._held.pop(ptr, None) is None and self._allocator is None:
                    _free(ptr)

    def n_free_blocks(self) -> int:
        """The number of free blocks the pool keeps."""
        with self._lock:
            return sum(len(b) for b in self._free.values())

    def used_bytes(self) -> int:
        """Bytes in blocks handed out and not yet freed (gpunb's addition)."""
        return self._in_use

    def free_bytes(self) -> int:
        """Bytes in the kept free blocks (gpunb's addition)."""
        with self._lock:
            return sum(size * len(b) for size, b in self._free.items())

    def total_bytes(self) -> int:
        """``used_bytes() + free_bytes()`` (gpunb's addition)."""
        return self.used_bytes() + self.free_bytes()

    def __repr__(self) -> str:
        return (f"<gpunb.cuda.PinnedMemoryPool used={self.used_bytes()} "
                f"free={self.free_bytes()} blocks={self.n_free_blocks()}>")


_default_pool = PinnedMemoryPool()
_allocator = _default_pool.malloc


def get_default_pinned_memory_pool() -> PinnedMemoryPool:
    """The pool ``alloc_pinned_memory`` draws from by default (``cupy.get_default_pinned_memory_pool``)."""
    return _default_pool


def set_pinned_memory_allocator(allocator=None) -> None:
    """Use ``allocator(size) -> PinnedMemoryPointer`` for pinned allocations
    (``cupy.cuda.set_pinned_memory_allocator``); None allocates from the driver each time,
    with no pool."""
    global _allocator
    _allocator = _malloc if allocator is None else allocator


def alloc_pinned_memory(size: int) -> PinnedMemoryPointer:
    """``size`` bytes of page-locked host memory from the current pinned allocator
    (``cupy.cuda.alloc_pinned_memory``)."""
    return _allocator(int(size))


# ---- NumPy arrays in pinned memory (cupyx.empty_pinned and friends) ----------------------------

def empty_pinned(shape, dtype=float, order="C") -> np.ndarray:
    """A NumPy array in page-locked memory, uninitialized (``cupyx.empty_pinned``).

    Parameters
    ----------
    shape : int or tuple of ints
    dtype : data-type, optional
    order : {'C', 'F'}, optional
    """
    shape, dtype = layout.new_shape(shape), np.dtype(dtype)
    if order not in ("C", "F"):
        raise ValueError(f"order must be 'C' or 'F', not {order!r}")
    count = math.prod(shape)
    mem = alloc_pinned_memory(count * dtype.itemsize)
    return np.frombuffer(mem, dtype, count).reshape(shape, order=order)


def zeros_pinned(shape, dtype=float, order="C") -> np.ndarray:
    """A NumPy array of zeros in page-locked memory (``cupyx.zeros_pinned``)."""
    out = empty_pinned(shape, dtype, order)
    out[...] = 0
    return out


def empty_like_pinned(a, dtype=None, order="K", subok=None, shape=None) -> np.ndarray:
    """A NumPy array in page-locked memory like ``a`` (``cupyx.empty_like_pinned``): its
    shape and dtype unless given; order 'K' and 'A' keep a Fortran-ordered ``a``'s order."""
    a = a if hasattr(a, "shape") and hasattr(a, "dtype") else np.asarray(a)
    if order in ("K", "A"):
        f = getattr(a, "flags", None)
        order = "F" if f is not None and f.f_contiguous and not f.c_contiguous else "C"
    return empty_pinned(a.shape if shape is None else shape, a.dtype if dtype is None else dtype, order)


def zeros_like_pinned(a, dtype=None, order="K", subok=None, shape=None) -> np.ndarray:
    """A NumPy array of zeros in page-locked memory like ``a`` (``cupyx.zeros_like_pinned``)."""
    out = empty_like_pinned(a, dtype, order, subok, shape)
    out[...] = 0
    return out
