"""gpunb.dask.get, the one-GPU Dask scheduler: the same results as Dask's synchronous
scheduler on any graph (NumPy chunks here: the scheduler never looks at a chunk), intermediate
results released after their last dependent, callbacks, errors. gpunb chunks on the GPU:
tests/test_dask.py (its "gpunb" scheduler rows)."""

from __future__ import annotations

import operator
import weakref

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
import dask  # noqa: E402

import gpunb.dask  # noqa: E402

get = gpunb.dask.get


def _rand(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _collections():
    h = _rand((120, 90))
    d = da.from_array(h, chunks=(25, 40))
    v = da.from_array(_rand(500, 1), chunks=37)
    return {
        "sum": d.sum(),
        "sum axis 0": d.sum(axis=0),
        "mean, std axis 1": d.mean(axis=1) + d.std(axis=1),
        "argmax": d.argmax(axis=0),
        "cumsum": d.cumsum(axis=1),
        "matmul": d @ d.T,
        "rechunk": d.rechunk((60, 30)) * 2,
        "map_blocks chain": d.map_blocks(np.sin).map_blocks(lambda b: b * 3 + 1),
        "map_overlap": d.map_overlap(lambda b: b - b.mean(), depth=2, boundary="reflect"),
        "elementwise tree": (da.exp(-d * d) + abs(d) ** 0.5).sum(axis=0),
        "sort-like topk": v.topk(5),
        "slicing": d[::3, 7:70:4].T,
        "percentile": da.percentile(v, [10, 50, 90]),
    }


@pytest.mark.parametrize("low_level", [False, True])
@pytest.mark.parametrize("fuse", [True, False])
@pytest.mark.parametrize("name", list(_collections()))
def test_results_equal_dasks_sync_scheduler(name, fuse, low_level):
    with dask.config.set({"optimization.fuse.active": fuse}):
        x = _collections()[name]
        want = x.compute(scheduler="sync")
        got = x.compute(scheduler=get, low_level_optimize=low_level)
    np.testing.assert_array_equal(got, want)


def test_dasks_low_level_optimisation_runs_only_when_asked():
    """By default the graph's tasks run as the collection built them (culled by the walk from
    the wanted keys); ``low_level_optimize=True`` runs the collection's optimiser first."""
    from dask.array.optimization import optimize

    calls, ran = [], []

    def spy(dsk, keys, **kwargs):
        calls.append(len(keys))
        return optimize(dsk, keys, **kwargs)

    from dask.callbacks import Callback

    d = da.from_array(_rand(400), chunks=50)
    x = (d * 2 + 1)[:120].sum()          # the slice leaves 5 of the 8 chunks unneeded
    want = x.compute(scheduler="sync", optimize_graph=False)
    with dask.config.set(array_optimize=spy), Callback(pretask=lambda k, dsk, st: ran.append(k)):
        assert x.compute(scheduler=get) == pytest.approx(want)
        assert calls == [] and ran
        names = {k[0] if isinstance(k, tuple) else k for k in ran}
        assert any(n.startswith("array-") for n in names)      # the getters, run as tasks
        # culled: no task of the chunks past the slice
        muls = sorted(k[1] for k in ran if isinstance(k, tuple) and k[0].startswith("mul-"))
        assert muls == [0, 1, 2]
        assert not any(isinstance(k, tuple) and k[0].startswith("mul-") and k[1] >= 3 for k in ran)
        ran.clear()
        assert x.compute(scheduler=get, low_level_optimize=True) == pytest.approx(want)
        assert len(calls) == 1 and ran


def test_tasks_with_keyword_and_nested_arguments():
    """Tasks are called as Dask's ``Task.__call__`` calls them: references, nested lists and
    dicts of references, keyword arguments holding references."""
    from dask import delayed

    def combine(a, parts, scale=1, extra=None):
        return (a + sum(parts) + sum(extra.values())) * scale

    a, b, c = delayed(1), delayed(lambda: 2)(), delayed(lambda: 3)()
    out = delayed(combine)(a, [b, c, 4], scale=delayed(lambda: 10)(), extra={"x": b, "y": 5})
    assert out.compute(scheduler=get) == out.compute(scheduler="sync") == (1 + 9 + 7) * 10


def test_compute_of_several_collections_and_persist():
    c = _collections()
    a, b = dask.compute(c["sum"], c["matmul"], scheduler=get)
    np.testing.assert_array_equal(a, c["sum"].compute(scheduler="sync"))
    np.testing.assert_array_equal(b, c["matmul"].compute(scheduler="sync"))
    (p,) = dask.persist(c["cumsum"], scheduler=get)
    assert all(isinstance(v, np.ndarray) for v in dict(p.__dask_graph__()).values())
    np.testing.assert_array_equal(p.compute(scheduler="sync"), c["cumsum"].compute(scheduler="sync"))


def test_delayed_and_config_setting():
    @dask.delayed
    def add(a, b):
        return a + b

    total = add(add(1, 2), add(add(3, 4), 5))
    with dask.config.set(scheduler=get):
        assert total.compute() == 15


def test_legacy_graph_with_nested_keys_and_a_cache():
    dsk = {"a": 1, "b": (operator.add, "a", 10), "c": (operator.mul, "b", 2),
           "d": (sum, ["a", "b", "c"]), "e": (operator.neg, "d")}
    assert get(dsk, "e") == -(1 + 11 + 22)
    assert get(dsk, [["c", "a"], "e"]) == [[22, 1], -34]
    cache = {"b": 100}                       # a known value is used, not recomputed
    assert get(dsk, ["c", "d"], cache=cache) == [200, 1 + 100 + 200]


def test_an_exception_in_a_task_propagates_as_itself():
    def boom(x):
        raise ZeroDivisionError(f"chunk {x.shape}")

    d = da.ones(10, chunks=5).map_blocks(boom, dtype=float)
    with pytest.raises(ZeroDivisionError, match="chunk"):
        d.compute(scheduler=get)


def test_cycles_and_missing_tasks_are_named():
    with pytest.raises(RuntimeError, match="cycle"):
        get({"a": (operator.neg, "b"), "b": (operator.neg, "a")}, "a")
    from dask._task_spec import Task, TaskRef

    with pytest.raises(KeyError, match="'nothere'"):
        get({"a": Task("a", operator.neg, TaskRef("nothere"))}, "a")


class _Chunk:
    """A chunk whose lifetime the test can watch."""

    def __init__(self, v):
        self.v = v


def test_intermediates_are_released_after_their_last_dependent():
    """Each chunk's intermediate is gone (no reference left) before the next chunk starts:
    on the GPU this is what frees a chunk's memory in time."""
    alive = []

    def make(i):
        c = _Chunk(i)
        alive.append(weakref.ref(c))
        return c

    def seen_when_made(c):
        return (c.v, sum(r() is not None for r in alive))

    n = 6
    dsk = {("m", i): (make, i) for i in range(n)}
    dsk.update({("s", i): (seen_when_made, ("m", i)) for i in range(n)})
    out = get(dsk, [("s", i) for i in range(n)])
    assert sorted(v for v, _ in out) == list(range(n))
    assert max(live for _, live in out) == 1          # never two chunks alive at once
    assert all(r() is None for r in alive)


def test_callbacks_see_every_task_and_progress_completes(capsys):
    from dask.callbacks import Callback
    from dask.diagnostics import ProgressBar

    events = []

    class Recorder(Callback):
        def _start(self, dsk):
            events.append(("start", len(dsk)))

        def _pretask(self, key, dsk, state):
            events.append(("pre", key))

        def _posttask(self, key, result, dsk, state, worker_id):
            events.append(("post", key, len(state["finished"])))

        def _finish(self, dsk, state, errored):
            events.append(("finish", errored, len(state["finished"]), len(state["waiting"])))

    d = da.from_array(_rand(1000), chunks=100).sum()
    with Recorder(), ProgressBar(minimum=0, dt=0.001):
        got = d.compute(scheduler=get)
    assert got == pytest.approx(d.compute(scheduler="sync"))
    pre = [e[1] for e in events if e[0] == "pre"]
    post = [e[1] for e in events if e[0] == "post"]
    assert pre == post and len(pre) == len(set(pre)) > 10
    assert [e[2] for e in events if e[0] == "post"] == list(range(1, len(post) + 1))
    assert events[-1] == ("finish", False, len(post), 0)
    assert "100% Completed" in capsys.readouterr().out


def test_a_failure_reaches_the_finish_callback():
    from dask.callbacks import Callback

    finished = []

    def bad(x):
        raise ValueError("bad chunk")

    with Callback(finish=lambda dsk, state, errored: finished.append(errored)):
        with pytest.raises(ValueError, match="bad chunk"):
            da.ones(4, chunks=2).map_blocks(bad, dtype=float).compute(scheduler=get)
    assert finished == [True]


def test_other_schedulers_options_are_accepted():
    d = da.arange(100, chunks=10).sum()
    assert d.compute(scheduler=get, num_workers=4) == 4950


def test_a_collection_computed_again_reuses_its_compiled_tasks_and_order(monkeypatch):
    """The second compute of one collection converts and compiles only Dask's new finalising
    task, and walks only it (the rest of the order is the first compute's); the results are
    the same, for compute and persist."""
    from gpunb.dask import scheduler as sch

    d = da.from_array(_rand((60, 50), 4), chunks=(20, 10))
    x = (d * 2).sum(axis=0) + 1
    want = x.compute(scheduler="sync")
    compiled, orders = [], []
    real_compile, real_order = sch._compile, sch._order
    monkeypatch.setattr(sch, "_compile", lambda node: compiled.append(node) or real_compile(node))
    # the walks of the whole graph (not kept to the new keys)
    monkeypatch.setattr(sch, "_order", lambda *a, **kw: (kw.get("inside") is None and orders.append(a[1]))
                        or real_order(*a, **kw))
    np.testing.assert_array_equal(x.compute(scheduler=get), want)
    assert len(compiled) > 30 and len(orders) == 1
    compiled.clear(), orders.clear()
    np.testing.assert_array_equal(x.compute(scheduler=get), want)
    assert 1 <= len(compiled) <= 2 and orders == []
    (p,) = dask.persist(x, scheduler=get)
    compiled.clear(), orders.clear()
    (q,) = dask.persist(x, scheduler=get)
    assert compiled == [] and orders == []
    np.testing.assert_array_equal(q.compute(scheduler="sync"), want)
    np.testing.assert_array_equal(p.compute(scheduler="sync"), want)


def test_a_reused_order_must_come_from_the_same_layers():
    """An order found for other layer objects (the same ids, as after garbage collection) is
    not used: each stable layer's cache reference is checked."""
    from gpunb.dask import scheduler as sch

    d = da.from_array(_rand(300, 5), chunks=40)
    x = d.sum()
    want = x.compute(scheduler="sync")
    sch._ORDER_CACHE.clear()
    assert x.compute(scheduler=get) == pytest.approx(want)
    (key, (refs, head, head_refs)), = sch._ORDER_CACHE.items()
    sch._ORDER_CACHE[key] = (tuple(weakref.ref(_Chunk(0).__class__) for _ in refs), ["bogus"], {})
    assert x.compute(scheduler=get) == pytest.approx(want)
    assert sch._ORDER_CACHE[key][1] == head


def test_cached_tasks_keep_no_graph_alive():
    """The cache of converted tasks lives with each layer: once a collection is gone its
    chunks are freed and its entries dropped."""
    import gc

    from gpunb.dask import scheduler as sch

    gc.collect()
    before = len(sch._LAYER_CACHE)
    refs = []
    for i in range(3):
        h = _rand(500, i)
        refs.append(weakref.ref(h))
        x = (da.from_array(h, chunks=100) + 1).sum()
        assert x.compute(scheduler=get) == pytest.approx((h + 1).sum())
        assert x.compute(scheduler=get) == pytest.approx((h + 1).sum())
        del h, x
    gc.collect()
    assert all(r() is None for r in refs)
    assert len(sch._LAYER_CACHE) <= before


def test_a_legacy_layer_is_converted_again_when_the_graphs_keys_change():
    """A legacy task's string or tuple is a reference only where the graph has that key: the
    same layer object in a graph without the key reads it as a literal."""
    from dask.highlevelgraph import MaterializedLayer

    from gpunb.dask import scheduler as sch

    tag = lambda v: ("got", v)      # noqa: E731
    layer = MaterializedLayer({"a": (tag, "b")})
    with_b = MaterializedLayer({"b": 10})
    dsk, fns, _, _ = sch._merge([layer, with_b])
    assert fns["a"]({"b": 10}) == ("got", 10) and dsk["a"].dependencies == {"b"}
    dsk, fns, _, _ = sch._merge([layer])
    assert fns["a"]({}) == ("got", "b") and not dsk["a"].dependencies
    dsk, fns, stable, _ = sch._merge([layer, with_b], ["a"])
    assert fns["a"]({"b": 10}) == ("got", 10)
