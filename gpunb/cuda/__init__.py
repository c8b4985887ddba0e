"""CuPy's ``cupy.cuda`` door to gpunb's devices, streams, events and memory, so that CuPy code
runs with ``import gpunb as cp``: ``with cp.cuda.Device(0):``,
``cp.cuda.Stream.null.synchronize()``, ``cp.cuda.runtime.getDeviceCount()``.

These are gpunb's own objects under CuPy's names (``gpunb.cuda.Stream is gpunb.Stream``), not
a second implementation. Nothing here touches the GPU at import.
"""

from __future__ import annotations

import contextlib

from ..core.ndarray import MemoryPointer
from ..core.runtime import devices as _devices
from ..core.runtime import allocators as _allocators
from ..core.runtime import memory as _memory
from ..core.runtime.stream import (Event, ExternalStream, Stream, get_current_stream,
                                   get_elapsed_time)
from ..core.runtime.pinned import (PinnedMemory, PinnedMemoryPointer, PinnedMemoryPool,
                                   alloc_pinned_memory, set_pinned_memory_allocator)
from ..core.errors import OutOfMemoryError
from ..core.runtime.graphs import Graph
from . import nvtx, runtime

__all__ = ["Device", "Stream", "ExternalStream", "Event", "get_current_stream",
           "get_elapsed_time", "MemoryPointer", "Memory", "alloc", "is_available",
           "get_device_id", "compile_with_cache", "get_local_runtime_version", "get_cuda_path", "get_nvcc_path",
           "profile", "nvtx", "runtime", "MemoryPool", "get_default_memory_pool",
           "set_allocator", "get_allocator", "using_allocator", "malloc_managed", "ManagedMemory",
           "MemoryAsyncPool", "Graph", "OutOfMemoryError", "memory",
           "PinnedMemory", "PinnedMemoryPointer", "PinnedMemoryPool", "alloc_pinned_memory",
           "set_pinned_memory_allocator"]

MemoryPool = _memory.MemoryPool


def is_available() -> bool:
    """Whether a usable CUDA device is present (``cupy.cuda.is_available``)."""
    return _devices.count() > 0


def get_local_runtime_version() -> int:
    """``runtime.runtimeGetVersion()`` (``cupy.cuda.get_local_runtime_version``): NVRTC's
    version, encoded as CUDA does (gpunb has no CUDA runtime library)."""
    return runtime.runtimeGetVersion()


def get_cuda_path():
    """None (``cupy.cuda.get_cuda_path`` without a toolkit): gpunb needs no CUDA toolkit;
    NVRTC and CUB's headers come from NVIDIA's wheels."""
    return None


def get_nvcc_path():
    """None: gpunb compiles with NVRTC and never needs nvcc (``cupy.cuda.get_nvcc_path``)."""
    return None


def compile_with_cache(source: str, options=(), arch=None, cache_dir=None, extra_source=None,
                       backend="nvrtc", *, enable_cooperative_groups=False,
                       name_expressions=None, log_stream=None, jitify=False):
    """CuPy's older way to compile CUDA C++ (``cupy.cuda.compile_with_cache``): a
    :class:`gpunb.RawModule` of ``source``, compiled through gpunb's kernel cache; use
    ``module.get_function(name)``. ``arch`` (e.g. ``'sm_90'``) compiles now, without a GPU;
    ``cache_dir`` is gpunb's cache (``GPUNB_CACHE_DIR``), not a per-call directory;
    ``extra_source`` (in CuPy, text added to the cache key only) is not needed: gpunb's key
    holds the source and every header it includes."""
    from ..core.kernels.raw.module import RawModule

    if cache_dir is not None:
        raise ValueError("gpunb keeps one kernel cache (GPUNB_CACHE_DIR / %gpucache); "
                         "cache_dir is not supported")
    module = RawModule(code=source, options=tuple(options), backend=backend,
                       name_expressions=name_expressions,
                       enable_cooperative_groups=enable_cooperative_groups, jitify=jitify)
    if arch is not None:
        module.compile(arch=arch)
    return module


def get_device_id() -> int:
    """The number of the current device (``cupy.cuda.get_device_id``)."""
    return _devices.current()


def get_default_memory_pool():
    """gpunb's memory pool of the current device."""
    return _memory.get_default_memory_pool()


set_allocator = _allocators.set_allocator
get_allocator = _allocators.get_allocator
malloc_managed = _allocators.malloc_managed
ManagedMemory = _allocators.ManagedMemory


class MemoryAsyncPool(_memory.MemoryPool):
    """CuPy's ``MemoryAsyncPool`` (CUDA's stream-ordered allocator): what gpunb's pool
    already is. ``pool_handles`` other than the device's own are not supported."""

    def __init__(self, pool_handles="current"):
        if pool_handles not in ("current", "default"):
            raise NotImplementedError("gpunb's pool is the device's own stream-ordered pool; "
                                      "external pool handles are not supported")
        super().__init__()


@contextlib.contextmanager
def using_allocator(allocator=None):
    """Use ``allocator`` inside the block and restore the one before after it (CuPy's
    ``cupy.cuda.using_allocator``; None: the stream-ordered pool)."""
    before = get_allocator()
    set_allocator(allocator)
    try:
        yield
    finally:
        set_allocator(before)


def alloc(size: int) -> MemoryPointer:
    """``size`` bytes of device memory from the pool, as a MemoryPointer (``cupy.cuda.alloc``):
    pass it to ``gpunb.ndarray(shape, dtype, memptr=...)``."""
    if int(size) < 0:
        raise ValueError(f"cannot allocate a negative size: {size}")
    mem = Memory(size)
    return MemoryPointer(mem.ptr, mem, mem.device_id)


class Memory:
    """``size`` bytes of device memory (``cupy.cuda.Memory``), taken from gpunb's pool and
    given back when the object is collected.

    Attributes
    ----------
    ptr : int
        The device address.
    size : int
        The size in bytes.
    device_id : int
    """

    __slots__ = ("ptr", "size", "device_id", "_buf")

    def __init__(self, size: int):
        size = int(size)
        if size < 0:
            raise ValueError(f"cannot allocate a negative size: {size}")
        pool = _memory.get_default_memory_pool()
        self._buf = pool.malloc(size)
        self.ptr, self.size, self.device_id = int(self._buf.ptr), size, pool.device_id

    def __int__(self) -> int:
        return self.ptr

    def __repr__(self) -> str:
        return f"<gpunb.cuda.Memory 0x{self.ptr:x} size={self.size} device={self.device_id}>"


@contextlib.contextmanager
def profile():
    """Collect CUDA profiler data only inside the block (``cupy.cuda.profile``; for Nsight
    Systems' ``--capture-range=cudaProfilerApi``)."""
    _devices.profiler(True)
    try:
        yield
    finally:
        _devices.profiler(False)


class Device:
    """A CUDA device, CuPy-style (``cupy.cuda.Device``).

    Parameters
    ----------
    device : int, optional
        The device number; default the current device.

    Notes
    -----
    ``with Device(1):`` makes device 1 the one gpunb works on inside the block and restores the
    previous one after; :meth:`use` makes it current for good. Constructing one with a number
    touches nothing but the driver's device count.
    """

    __slots__ = ("_id", "_saved")

    def __init__(self, device=None):
        self._id = _devices.current() if device is None else _devices.check_ordinal(device)
        self._saved: list[int] = []

    @property
    def id(self) -> int:
        return self._id

    def __int__(self) -> int:
        return self._id

    __index__ = __int__

    def use(self) -> None:
        """Make this device current."""
        _devices.use(self._id)

    def synchronize(self) -> None:
        """Wait for all work on this device."""
        _devices.synchronize(self._id)

    @property
    def compute_capability(self) -> str:
        """``'90'`` for an H100, as CuPy spells it."""
        p = _devices.properties(self._id)
        return f"{p['major']}{p['minor']}"

    @property
    def attributes(self) -> dict:
        """Every device attribute by CuPy's names (``MaxThreadsPerBlock``...)."""
        return _devices.attributes(self._id)

    @property
    def mem_info(self) -> tuple[int, int]:
        """(free, total) bytes of this device's memory."""
        with self:
            return _memory.mem_info()

    @property
    def pci_bus_id(self) -> str:
        return _devices.pci_bus_id(self._id)

    def __enter__(self) -> "Device":
        self._saved.append(_devices.current())
        if self._saved[-1] != self._id:
            _devices.use(self._id)
        return self

    def __exit__(self, *exc) -> None:
        prev = self._saved.pop()
        if prev != self._id:
            _devices.use(prev)

    def __eq__(self, other) -> bool:
        return isinstance(other, Device) and other._id == self._id

    def __hash__(self) -> int:
        return hash(("gpunb.cuda.Device", self._id))

    def __repr__(self) -> str:
        return f"<CUDA Device {self._id}>"


from . import memory  # noqa: E402  (CuPy's cupy.cuda.memory)

memory.Memory, memory.alloc, memory.set_allocator, memory.using_allocator = (
    Memory, alloc, set_allocator, using_allocator)
memory.get_allocator, memory.MemoryAsyncPool = get_allocator, MemoryAsyncPool
