"""CUDA streams and events, CuPy-style: ``gpunb.Stream``, ``gpunb.Event``.

Every array operation in gpunb (launches, allocations, copies) runs on the *current stream*
of its thread: the device's default stream unless a ``with gpunb.Stream():`` block (or
``Stream.use()``) made another current. The current stream lives in a thread-local slot that
:func:`gpunb.core.runtime.driver.as_stream` reads on every launch.

Creating a stream or an event is an explicit GPU act: it initialises the device, and raises
:class:`~gpunb.GPUUnavailableError` without one. ``Stream.null`` and
:func:`get_current_stream` touch nothing until a handle is asked for.
"""

from __future__ import annotations

import threading

from ..errors import GPUNBError
from . import driver, libcuda

_local = threading.local()   # .current: the gpunb Stream made current; .stack: `with` nesting


def _default_core():
    """The device's default cuda.core stream (legacy, or per-thread where cuda.core is told)."""
    return driver.context().default_stream


class Stream:
    """A CUDA stream: a queue of GPU work that runs in order.

    Parameters
    ----------
    null : bool, default False
        Wrap the device's default stream instead of creating one (see ``Stream.null``).
    non_blocking : bool, default False
        Create a stream that does not synchronise with the legacy default stream.
    priority : int, optional
        Lower numbers are higher priorities; default the lowest priority.

    Notes
    -----
    ``with stream:`` makes the stream current for the block in this thread (blocks nest and
    restore the previous stream on exit), so that every gpunb operation inside runs on it.
    Work on different streams may overlap; order it with events (:meth:`record`,
    :meth:`wait_event`) or :meth:`synchronize`.

    Examples
    --------
    >>> s = gpunb.Stream(non_blocking=True)
    >>> with s:
    ...     y = gpunb.sqrt(x) + 1       # launched on s
    >>> s.synchronize()
    """

    null: "Stream"   # the default stream, set below
    ptds: "Stream"   # the per-thread default stream, set below

    def __init__(self, null: bool = False, non_blocking: bool = False, priority: int | None = None):
        self._core = None
        self._null = bool(null)
        if self._null:
            return      # resolved on first use: constructing Stream.null touches nothing
        dev = driver.device()
        StreamOptions = driver.cuda_core().StreamOptions

        try:
            self._core = dev.create_stream(
                options=StreamOptions(nonblocking=bool(non_blocking), priority=priority))
        except ValueError:      # a priority outside the device's range, named by cuda.core
            raise
        except Exception as e:
            raise driver._translate(e, "stream creation") from e

    def _core_stream(self):
        """The cuda.core Stream (what :func:`driver.as_stream` returns for this object)."""
        core = self._core
        return core if core is not None else _default_core()

    # -- identity ------------------------------------------------------------------------------

    @property
    def ptr(self) -> int:
        """The ``CUstream`` handle as an int."""
        return int(self._core_stream().handle)

    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, self.ptr)

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        if not isinstance(other, Stream):
            return NotImplemented
        return self.ptr == other.ptr

    def __hash__(self) -> int:
        return hash(self.ptr)

    def __repr__(self) -> str:
        if self._null and self._core is None:
            return "<gpunb.Stream null>"
        return f"<gpunb.{type(self).__name__} 0x{self.ptr:x}>"

    # -- work ----------------------------------------------------------------------------------

    def synchronize(self) -> None:
        """Wait until all work queued on this stream has finished."""
        try:
            self._core_stream().sync()
        except Exception as e:
            raise driver._translate(e, "stream synchronize") from e

    def query(self) -> bool:
        """True when all work queued on this stream has finished (does not wait)."""
        d = driver._driver_module()
        (err,) = d.cuStreamQuery(self._core_stream().handle)
        if err == d.CUresult.CUDA_SUCCESS:
            return True
        if err == d.CUresult.CUDA_ERROR_NOT_READY:
            return False
        raise GPUNBError(f"CUDA error during stream query: {err.name}")

    done = property(query, doc="True when all work queued on this stream has finished.")

    def record(self, event: "Event | None" = None) -> "Event":
        """Record ``event`` (a new timing-enabled :class:`Event` by default) on this stream."""
        if event is None:
            event = Event()
        event.record(self)
        return event

    def wait_event(self, event: "Event") -> None:
        """Make later work on this stream wait until ``event`` has completed (the host does
        not wait)."""
        try:
            self._core_stream().wait(event._event)
        except Exception as e:
            raise driver._translate(e, "stream wait") from e

    # -- CUDA graph capture (CuPy's API; see gpunb.core.runtime.graphs) --------------------------

    def begin_capture(self, mode=None) -> None:
        """Start capturing this stream's work into a CUDA graph (:meth:`end_capture` returns
        it). ``mode``: CUDA's capture mode number (default relaxed)."""
        from .graphs import begin_capture
        begin_capture(self, mode)

    def end_capture(self):
        """Stop capturing: the :class:`gpunb.Graph` of the captured work, not yet run
        (``g.launch()`` runs it)."""
        from .graphs import end_capture
        return end_capture(self)

    def is_capturing(self) -> bool:
        """Whether this stream is being captured."""
        from .graphs import is_capturing
        return is_capturing(self)

    # -- current stream ------------------------------------------------------------------------

    def use(self) -> "Stream":
        """Make this the current stream of this thread (until another is made current)."""
        driver._current.stream = self._core    # None for the null stream: the default one
        _local.current = self
        return self

    def __enter__(self) -> "Stream":
        stack = getattr(_local, "stack", None)
        if stack is None:
            stack = _local.stack = []
        stack.append(get_current_stream())
        return self.use()

    def __exit__(self, *exc) -> None:
        _local.stack.pop().use()


class ExternalStream(Stream):
    """A stream made elsewhere (CuPy, PyTorch, a raw ``CUstream``), usable as a gpunb stream.

    Parameters
    ----------
    ptr : int or object
        A ``CUstream`` handle, or an object with ``__cuda_stream__`` or a CuPy-style ``.ptr``.
        The stream's owner must keep it alive while gpunb uses it.
    """

    def __init__(self, ptr):
        if ptr is None:
            raise TypeError("ExternalStream needs a stream handle or a stream object, not None")
        self._null = False
        self._core = driver.as_stream(ptr)


class _PerThreadDefaultStream(Stream):
    """``Stream.ptds``: CUDA's per-thread default stream (handle 2). Like ``Stream.null``,
    made without touching the GPU; resolved (per device) on first use."""

    def __init__(self):
        self._null, self._core = False, None
        self._by_device: dict = {}

    def _core_stream(self):
        # made current in this thread too: handle 2 names no context of its own, so a new
        # thread's first allocation on it failed (CUDA_ERROR_INVALID_CONTEXT)
        ctx = driver.context()
        core = self._by_device.get(ctx.ordinal)
        if core is None:
            core = self._by_device[ctx.ordinal] = driver.as_stream(2)
        return core

    def use(self) -> "Stream":
        driver._current.stream = self._core_stream()
        _local.current = self
        return self

    def __repr__(self) -> str:
        return "<gpunb.Stream ptds>"


Stream.null = Stream(null=True)
Stream.ptds = _PerThreadDefaultStream()


def get_current_stream() -> Stream:
    """The current stream of this thread (``Stream.null``, the default stream, unless a
    ``with gpunb.Stream():`` block or ``Stream.use()`` made another current)."""
    current = getattr(_local, "current", None)
    return current if current is not None else Stream.null


class Event:
    """A CUDA event: a marker in a stream, for ordering streams and timing GPU work.

    Parameters
    ----------
    block : bool, default False
        :meth:`synchronize` blocks the host thread (yields the CPU) instead of spinning.
    disable_timing : bool, default False
        Record no timestamp (cheaper for pure ordering).
    timing, blocking : bool, optional
        Keyword spellings of ``not disable_timing`` and ``block``.
    """

    def __init__(self, block: bool = False, disable_timing: bool = False, *,
                 timing: bool | None = None, blocking: bool | None = None):
        if timing is not None:
            disable_timing = not timing
        if blocking is not None:
            block = blocking
        dev = driver.device()
        EventOptions = driver.cuda_core().EventOptions

        try:
            self._event = dev.create_event(EventOptions(
                timing_enabled=not disable_timing, blocking_sync=bool(block)))
        except Exception as e:
            raise driver._translate(e, "event creation") from e

    @property
    def ptr(self) -> int:
        """The ``CUevent`` handle as an int."""
        return int(self._event.handle)

    def record(self, stream=None) -> None:
        """Record the event on ``stream`` (default: the current stream)."""
        try:
            driver.as_stream(stream).record(self._event)
        except (TypeError, ValueError):
            raise
        except Exception as e:
            raise driver._translate(e, "event record") from e

    def synchronize(self) -> None:
        """Wait until the work recorded before this event has finished."""
        try:
            self._event.sync()
        except Exception as e:
            raise driver._translate(e, "event synchronize") from e

    def query(self) -> bool:
        """True when the work recorded before this event has finished (does not wait)."""
        try:
            return bool(self._event.is_done)
        except Exception as e:
            raise driver._translate(e, "event query") from e

    done = property(query, doc="True when the work recorded before this event has finished.")

    def __sub__(self, other: "Event") -> float:
        """``end - start``: milliseconds between two recorded events."""
        if not isinstance(other, Event):
            return NotImplemented
        return get_elapsed_time(other, self)

    def __eq__(self, other) -> bool:
        return self is other or isinstance(other, Event) and self.ptr == other.ptr

    def __hash__(self) -> int:
        return hash(self.ptr)

    def __repr__(self) -> str:
        return f"<gpunb.Event 0x{self.ptr:x}>"


def get_elapsed_time(start_event: Event, end_event: Event) -> float:
    """Milliseconds between two timing-enabled events that have both completed."""
    try:
        return float(end_event._event - start_event._event)
    except Exception as e:
        raise driver._translate(e, "elapsed time") from e


# -- DLPack stream exchange ------------------------------------------------------------------

def current_stream_handle() -> int:
    """The current stream as a DLPack ``stream`` value: 1 for the legacy default stream, 2 for
    the per-thread default stream, else the ``CUstream`` handle. Touches no GPU when gpunb has
    not used one yet."""
    s = driver._current.stream
    if s is None:
        return libcuda.default_stream_handle() if driver.active is None else driver.active.default_handle
    h = int(s.handle)
    return 1 if h == 0 else h


def order_stream(consumer) -> None:
    """Make ``consumer`` (a DLPack ``stream`` value: None or 1 legacy default, 2 per-thread
    default, -1 no ordering, else a ``CUstream`` handle) wait for the work queued so far on
    gpunb's current stream, without blocking the host. A no-op when they are the same stream
    or when gpunb has queued no GPU work yet."""
    if consumer == -1:
        return
    mine = driver._current.stream
    if mine is None:
        if driver.active is None:
            return
        mine = driver.active.default_stream
    target = 1 if consumer is None else int(consumer)
    h = int(mine.handle)
    if h == target or (h in (0, 1) and target == 1):
        return
    try:
        driver.as_stream(target).wait(mine)
    except Exception as e:
        raise driver._translate(e, "ordering the DLPack consumer's stream") from e
