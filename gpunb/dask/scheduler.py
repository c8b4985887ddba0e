"""A Dask scheduler for one GPU: every task in one thread, in graph order, with no waiting.

Dask's local schedulers cost about 120 us of host time per task (dask 2026.8; measured in
``benchmarks/dask_timing.py``): a ready queue, a thread pool's futures, and
:func:`dask.order.order` over the subgraph of every fused task on every run. That is five
times a 2**24-element chunk's sum on an H100, so a Dask computation over such chunks waits on
its scheduler, not on the GPU. On one GPU the threads buy nothing (kernels from every thread
go to the device one after another), and gpunb's calls return as soon as their kernels are
queued: walking the graph in order in the calling thread keeps the GPU busy while the host
prepares the next task, which is what this scheduler does::

    import dask, gpunb.dask
    with dask.config.set(scheduler=gpunb.dask.get):     # or x.compute(scheduler=gpunb.dask.get)
        total = x.sum().compute()

Any Dask collection and any chunk type work (it is a plain synchronous scheduler); results
are the same as Dask's ``"sync"`` scheduler's. An intermediate result is dropped as soon as its
last dependent has run (chunks free their GPU memory in time), local callbacks
(``dask.diagnostics.ProgressBar``, ``Profiler``...) see the usual state, and an exception
propagates from the task that raised it. For several GPUs use distributed
(:class:`gpunb.dask.LocalGPUCluster`).

It also skips Dask's low-level graph optimisation by default (``low_level_optimize=False``).
Dask runs it inside the graph the scheduler asks for: blockwise and task fusion, culling,
slice fusion, on every ``compute``, before the first task. Task fusion saves a scheduler's
per-task cost and the transfers between workers; here kernels are queued in order from one
thread, so it saves nothing, and culling is what walking the graph from the wanted keys does
anyway. It was 1.2 ms of a 64-chunk sum's 4.3 ms of host time on the CPU machine (first
compute of a new collection; 1.9 ms of a 3.0 ms fused ``persist``), all before the GPU had work.
Graphs read from files (``from_array`` of an HDF5 or Zarr dataset, then sliced) read whole
chunks without slice fusion: pass ``low_level_optimize=True`` there.

Dask's task objects (``dask._task_spec``, Dask 2024.12 and later) are what the graph holds; on
an older Dask this falls back to ``dask.local.get_sync``.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["get"]


def get(dsk, keys, cache=None, callbacks=None, low_level_optimize=False, **kwargs):
    """Compute ``keys`` of the Dask graph ``dsk`` in the calling thread, in dependency order.

    Parameters
    ----------
    dsk : Mapping or Dask expression
        The graph, as Dask passes it to a scheduler.
    keys : key or (nested) list of keys
        What to return, in the same structure.
    cache : MutableMapping, optional
        Results already known (key -> value); computed ones are added to it.
    callbacks : tuple of Dask callbacks, optional
        As for Dask's local schedulers; by default the active ones.
    low_level_optimize : bool, default False
        Run the collections' low-level graph optimisation (Dask's blockwise, task and slice
        fusion) first, as Dask's own schedulers do; see the module's notes.
    **kwargs
        Other schedulers' options (``num_workers``, ``pool``...), accepted and ignored.

    Returns
    -------
    The values of ``keys``, in their structure.
    """
    try:
        from dask._task_spec import convert_legacy_graph
    except ImportError:         # Dask before 2024.12: its own synchronous scheduler
        from dask.local import get_sync

        return get_sync(dsk, keys, cache=cache, callbacks=callbacks)
    from dask.callbacks import local_callbacks, unpack_callbacks
    from dask.core import flatten

    if not isinstance(dsk, Mapping):
        dsk = _graph(dsk, low_level_optimize)
    dsk = convert_legacy_graph(dsk)
    wanted = list(flatten(keys)) if isinstance(keys, list) else [keys]
    values = {} if cache is None else cache
    order, refs = _order(dsk, wanted, values)
    keep = set(wanted)
    run = _Runner()
    with local_callbacks(callbacks) as cbs:
        start, start_state, pretask, posttask, finish = unpack_callbacks(cbs)
        state = _state(dsk, order, values) if cbs else None
        for f in start:
            f(dsk)
        for f in start_state:
            f(dsk, state)
        failed = True
        try:
            for key in order:
                node = dsk[key]
                if state is not None:
                    state["waiting"].discard(key)
                    state["running"].add(key)
                    for f in pretask:
                        f(key, dsk, state)
                value = values[key] = run(node, values)
                if state is not None:
                    state["running"].discard(key)
                    state["finished"].add(key)
                for dep in node.dependencies:
                    left = refs[dep] = refs[dep] - 1
                    if not left and dep not in keep:
                        del values[dep]
                        if state is not None:
                            state["released"].add(dep)
                for f in posttask:
                    f(key, value, dsk, state, 0)
            failed = False
        finally:
            for f in finish:
                f(dsk, state, failed)
    return _pack(keys, values)


def _graph(expr, optimize: bool):
    """The task graph of the expression Dask hands a scheduler, without the collections'
    low-level optimisers unless ``optimize`` (the same tasks and keys; unneeded ones are never
    run, since the order starts from the wanted keys). An expression of another kind (not a
    sequence of high-level graphs) gives its own graph."""
    try:
        from dask._expr import HLGExpr, _HLGExprSequence
        from dask.highlevelgraph import HighLevelGraph
        from dask.utils import ensure_dict
    except ImportError:
        return expr.__dask_graph__()
    ops = expr.operands if isinstance(expr, _HLGExprSequence) else [expr]
    if optimize or not all(isinstance(op, HLGExpr) for op in ops):
        return expr.__dask_graph__()
    return ensure_dict(HighLevelGraph.merge(*(op.hlg for op in ops)))


def _order(dsk, wanted, known):
    """Depth-first post-order of what ``wanted`` needs (a chunk's chain is finished, and its
    parts released, before the next chunk's starts), and each key's count of dependents.
    Each task's dependencies are walked once, by an iterator resumed where it stopped."""
    order, refs, state = [], {}, {}         # state: 1 on the path being walked, 2 ordered
    for root in wanted:
        if root in state or root in known:
            continue
        path, deps = [root], [iter(_deps(dsk, root))]
        state[root] = 1
        while path:
            for dep in deps[-1]:
                refs[dep] = refs.get(dep, 0) + 1
                mark = state.get(dep)
                if mark is None:
                    if dep in known:
                        continue
                    state[dep] = 1
                    path.append(dep)
                    deps.append(iter(_deps(dsk, dep)))
                    break
                if mark == 1:
                    raise RuntimeError(f"the Dask graph has a cycle through {dep!r}")
            else:
                key = path.pop()
                deps.pop()
                state[key] = 2
                order.append(key)
    return order, refs


def _deps(dsk, key):
    try:
        return dsk[key].dependencies
    except KeyError:
        raise KeyError(f"the Dask graph has no task {key!r}, which another needs") from None


class _Runner:
    """Calls task nodes; a fused task's subgraph runs in an order found once per subgraph
    (Dask's own ``_execute_subgraph`` orders it with ``dask.order`` on every call). A plain
    ``Task`` is called here as its ``__call__`` would, less the check that its inputs are
    present (the order guarantees them; the check builds two sets a task)."""

    def __init__(self):
        from dask._task_spec import GraphNode, Task, TaskRef, _execute_subgraph

        self._node, self._ref, self._task, self._fused = GraphNode, TaskRef, Task, _execute_subgraph
        self._orders = {}

    def __call__(self, node, values):
        kwargs = getattr(node, "kwargs", None)
        if type(node) is self._task and node.func is not self._fused:
            args = [self._arg(a, values) for a in node.args]
            if kwargs:
                return node.func(*args, **{k: self._arg(v, values) for k, v in kwargs.items()})
            return node.func(*args)
        if getattr(node, "func", None) is not self._fused or kwargs:
            return node(values)
        inner, outkey, inkeys, *deps = (self._arg(a, values) for a in node.args)
        local = dict(zip(inkeys, deps))
        entry = self._orders.get(id(inner))
        if entry is None:       # (the subgraph kept in the entry: its id stays its own)
            entry = self._orders[id(inner)] = (inner, _order(inner, [outkey], local)[0])
        for key in entry[1]:
            local[key] = self(inner[key], local)
        return local[outkey]

    def _arg(self, a, values):
        if isinstance(a, self._ref):
            return values[a.key]
        if isinstance(a, self._node):
            return a({k: values[k] for k in a.dependencies})
        return a


def _state(dsk, order, values):
    """The state dict Dask's local callbacks read (ProgressBar counts its sets)."""
    return {"cache": values, "dsk": dsk, "ready": [], "waiting": set(order), "running": set(),
            "finished": set(), "released": set(), "dependencies": {}, "dependents": {},
            "waiting_data": {}}


def _pack(keys, values):
    if isinstance(keys, list):
        return [_pack(k, values) for k in keys]
    return values[keys]
