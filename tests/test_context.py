"""Engine state: the memo tables and the device context, and ``gpunb.core.reset()`` that
forgets them (CPU), then work after a reset on the GPU: nothing stale is replayed."""

import numpy as np
import pytest

import gpunb as gp
import gpunb.core
from gpunb.core import dtypes, memo
from gpunb.core.build import inspection  # noqa: F401  (their tables register on import)
from gpunb.core.kernels.raw import module  # noqa: F401
from gpunb.core.kernels.elementwise import ops
from gpunb.core.kernels.reduction.ir import result_dtype
from gpunb.core.runtime import driver


def test_reset_empties_every_memo_table():
    dtypes.check("f4")
    ops.loop(ops.get("add"), (np.dtype("float32"), float))
    result_dtype("sum", np.dtype("int8"))
    tables = {"dtypes.parsed": dtypes._checked, "elementwise.loops": ops._loops}
    assert all(tables.values())
    assert {"dtypes.parsed", "elementwise.loops", "reduction.result_dtypes", "raw.signatures",
            "raw.launch_dims", "inspection.programs", "inspection.sass"} <= set(memo.names())
    gpunb.core.reset()
    assert not any(tables.values())
    assert dtypes.check("f4") == np.float32          # and they fill again


def test_reset_forgets_the_device_in_use():
    gpunb.core.reset()
    assert driver.active is None and not driver._contexts


def test_device_context_is_typed():
    fields = set(driver.DeviceContext.__dataclass_fields__)
    assert {"core_device", "info", "core_stream", "default_handle", "handle", "pool", "modules",
            "kernels", "functions", "loaded", "prepared"} <= fields
    # cuda.core's objects are made on first use: the first array needs neither
    assert isinstance(driver.DeviceContext.device, property)
    assert isinstance(driver.DeviceContext.default_stream, property)


# -- the GPU -----------------------------------------------------------------------------------

gpu = pytest.mark.gpu


@gpu
def test_work_after_a_reset_uses_new_kernels_and_plans():
    x = np.arange(1000, dtype=np.float32)
    g = gp.asarray(x)

    @gp.fuse
    def f(a, s):
        return a * s + 1

    raw = gp.RawKernel(r'extern "C" __global__ void twice(float* a, int n) {'
                       r' int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] *= 2; }',
                       "twice")
    for _ in range(2):               # general path, then prepared launches and plans
        np.testing.assert_array_equal((g + g).get(), x + x)
        np.testing.assert_array_equal(f(g, 3.0).get(), x * 3 + 1)
        np.testing.assert_array_equal(g.sum(axis=0).get(), x.sum())
    before = driver.context()
    assert before.loaded and before.prepared and f._plans
    gpunb.core.reset()
    assert driver.active is None
    y = gp.asarray(x)                # a new context, new pool: old arrays stay valid
    ctx = driver.context()
    assert ctx is not before and not ctx.prepared
    for _ in range(2):
        np.testing.assert_array_equal((y + g).get(), x + x)
        np.testing.assert_array_equal(f(y, 2.0).get(), x * 2 + 1)
        np.testing.assert_array_equal(y.T.copy().get(), x)
    raw((4,), (256,), (y, 1000))
    np.testing.assert_array_equal(y.get(), x * 2)
    assert ctx.loaded and ctx.prepared
    assert gp.get_default_memory_pool() is ctx.pool


def test_main_thread_state_mirrors_the_thread_local_one(monkeypatch):
    """``driver.main`` (the hot paths' plain copy of the main thread's ``driver._current``)
    follows every set and delete on the main thread, and no other thread's; the current
    stream's handle reads it on the main thread and the thread-local state elsewhere."""
    import threading

    stream = type("S", (), {"handle": 1234})()
    monkeypatch.setattr(driver._current, "stream", stream)
    assert driver.main.stream is stream and driver.stream_handle() == 1234
    seen = []

    def other():
        assert driver._current.stream is None          # a new thread's own state
        driver._current.stream = type("S", (), {"handle": 99})()
        seen.append(driver.stream_handle())
    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen == [99] and driver.main.stream is stream and driver.stream_handle() == 1234
    del driver._current.stream                          # back to the class's default
    assert driver.main.stream is None is driver._current.stream
    driver._current.stream = stream                     # (monkeypatch's undo deletes it)
    for name in ("stream", "ctx", "core"):
        assert getattr(driver.main, name) is getattr(driver._current, name)
