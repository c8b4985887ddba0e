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

Work is done once per graph, not once per ``compute``. Each layer's tasks are converted (a
legacy layer's tuples) and compiled (each argument classified as a reference, a constant or a
nested task, so a call is a lookup per reference and the function's call) once per layer
object, and the order of a collection's tasks is found once. A collection computed again (a
timing loop, an iteration of a notebook cell) walks only Dask's new finalising task. Both
caches keep no graph alive: the task cache lives with each layer (dropped by a weak
reference), and an order is reused only while its layers are the same objects. A 64-chunk
sum's whole ``compute`` took 2.1-2.5 ms of host time before this and 1.3-1.6 ms after (CPU
machine, null GPU, second and later computes).

Dask's task objects (``dask._task_spec``, Dask 2024.12 and later) are what the graph holds; on
an older Dask this falls back to ``dask.local.get_sync``.
"""

from __future__ import annotations

import functools
import weakref
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

    layers = None if isinstance(dsk, Mapping) else _layers(dsk, low_level_optimize)
    wanted = list(flatten(keys)) if isinstance(keys, list) else [keys]
    keep = set(wanted)
    values = {} if cache is None else cache
    if layers is None:
        if not isinstance(dsk, Mapping):
            dsk = dsk.__dask_graph__()
        dsk = convert_legacy_graph(dsk)
        fns = {k: _compile(v) for k, v in dsk.items()}
        order, refs = _order(dsk, wanted, values)
    else:
        dsk, fns, stable, fresh = _merge(layers, keep)
        order, refs = _plan(dsk, wanted, values, stable, fresh)
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
                if state is not None:
                    state["waiting"].discard(key)
                    state["running"].add(key)
                    for f in pretask:
                        f(key, dsk, state)
                value = values[key] = fns[key](values)
                if state is not None:
                    state["running"].discard(key)
                    state["finished"].add(key)
                for dep in dsk[key].dependencies:
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


def _layers(expr, optimize: bool):
    """The layers of the high-level graphs in the expression Dask hands a scheduler, without
    the collections' low-level optimisers (the same tasks and keys; unneeded ones are never
    run, since the order starts from the wanted keys); None for an expression of another kind
    (not a sequence of high-level graphs) or when ``optimize``."""
    try:
        from dask._expr import HLGExpr, _HLGExprSequence
    except ImportError:
        return None
    ops = expr.operands if isinstance(expr, _HLGExprSequence) else [expr]
    if optimize or not all(isinstance(op, HLGExpr) for op in ops):
        return None
    seen, out = set(), []
    for op in ops:
        for layer in op.hlg.layers.values():
            if id(layer) not in seen:
                seen.add(id(layer))
                out.append(layer)
    return out


# A layer's tasks, converted and compiled once per layer object: a collection computed again
# (a notebook's timing loop, an iteration) pays neither again. Keyed by the layer's id while
# it lives (a weak reference drops the entry with the layer, so no graph is kept alive).
_LAYER_CACHE: dict = {}


class _AskedKeys:
    """The graph's keys, as ``convert_legacy_graph`` tests a legacy task's tuples and strings
    against them (a key there is a reference), remembering each answer: a layer converted
    once is reused while every answer still holds."""

    def __init__(self, keys):
        self.keys, self.asked = keys, {}

    def __contains__(self, key):
        found = self.asked[key] = key in self.keys
        return found


def _layer_tasks(layer, all_keys):
    """(tasks, compiled, the cache entry's weak reference (None: not cacheable), whether it
    was found in the cache) of ``layer``; ``all_keys()`` gives every key of the graph."""
    ts = _task_spec()
    i = id(layer)
    entry = _LAYER_CACHE.get(i)
    if entry is not None and entry[0]() is layer and entry[1] == len(layer):
        asked = entry[4]
        if not asked or all((k in all_keys()) == found for k, found in asked.items()):
            return entry[2], entry[3], entry[0], True
    tasks, asked = dict(layer), {}
    if not all(isinstance(t, ts.GraphNode) for t in tasks.values()):
        keys = _AskedKeys(all_keys())      # a legacy layer: its tuples may name other layers' keys
        tasks = ts.convert_legacy_graph(tasks, all_keys=keys)
        asked = keys.asked
    fns = {k: _compile(t) for k, t in tasks.items()}

    def drop(ref, i=i):
        if _LAYER_CACHE.get(i, (None,))[0] is ref:
            del _LAYER_CACHE[i]

    try:
        ref = weakref.ref(layer, drop)
    except TypeError:           # not weakly referable: not cached
        return tasks, fns, None, False
    _LAYER_CACHE[i] = (ref, len(layer), tasks, fns, asked)
    return tasks, fns, ref, False


def _merge(layers, wanted=frozenset()):
    """The graph of ``layers`` (key -> task), each task's compiled call, the stable part of
    the graph (the layers' ids and cache references), and the keys of the rest: layers that
    cannot be cached, and new ones holding a ``wanted`` key (a compute's finalising task,
    new on every compute; the layers under it are the same objects next time)."""
    dsk, fns, keys, stable, fresh = {}, {}, [], [], set()
    if not isinstance(wanted, (set, frozenset)):
        wanted = set(wanted)

    def all_keys():
        if not keys:
            keys.append(set().union(*layers))
        return keys[0]

    for layer in layers:
        tasks, compiled, ref, hit = _layer_tasks(layer, all_keys)
        dsk.update(tasks)
        fns.update(compiled)
        if ref is None or (not hit and not wanted.isdisjoint(tasks)):
            fresh.update(tasks)
        else:
            stable.append((id(layer), ref))
    return dsk, fns, tuple(stable), fresh


# The stable part's order, per (its layers, the keys the walk enters it by): a compute of
# the same collection again walks only its new finalising task. Bounded: cleared when full.
_ORDER_CACHE: dict = {}
_ORDER_CACHE_SIZE = 64


def _plan(dsk, wanted, known, stable, fresh):
    """:func:`_order`'s (order, refs), the stable part's walk reused: the new keys
    (``fresh``) are walked here, the stable keys they reach are ordered first, by a walk
    found once per entry set (and only reused while every stable layer is the same object;
    a stable task that needs a new key, or known values, walk everything)."""
    if known or not stable:
        return _order(dsk, wanted, known)
    entries = [k for k in wanted if k not in fresh]
    roots = [k for k in wanted if k in fresh]
    # a post-order of the new keys alone; the stable keys they need are entries
    tail, refs = _order(dsk, roots, known, inside=fresh, outside=entries)
    entries = list(dict.fromkeys(entries))
    key = (tuple(i for i, _ in stable), frozenset(entries))   # (a set: its walk order may vary)
    hit = _ORDER_CACHE.get(key)
    if hit is not None and all(a is b for a, (_, b) in zip(hit[0], stable)):
        head, head_refs = hit[1], hit[2]
    else:       # (the same ids with other layers behind them: their references differ)
        head, head_refs = _order(dsk, entries, known)
        if any(k in fresh for k in head):
            return _order(dsk, wanted, known)      # the stable part needs a new key
        if len(_ORDER_CACHE) >= _ORDER_CACHE_SIZE:
            _ORDER_CACHE.clear()
        _ORDER_CACHE[key] = (tuple(ref for _, ref in stable), head, head_refs)
    if not roots:
        return head, dict(head_refs)
    merged = dict(head_refs)
    for k, n in refs.items():
        merged[k] = merged.get(k, 0) + n
    return head + tail, merged


def _order(dsk, wanted, known, inside=None, outside=None):
    """Depth-first post-order of what ``wanted`` needs (a chunk's chain is finished, and its
    parts released, before the next chunk's starts), and each key's count of dependents.
    Each task's dependencies are walked once, by an iterator resumed where it stopped. With
    ``inside`` (a set of keys), the walk stays in it: a dependency outside is counted and
    appended to ``outside``, not walked."""
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
                    if inside is not None and dep not in inside:
                        outside.append(dep)
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


_REF, _CONST, _CALL = 0, 1, 2


def _compile(node):
    """A function of the computed values (key -> value) that runs the task ``node``, as its
    ``__call__`` would, less the check that its inputs are present (the order guarantees
    them; the check builds two sets a task) and the per-argument type tests, done here once.
    Nodes of other kinds are called as they are."""
    ts = _task_spec()
    kind = type(node)
    if kind is ts.DataNode:
        value = node.value
        return lambda values: value
    if kind is ts.Alias:
        target = node.target
        return lambda values: values[target]
    if not isinstance(node, ts.Task) or kind.__call__ is not ts.Task.__call__:
        deps = node.dependencies
        return lambda values: node({k: values[k] for k in deps})
    if node.func is ts._execute_subgraph and not node.kwargs:
        return _Subgraph([_part(a) for a in node.args])
    func = node.func
    spec = [_part(a) for a in node.args]
    names, kwspec = tuple(node.kwargs), [_part(a) for a in node.kwargs.values()]
    kw = ({name: p for name, (_, p) in zip(names, kwspec)}
          if all(k == _CONST for k, _ in kwspec) else None)
    if kw is not None and all(k != _CALL for k, _ in spec):
        if len(spec) == 1 and spec[0][0] == _REF:       # most chunk tasks: f(chunk, **consts)
            key = spec[0][1]
            return (lambda values: func(values[key], **kw)) if kw else (lambda values: func(values[key]))
        if all(k == _CONST for k, _ in spec):
            args = [p for _, p in spec]
            return lambda values: func(*args, **kw)

    def run(values):
        args = _evaluate(spec, values)
        if kw is not None:
            return func(*args, **kw)
        return func(*args, **dict(zip(names, _evaluate(kwspec, values))))
    return run


def _part(a):
    """An argument of a task, classified once: a reference, a constant, or a nested task."""
    ts = _task_spec()
    if isinstance(a, ts.TaskRef):
        return _REF, a.key
    if type(a) is ts.DataNode:     # a literal Dask wrapped (a getter's index)
        return _CONST, a.value
    if isinstance(a, ts.GraphNode):
        return _CALL, _compile(a)
    return _CONST, a


def _evaluate(parts, values) -> list:
    """The values of :func:`_part` s for a call."""
    return [p if k == _CONST else values[p] if k == _REF else p(values) for k, p in parts]


@functools.cache
def _task_spec():
    """Dask's task module, imported once (not at import: Dask is optional)."""
    from dask import _task_spec

    return _task_spec


class _Subgraph:
    """A fused task (Dask's ``_execute_subgraph``): its subgraph runs in an order found, and
    with tasks compiled, once per subgraph (Dask's own orders it with ``dask.order`` on every
    call)."""

    def __init__(self, spec):
        self.spec = spec
        self.plans = {}

    def __call__(self, values):
        inner, outkey, inkeys, *deps = _evaluate(self.spec, values)
        local = dict(zip(inkeys, deps))
        plan = self.plans.get(id(inner))
        if plan is None:        # (the subgraph kept in the plan: its id stays its own)
            order = _order(inner, [outkey], local)[0]
            plan = self.plans[id(inner)] = (inner, [(k, _compile(inner[k])) for k in order])
        for key, fn in plan[1]:
            local[key] = fn(local)
        return local[outkey]


def _state(dsk, order, values):
    """The state dict Dask's local callbacks read (ProgressBar counts its sets)."""
    return {"cache": values, "dsk": dsk, "ready": [], "waiting": set(order), "running": set(),
            "finished": set(), "released": set(), "dependencies": {}, "dependents": {},
            "waiting_data": {}}


def _pack(keys, values):
    if isinstance(keys, list):
        return [_pack(k, values) for k in keys]
    return values[keys]
