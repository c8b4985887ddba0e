"""CUDA graphs (gpunb.graph): capture a region's launches and allocations, replay them with
one launch. CPU: the public forms and their errors; GPU: replays equal eager runs (checked
against NumPy), outputs are updated in place, inputs updated in place flow through, host
synchronizations inside a region raise GraphCaptureError and leave gpunb usable, and replays
do not pile up memory."""

import numpy as np
import pytest

import gpunb as gp
from gpunb.core.runtime import graphs

gpu = pytest.mark.gpu


def test_public_forms_and_errors_without_a_gpu():
    assert gp.graph is graphs.graph and gp.Graph is graphs.Graph
    assert issubclass(gp.GraphCaptureError, gp.GPUNBError)
    g = gp.graph()
    assert isinstance(g, gp.Graph) and repr(g) == "<gpunb.Graph not captured>"
    with pytest.raises(gp.GraphCaptureError, match="nothing captured yet"):
        g.replay()

    @gp.graph
    def step(x, k=2):
        """Doubles."""
        return x * k

    assert isinstance(step, graphs.GraphFunction) and step.__doc__ == "Doubles." and step.graphs() == []
    with pytest.raises(TypeError, match="takes a function"):
        gp.graph(3)


def test_cupy_capture_api_without_a_gpu():
    g = gp.cuda.Graph()
    assert gp.cuda.Graph is gp.Graph
    for call in (g.launch, g.upload):
        with pytest.raises(gp.GraphCaptureError, match="nothing captured yet"):
            call()
    with pytest.raises(gp.GraphCaptureError, match="null stream"):
        gp.cuda.Stream.null.begin_capture()
    assert gp.cuda.Stream.null.is_capturing() is False


def test_keys_separate_arrays_scalars_and_unhashables():
    from tests.data import fake

    a, b = fake((4,), "float32"), fake((4,), "float64")
    assert graphs._key((a, 1.5), {}) != graphs._key((b, 1.5), {})
    assert graphs._key((a, 1.5), {}) != graphs._key((a, 2.5), {})
    assert graphs._key((a,), {"k": 2}) == graphs._key((a,), {"k": 2})
    assert graphs._key(([1, 2],), {})[0][0][0] == "id"


def _stencil_numpy(u, steps):
    u = u.copy()
    for _ in range(steps):
        u[1:-1, 1:-1] += 0.1 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]
                                - 4 * u[1:-1, 1:-1])
    return u


def _stencil(u, steps):
    for _ in range(steps):
        u[1:-1, 1:-1] += 0.1 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]
                                - 4 * u[1:-1, 1:-1])


@gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_stencil_loop_captured_and_replayed_equals_numpy(dtype):
    h = np.zeros((48, 40), dtype)
    h[24, 20] = 1
    u = gp.asarray(h)
    _stencil(u, 1)                       # kernels built before the capture
    with gp.graph() as g:
        _stencil(u, 20)
    assert g.nodes >= 20 and g.replays == 1
    np.testing.assert_allclose(u.get(), _stencil_numpy(h, 21), rtol=1e-5)
    g.replay()
    g.replay()
    np.testing.assert_allclose(u.get(), _stencil_numpy(h, 61), rtol=1e-4)
    assert "nodes" in repr(g)


@gpu
def test_outputs_allocated_in_the_region_are_updated_by_replays():
    hx = np.arange(1000, dtype=np.float32)
    x = gp.asarray(hx)
    y0 = gp.sin(x) * 2 + 1                 # warm
    with gp.graph() as g:
        y = gp.sin(x) * 2 + 1
        s = (y * y).sum()
    np.testing.assert_allclose(y.get(), y0.get())
    x[...] = gp.asarray(hx[::-1].copy())    # the input changed in place
    g.replay()
    np.testing.assert_allclose(y.get(), np.sin(hx[::-1]) * 2 + 1, rtol=1e-5)
    np.testing.assert_allclose(float(s), float(((np.sin(hx[::-1]) * 2 + 1) ** 2).sum()), rtol=1e-4)
    pool = gp.get_default_memory_pool()
    gp.synchronize()
    before = pool.used_bytes()
    for _ in range(50):
        g.replay()
    gp.synchronize()
    assert pool.used_bytes() <= before     # AUTO_FREE_ON_LAUNCH: no memory piles up


@gpu
def test_decorated_function_replays_per_argument_set():
    calls = []

    @gp.graph
    def step(x, k):
        calls.append(1)                     # runs only when capturing
        return x * k + 1

    a = gp.arange(10, dtype=np.float32)
    b = gp.arange(20, dtype=np.float32)
    r1 = step(a, 2.0)
    r2 = step(a, 2.0)
    assert r1 is r2 and len(calls) == 1
    step(b, 2.0)
    step(a, 3.0)
    assert len(calls) == 3 and len(step.graphs()) == 3
    a[...] = 5
    np.testing.assert_array_equal(step(a, 2.0).get(), np.full(10, 11, np.float32))


@gpu
def test_host_synchronization_inside_a_region_names_the_cause_and_leaves_gpunb_usable():
    x = gp.arange(100, dtype=np.float32)
    (x + 1).get()
    with pytest.raises(gp.GraphCaptureError, match="host synchronization"):
        with gp.graph():
            y = x + 1
            y.get()
    with pytest.raises(gp.GraphCaptureError, match="host synchronization"):
        with gp.graph():
            float((x * 2).sum())
    # the block's own errors pass through unchanged
    with pytest.raises(ZeroDivisionError):
        with gp.graph():
            _ = x + 1
            1 / 0
    np.testing.assert_array_equal((x * 3).get(), np.arange(100, dtype=np.float32) * 3)
    assert gp.get_current_stream() is gp.Stream.null


@gpu
def test_replay_orders_with_a_non_default_current_stream():
    x = gp.zeros(1 << 20, np.float32)
    x + 1
    with gp.graph() as g:
        y = x + 1
    s = gp.Stream(non_blocking=True)
    with s:
        x[...] = 7
        g.replay()
        z = y * 2
    s.synchronize()
    np.testing.assert_array_equal(z.get()[:5], np.full(5, 16, np.float32))


@gpu
def test_cupy_stream_capture_api():
    """CuPy's begin_capture / end_capture / launch on gpunb's streams: the captured work runs
    only when launched, on the stream given (default: the current one), with its allocations
    kept; a host synchronization inside fails the capture, and the stream is usable after."""
    h = np.arange(1000, dtype=np.float32)
    x, y = gp.asarray(h), gp.zeros(1000, np.float32)
    s = gp.cuda.Stream(non_blocking=True)
    s.wait_event(gp.cuda.Stream.null.record())
    with s:
        s.begin_capture()
        assert s.is_capturing()
        gp.multiply(x, 2, out=y)
        y += 1
        z = y * 2                          # a graph allocation
        g = s.end_capture()
    assert not s.is_capturing() and isinstance(g, gp.cuda.Graph) and g.nodes >= 3
    s.synchronize()
    np.testing.assert_array_equal(y.get(), np.zeros(1000, np.float32))     # not run yet
    g.upload(s)
    g.launch(s)
    s.synchronize()
    np.testing.assert_array_equal(y.get(), 2 * h + 1)
    np.testing.assert_array_equal(z.get(), 4 * h + 2)
    x[...] = 5                              # on the default stream, then a launch there
    g.launch()
    np.testing.assert_array_equal(z.get(), np.full(1000, 22, np.float32))
    assert g.replays == 2
    s.begin_capture()
    with s, pytest.raises(Exception):
        y.get()                             # a host synchronization cannot be captured
    with pytest.raises(gp.GraphCaptureError):
        s.end_capture()
    assert not s.is_capturing()
    with s:
        w = x + 1
    s.synchronize()
    np.testing.assert_array_equal(w.get(), np.full(1000, 6, np.float32))
