"""The per-operation hot path: kernel launches, pool allocations and copies, each made with
the fewest conversions the binding allows.

Launches go through cuda.bindings' ``cuLaunchKernel`` given ready wrappers for the function
and stream and the address of a prepared parameter array: it converts nothing per argument
and costs about 5 us a launch on an H100 host, against about 7.8 us through ctypes (which
converts its 11 arguments on every call) and 7.0 us for CuPy's whole RawKernel call. The
allocation and copy calls go through ctypes on the same driver library (:mod:`.libcuda`),
whose declared argument types beat cuda.bindings' conversions there. Module loading, streams
and events stay with cuda.core in :mod:`.driver`.

Generated prepared calls (:mod:`..kernels.fastgen`, raw kernels) keep their parameters in one
buffer packed by a single ``struct`` call (:func:`packed`) and launch from their own source
(:func:`launch_source`): cffi's ABI mode (4.34 us) and ctypes with declared argument types
(5.08 us) measured slower than the binding (3.79 us) in one H100 process.
"""

from __future__ import annotations

import ctypes
import struct
import sys
import threading

from ..errors import GPUNBError
from . import driver, libcuda

_lib = None
_cu_launch = None           # cuda.bindings.driver.cuLaunchKernel, bound by _bind()
_CUfunction = None          # its handle wrappers (made once per function and per stream)
_CUstream = None
_streams: dict = {}
_OUT_OF_MEMORY = 2          # CUDA_ERROR_OUT_OF_MEMORY
_c_void_p = ctypes.c_void_p


def _driver():
    global _lib
    if _lib is None:
        _lib = libcuda.lib()
    return _lib


def _bind():
    global _cu_launch, _CUfunction, _CUstream
    from cuda.bindings import driver as cb

    _CUfunction, _CUstream, _cu_launch = cb.CUfunction, cb.CUstream, cb.cuLaunchKernel


def _stream(handle: int):
    """The cuda.bindings wrapper of a raw stream handle, made once (a wrapper is a value: a
    handle reused by a later stream gets the same, still right, wrapper)."""
    s = _streams.get(handle)
    if s is None:
        if _CUstream is None:
            _bind()
        if len(_streams) > 256:
            _streams.clear()
        s = _streams[handle] = _CUstream(handle)
    return s


def _failed(err) -> GPUNBError:
    return GPUNBError(f"CUDA error during kernel launch: {libcuda.error_name(int(err))}")


def launch(function: int, grid, block, shared_mem: int, stream: int, params) -> None:
    """``cuLaunchKernel`` with ``params`` given as ctypes objects (kept alive by the caller
    until this returns). ``function`` and ``stream`` are raw handles (ints)."""
    n = len(params)
    addrs = (_c_void_p * n)(*[ctypes.addressof(p) for p in params])
    gx, gy, gz = (tuple(grid) + (1, 1))[:3]
    bx, by, bz = (tuple(block) + (1, 1))[:3]
    st = _stream(stream)
    err, = _cu_launch(_CUfunction(function), gx, gy, gz, bx, by, bz, shared_mem, st,
                      ctypes.addressof(addrs), 0)
    if err:
        raise _failed(err)


def copy(dst: int, src: int, nbytes: int, stream: int) -> None:
    """Stream-ordered device-to-device copy of ``nbytes`` (``cuMemcpyDtoDAsync``): the
    driver's copy runs at the device's copy bandwidth and costs one call of host time."""
    err = (_lib or _driver()).cuMemcpyDtoDAsync_v2(dst, src, nbytes, stream)
    if err:
        raise GPUNBError(f"CUDA error during a device-to-device copy: {libcuda.error_name(err)}")


def graph_launch(graph_exec: int, stream: int) -> None:
    """``cuGraphLaunch``: one call replays a captured graph (see :mod:`.graphs`)."""
    err = (_lib or _driver()).cuGraphLaunch(graph_exec, stream)
    if err:
        raise GPUNBError(f"CUDA error during a graph launch: {libcuda.error_name(err)}")


def packed(codes):
    """A parameter buffer for a :class:`Prepared` launch whose parameters are set by one
    ``struct`` pack (one C call, where setting ctypes objects costs one Python call each):
    ``codes`` holds each parameter's ``struct`` codes (``'ff'`` for a complex64: one
    parameter), laid out with native alignment. Returns (the struct's ``pack_into``, the
    buffer, a ctypes object at each parameter's offset then the buffer: ``Prepared``'s
    objects, which keep the buffer alive)."""
    layout = struct.Struct("@" + "".join(codes))
    buffer = ctypes.create_string_buffer(max(layout.size, 1))
    objects = [ctypes.c_char.from_buffer(buffer, struct.calcsize("@" + "".join(codes[:i + 1]))
                                         - struct.calcsize("@" + codes[i]))
               for i in range(len(codes))]
    return layout.pack_into, buffer, objects + [buffer]


# the current stream's wrapper (cu_stream) in generated calls: the default stream's, made
# once, when this thread has the device's context current and no stream set; ``main``: this
# is the main thread (whose state driver.main holds in plain attributes)
STREAM_SOURCE = """main = get_ident() == MAIN
cur = MAIN_STATE if main else current
if cur.stream is None and cur.ctx is CTX:
    cu_stream = DEFAULT_STREAM
else:
    stream = stream_handle()
    cu_stream = streams.get(stream) or make_stream(stream)
"""


def stream_namespace(ctx, current, stream_handle) -> dict:
    """The names :data:`STREAM_SOURCE` and a launch's error check read: the device context
    ``ctx``, its default stream's wrapper, the driver module's per-thread state ``current``
    and ``stream_handle``; the main thread's ident and its state in plain attributes."""
    return {"fc": sys.modules[__name__], "CTX": ctx, "DEFAULT_STREAM": _stream(ctx.default_handle),
            "current": current, "stream_handle": stream_handle, "streams": _streams,
            "make_stream": _stream, "failed": _failed, "get_ident": driver.get_ident,
            "MAIN": driver.MAIN, "MAIN_STATE": driver.main}


def launch_source(indent: str, values: str, grid: str, block: str, shared_mem: str,
                  on_overflow: str | None = None) -> str:
    """The launch as Python source for generated prepared calls: pack the parameters (the
    expression list ``values``) and call ``cuLaunchKernel`` itself (no Python frame between),
    on the default stream's ready wrapper when this thread has the device's context current
    and no stream set. ``grid`` and ``block``: expressions of 3 ints each, comma-separated;
    ``on_overflow``: a statement run (instead of raising) when ``struct`` refuses a value.
    The names it reads: :func:`launch_namespace`'s.

    The main thread packs into a buffer of its own without a lock (no other thread writes
    it, and a lock's enter and exit cost about 0.1 us of a 5 us launch); other threads share
    a second buffer under a lock (the driver reads the parameters during the call, with the
    GIL released)."""
    def launch(buf: str, params: str) -> list[str]:
        pack = f"pack({buf}, 0, {values})"
        if on_overflow is not None:
            pack = f"try:\n    {pack}\nexcept (StructError, OverflowError):\n    {on_overflow}"
        return [*pack.splitlines(),
                f"err, = fc._cu_launch(FN, {grid}, {block}, {shared_mem}, cu_stream, {params}, 0)"]

    return "\n".join(indent + ln for ln in (
        *STREAM_SOURCE.splitlines(),
        "if main:",
        *("    " + ln for ln in launch("BUFFER", "PARAMS")),
        "else:",
        "    with lock:",
        *("        " + ln for ln in launch("SHARED_BUFFER", "SHARED_PARAMS")),
        "if err:",
        "    raise failed(err)")) + "\n"


def launch_namespace(function: int, codes, ctx, current, stream_handle) -> dict:
    """The names :func:`launch_source` reads, for a kernel ``function`` whose parameters have
    the ``struct`` codes ``codes`` (see :func:`packed`): the function and the two parameter
    buffers (the main thread's, the other threads'), the device context ``ctx`` and its
    default stream's wrapper, the per-thread state ``current`` and ``stream_handle`` of the
    driver module, the other threads' lock."""
    ns = {**stream_namespace(ctx, current, stream_handle), "lock": threading.Lock(),
          "StructError": struct.error}
    for prefix in ("", "SHARED_"):
        pack, buffer, objects = packed(codes)
        prepared = Prepared(function, (1,), (1,), objects)
        # PREPARED keeps the parameter array (whose address PARAMS is) and its buffer alive
        ns.update({prefix + "PREPARED": prepared, prefix + "BUFFER": buffer,
                   prefix + "PARAMS": prepared._params, "FN": prepared._fn, "pack": pack})
    return ns


class Prepared:
    """A launch whose parameters live in ctypes objects made once, with the array of their
    addresses that ``cuLaunchKernel`` takes: a repeated launch sets the objects' values and
    calls the driver, building nothing. The values must not change from being set until
    :meth:`launch` returns, so the caller serializes its users (a lock per set of objects)."""

    __slots__ = ("function", "grid", "block", "objects", "_addrs", "_fn", "_params")

    def __init__(self, function: int, grid, block, objects):
        if _CUfunction is None:
            _bind()
        self.function = function
        self.grid = (tuple(grid) + (1, 1))[:3]
        self.block = (((block,) if isinstance(block, int) else tuple(block)) + (1, 1))[:3]
        self.objects = tuple(objects)       # kept alive: _addrs points into them
        self._addrs = (_c_void_p * len(self.objects))(*[ctypes.addressof(o) for o in self.objects])
        self._fn = _CUfunction(function)
        self._params = ctypes.addressof(self._addrs)

    def launch(self, stream: int, blocks: int = 0) -> None:
        """Launch on ``stream`` (a raw handle) with the objects' current values; ``blocks``
        > 0 replaces the grid's x dimension."""
        gx, gy, gz = self.grid
        bx, by, bz = self.block
        err, = _cu_launch(self._fn, blocks or gx, gy, gz, bx, by, bz, 0,
                          _streams.get(stream) or _stream(stream), self._params, 0)
        if err:
            raise _failed(err)

    def launch_extents(self, stream: int, grid, block, shared_mem: int = 0) -> None:
        """Launch on ``stream`` with the objects' current values, these extents (3-tuples)
        and dynamic shared memory."""
        gx, gy, gz = grid
        bx, by, bz = block
        err, = _cu_launch(self._fn, gx, gy, gz, bx, by, bz, shared_mem,
                          _streams.get(stream) or _stream(stream), self._params, 0)
        if err:
            raise _failed(err)


def free(handle: int, stream: int) -> None:
    """Stream-ordered free back to the driver's pool (quietly skipped at interpreter exit)."""
    lib = _lib
    if lib is not None:
        try:
            lib.cuMemFreeAsync(handle, stream)
        except Exception:   # interpreter shutdown: the library may already be gone
            pass


def allocate(pool: int, size: int, stream: int) -> int:
    """``size`` bytes from ``pool`` ordered on ``stream``: the address, or 0 when out of memory
    (:class:`.memory.Allocation` owns it from there)."""
    out = ctypes.c_uint64()
    err = _driver().cuMemAllocFromPoolAsync(ctypes.byref(out), size, pool, stream)
    if err == _OUT_OF_MEMORY:
        return 0
    if err:
        raise GPUNBError(f"CUDA error allocating {size} bytes: {libcuda.error_name(err)}")
    return out.value
