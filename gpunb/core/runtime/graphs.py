"""CUDA graphs for notebook loops: ``with gpunb.graph() as g:`` captures a region's kernel
launches, copies and allocations; ``g.replay()`` runs them all again with one launch.

A loop of small steps spends its time in the host's launches, not on the GPU: a 100-step
stencil on a small grid is a few hundred launches of a few microseconds each. Captured once,
the whole loop is one ``cuGraphLaunch``.

How it works (and the rules that follow from it):

- The region runs on a private stream under ``cuStreamBeginCapture`` (relaxed mode, so a
  kernel compiled on first use inside the region still loads). Nothing runs while capturing:
  at the end of the block the graph is instantiated and launched once, so the block's results
  are there when it exits, as if it had run normally.
- Arrays allocated inside the region are the graph's own allocations (``cuMemAllocFromPoolAsync``
  under capture makes allocation nodes, with fixed addresses): a replay writes its results
  into the same arrays, so ``y`` from the region holds the newest result after each replay.
  The graph is instantiated with ``AUTO_FREE_ON_LAUNCH``, so replays never pile up memory.
- Arrays made before the region are read and written where they are: update an input in
  place (``x[...] = new``) and replay, and the outputs follow.
- Python values are frozen into the graph: scalars, shapes, which branch an ``if`` took. A
  host synchronization (``.get()``, ``float(x)``, ``print(x)``, a result whose size is read
  back such as ``x[mask]`` or ``nonzero``) cannot be captured: the block raises
  :class:`GraphCaptureError` naming the cause, and no graph is kept.
- ``replay()`` is ordered with the caller's current stream like any gpunb operation.

CuPy's capture API works too, on gpunb's streams: ``s.begin_capture()``, the work (``with
s:``), ``g = s.end_capture()``, then ``g.launch()`` / ``g.launch(stream)``. As in CuPy, the
captured work has not run when ``end_capture`` returns (a ``gpunb.graph()`` block has), the
null stream cannot be captured, and a launch goes on the stream given (default: the current
one).
"""

from __future__ import annotations

import functools

from ..errors import GPUNBError
from . import driver, fastcall, memory


class GraphCaptureError(GPUNBError, RuntimeError):
    """Something in a ``gpunb.graph()`` region cannot be captured into a CUDA graph."""


_WHY = ("a CUDA graph cannot capture a host synchronization: .get(), .item(), float(x), print(x), "
        "gpunb.synchronize(), or a call whose result size is read back from the GPU "
        "(x[mask], nonzero, unique...). Move it out of the captured region")


class Graph:
    """A captured CUDA graph (``with gpunb.graph() as g: ...``; then ``g.replay()``).

    Attributes
    ----------
    nodes : int
        How many operations (kernels, copies, memsets, allocations) the graph holds.
    replays : int
        How many times it has been launched (the launch at the end of capture included).
    """

    def __init__(self):
        self._graph = self._exec = None
        self._stream = None         # the gpunb Stream captured on (replays launch there)
        self._saved = None
        self.nodes = 0
        self.replays = 0

    # -- capture ---------------------------------------------------------------------------
    def __enter__(self) -> "Graph":
        if self._exec is not None or self._stream is not None:
            raise GraphCaptureError("this graph has already been captured; make a new gpunb.graph()")
        from .stream import Stream, get_current_stream

        d = driver._driver_module()
        self._saved = get_current_stream()
        self._stream = Stream()         # blocking: ordered with the legacy default stream
        self._stream.wait_event(self._saved.record())       # after the caller's earlier work
        self._stream.use()
        handle = self._stream.ptr
        pool = memory.get_default_memory_pool()
        pool._capturing.add(handle)
        try:
            driver.check(d.cuStreamBeginCapture(
                handle, d.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED), "graph capture start")
        except BaseException:
            pool._capturing.discard(handle)
            self._saved.use()
            raise
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        d = driver._driver_module()
        handle = self._stream.ptr
        memory.get_default_memory_pool()._capturing.discard(handle)
        self._saved.use()
        err, graph = d.cuStreamEndCapture(handle)
        if exc is not None:
            if graph is not None and int(err) == 0:
                d.cuGraphDestroy(graph)
            if isinstance(exc, GraphCaptureError):
                return None
            if _capture_failure(exc, err):
                raise GraphCaptureError(f"{_WHY} ({exc})") from exc
            return None         # the block's own error propagates as it is
        if int(err) != 0:
            raise GraphCaptureError(f"the graph capture failed: {getattr(err, 'name', err)}; {_WHY}")
        self._instantiate(graph)
        self.replay()           # the region's results, as if it had run

    def _instantiate(self, graph) -> None:
        d = driver._driver_module()
        self._graph = graph
        result = d.cuGraphGetNodes(graph, 0)
        self.nodes = int(result[-1]) if int(result[0]) == 0 else 0
        flags = d.CUgraphInstantiate_flags.CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH
        (self._exec,) = driver.check(d.cuGraphInstantiate(graph, int(flags)), "graph instantiation")
        self._exec_handle = int(self._exec)

    # -- replay ----------------------------------------------------------------------------
    def replay(self) -> None:
        """Launch the captured work again, with one driver call (ordered after the current
        stream's earlier work, and the current stream's later work after it)."""
        if self._exec is None:
            raise GraphCaptureError("nothing captured yet: use the graph in a `with` block first")
        mine = self._stream.ptr
        _, current = driver.current_stream()
        if current in (0, mine):    # legacy default: a blocking stream is ordered with it
            fastcall.graph_launch(self._exec_handle, mine)
        else:
            from .stream import Event, Stream

            caller = Stream.__new__(Stream)
            caller._null, caller._core = False, driver.as_stream(current)
            self._stream.wait_event(caller.record(Event(disable_timing=True)))
            fastcall.graph_launch(self._exec_handle, mine)
            caller.wait_event(self._stream.record(Event(disable_timing=True)))
        self.replays += 1

    def launch(self, stream=None) -> None:
        """Launch the graph on ``stream`` (default: the current stream), CuPy's
        ``Graph.launch``: ordered after that stream's earlier work like any kernel."""
        handle = self._on(stream)
        fastcall.graph_launch(self._exec_handle, handle)
        self.replays += 1

    def upload(self, stream=None) -> None:
        """Prepare the graph's launch on the device ahead of the first one (CuPy's
        ``Graph.upload``; optional)."""
        handle = self._on(stream)
        driver.check(driver._driver_module().cuGraphUpload(self._exec, handle), "graph upload")

    def _on(self, stream) -> int:
        """The handle of ``stream`` (default: the current stream) to launch on; raises before
        a capture."""
        if self._exec is None:
            raise GraphCaptureError("nothing captured yet")
        return driver.current_stream()[1] if stream is None else int(driver.as_stream(stream).handle)

    def __del__(self):
        try:
            if not driver._driver.ready:
                return
            d = driver._driver_module()
            if self._exec is not None:
                d.cuGraphExecDestroy(self._exec)
            if self._graph is not None:
                d.cuGraphDestroy(self._graph)
        except Exception:       # interpreter shutdown
            pass

    def __repr__(self) -> str:
        state = f"{self.nodes} nodes, {self.replays} launches" if self._exec is not None else "not captured"
        return f"<gpunb.Graph {state}>"


def begin_capture(stream, mode=None) -> None:
    """Start capturing ``stream``'s work into a graph (``Stream.begin_capture``, CuPy's):
    ``mode`` is CUDA's capture mode number (default relaxed, 2: a kernel compiled on first
    use inside still loads)."""
    if stream._null:
        raise GraphCaptureError("the null stream cannot be captured; capture a gpunb.Stream() "
                                "(e.g. Stream(non_blocking=True)), as in CuPy")
    d = driver._driver_module()
    handle = stream.ptr
    mode = d.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED if mode is None else d.CUstreamCaptureMode(int(mode))
    pool = memory.get_default_memory_pool()
    pool._capturing.add(handle)
    try:
        driver.check(d.cuStreamBeginCapture(handle, mode), "graph capture start")
    except BaseException:
        pool._capturing.discard(handle)
        raise


def end_capture(stream) -> Graph:
    """Stop capturing ``stream``: the :class:`Graph` of what it captured, instantiated and not
    yet launched (``Stream.end_capture``, CuPy's)."""
    d = driver._driver_module()
    handle = stream.ptr
    memory.get_default_memory_pool()._capturing.discard(handle)
    err, graph = d.cuStreamEndCapture(handle)
    if int(err) != 0:
        raise GraphCaptureError(f"the graph capture failed: {getattr(err, 'name', err)}; {_WHY}")
    g = Graph()
    g._stream = stream
    g._instantiate(graph)
    return g


def is_capturing(stream) -> bool:
    """Whether ``stream`` is being captured (``Stream.is_capturing``, CuPy's)."""
    if stream._null and stream._core is None:
        return False
    d = driver._driver_module()
    status = driver.check(d.cuStreamIsCapturing(stream.ptr), "a capture status query")[0]
    return int(status) != int(d.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_NONE)


def _capture_failure(exc: BaseException, err) -> bool:
    """Whether ``exc`` (raised inside the region) comes from the capture itself."""
    text = str(exc)
    return ("CAPTURE" in text or "capture" in text or int(err) != 0
            or "STREAM_CAPTURE" in getattr(err, "name", ""))


class GraphFunction:
    """``@gpunb.graph`` on a function: the first call with given arrays captures it, later
    calls with the same arrays (same memory, shapes and dtypes) and the same other arguments
    replay the graph and return the same result objects, updated."""

    LIMIT = 8   # captured argument sets kept per function

    def __init__(self, fn):
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._graphs: dict = {}

    def __call__(self, *args, **kwargs):
        key = _key(args, kwargs)
        hit = self._graphs.get(key)
        if hit is not None:
            hit[0].replay()
            return hit[1]
        g = Graph()
        with g:
            result = self._fn(*args, **kwargs)
        if len(self._graphs) >= self.LIMIT:
            self._graphs.pop(next(iter(self._graphs)))
        self._graphs[key] = (g, result, args, kwargs)      # args kept: their memory is baked in
        return result

    def graphs(self) -> list[Graph]:
        """The captured graphs, oldest first."""
        return [v[0] for v in self._graphs.values()]


def _key(args, kwargs):
    from ..ndarray import ndarray

    def one(v):
        if type(v) is ndarray:
            return ("a", v._data.ptr, v._shape, v._strides, v._dtype.str)
        try:
            hash(v)
        except TypeError:
            return ("id", id(v))
        return ("v", type(v).__name__, v)
    return (tuple(one(a) for a in args), tuple((k, one(v)) for k, v in sorted(kwargs.items())))


def graph(fn=None):
    """Capture GPU work into a CUDA graph and replay it with one launch.

    ``with gpunb.graph() as g:`` captures the block (which still produces its results);
    ``g.replay()`` runs the same work again, writing into the same arrays. ``@gpunb.graph``
    on a function captures its first call per set of array arguments and replays it on later
    calls with those arrays, returning the same (updated) result objects.

    Parameters
    ----------
    fn : callable, optional
        The function to capture (decorator form).

    Returns
    -------
    Graph or GraphFunction

    Notes
    -----
    Scalars, shapes and branches are frozen at capture; host synchronizations inside the
    region raise :class:`GraphCaptureError`. See :mod:`gpunb.core.runtime.graphs`.

    Examples
    --------
    >>> u = gpunb.zeros((64, 64)); u[32, 32] = 1
    >>> with gpunb.graph() as g:
    ...     for _ in range(100):
    ...         u[1:-1, 1:-1] += 0.1 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]
    ...                                 - 4 * u[1:-1, 1:-1])
    >>> g.replay()          # 100 more steps, one launch
    """
    if fn is None:
        return Graph()
    if not callable(fn):
        raise TypeError(f"gpunb.graph takes a function (or nothing), not {type(fn).__name__}")
    return GraphFunction(fn)
