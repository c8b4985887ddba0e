"""CuPy's ``cupy.cuda.memory`` names (``except cupy.cuda.memory.OutOfMemoryError:``), as the
objects ``gpunb.cuda`` already has (``Memory``, ``alloc``, ``set_allocator``,
``get_allocator``, ``using_allocator`` and ``MemoryAsyncPool`` are set here by ``gpunb.cuda``
itself, which defines them)."""

from ..core.errors import OutOfMemoryError
from ..core.ndarray import MemoryPointer
from ..core.runtime.allocators import ManagedMemory, malloc_managed
from ..core.runtime.memory import MemoryPool
from ..core.runtime.pinned import (PinnedMemory, PinnedMemoryPointer, PinnedMemoryPool,
                                   alloc_pinned_memory, set_pinned_memory_allocator)

__all__ = ["OutOfMemoryError", "MemoryPointer", "MemoryPool", "ManagedMemory", "malloc_managed",
           "PinnedMemory", "PinnedMemoryPointer", "PinnedMemoryPool", "alloc_pinned_memory",
           "set_pinned_memory_allocator"]
