"""CuPy's ``cupy.cuda.memory`` names (``except cupy.cuda.memory.OutOfMemoryError:``), as the
objects ``gpunb.cuda`` already has (``Memory``, ``alloc``, ``set_allocator`` and
``using_allocator`` are set here by ``gpunb.cuda`` itself, which defines them)."""

from ..core.errors import OutOfMemoryError
from ..core.ndarray import MemoryPointer
from ..core.runtime.memory import MemoryPool
from ..core.runtime.pinned import (PinnedMemory, PinnedMemoryPointer, PinnedMemoryPool,
                                   alloc_pinned_memory, set_pinned_memory_allocator)

__all__ = ["OutOfMemoryError", "MemoryPointer", "MemoryPool", "PinnedMemory", "PinnedMemoryPointer",
           "PinnedMemoryPool", "alloc_pinned_memory", "set_pinned_memory_allocator"]
