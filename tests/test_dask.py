"""gpunb arrays as Dask array chunks (gpunb.dask): the hooks, the backend, the dispatches, the
meta object and graph construction without a GPU; computations against NumPy on the GPU with
the synchronous, threaded and distributed schedulers."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
import dask  # noqa: E402
from dask.sizeof import sizeof  # noqa: E402
from dask.tokenize import tokenize  # noqa: E402

import gpunb as gp  # noqa: E402
import gpunb.dask  # noqa: E402
from gpunb.dask import dispatch  # noqa: E402
from tests.data import fake  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SCHEDULERS = ["sync", "threads", "gpunb", "distributed"]     # "gpunb": gpunb.dask.get


class _HostFake(gp.ndarray):
    """A fake gpunb array that ``da.from_array`` can take without a GPU (it copies its input:
    the copy of a fake array is itself; arrays take no new attributes, as NumPy's)."""

    def copy(self, order="C"):
        return self


def _host_fake(shape, dtype="float32"):
    x = fake(shape, dtype)
    return _HostFake._view(x._data, x._shape, x._strides, x._dtype, None)


def _run(code: str) -> list[str]:
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout.splitlines()


# -- hooks: what importing gpunb, gpunb.dask and dask loads ------------------------------------

def test_import_gpunb_dask_imports_no_dask():
    out = _run("import sys, gpunb, gpunb.dask; print(sorted(m for m in sys.modules "
               "if m.split('.')[0] in ('dask', 'distributed')))")
    assert out == ["[]"]


def test_entry_points_are_declared():
    from importlib.metadata import entry_points

    backends = {ep.name: ep.value for ep in entry_points(group="dask.array.backends")}
    if "gpunb" not in backends:
        pytest.skip("gpunb runs without its package metadata here (no entry points)")
    assert backends["gpunb"] == "gpunb.dask.backend:GpunbBackendEntrypoint"
    sizeofs = {ep.name: ep.value for ep in entry_points(group="dask.sizeof")}
    assert sizeofs["gpunb"] == "gpunb.dask.hooks:sizeof_plugin"


def test_import_dask_leaves_lazy_hooks_and_loads_no_engine():
    out = _run("import sys, dask\n"
               "from dask.sizeof import sizeof\n"
               "from dask.tokenize import normalize_token\n"
               "print('gpunb' in sizeof._lazy, 'gpunb' in normalize_token._lazy)\n"
               "print('gpunb.core.ndarray' in sys.modules, 'dask.array' in sys.modules)\n"
               "print(type(sys.modules['dask.tokenize'].__loader__).__name__)")
    if out[0] == "False False":
        pytest.skip("gpunb runs without its package metadata here (no entry points)")
    assert out == ["True True", "False False", "SourceFileLoader"]


def test_tokenizing_a_gpunb_array_registers_everything():
    out = _run("import sys; sys.path.insert(0, '.')\n"
               "from tests.data import fake\n"
               "import dask.array as da\n"
               "from dask.tokenize import tokenize\n"
               "from gpunb.dask import dispatch\n"
               "x = fake((4, 4))\n"
               "print(dispatch._registered, tokenize(x) == tokenize(x), dispatch._registered)\n"
               "print(da.core.concatenate_lookup.dispatch(type(x)).__name__)")
    if out[0].startswith("False True False"):
        pytest.skip("gpunb runs without its package metadata here (no entry points)")
    assert out == ["False True True", "concatenate"]


# -- the registrations --------------------------------------------------------------------------

def test_register_is_idempotent_and_covers_dasks_lookups():
    from dask.array import dispatch as d

    gpunb.dask.register()
    gpunb.dask.register()
    t = gp.ndarray
    assert d.concatenate_lookup.dispatch(t) is gp.concatenate
    assert d.take_lookup.dispatch(t) is gp.take
    assert d.tensordot_lookup.dispatch(t) is gp.tensordot
    assert d.empty_lookup.dispatch(t) is gp.empty
    assert d.einsum_lookup.dispatch(t) is dispatch._einsum
    assert d.divide_lookup.dispatch(t) is dispatch._divide
    assert d.percentile_lookup.dispatch(t) is dispatch._percentile
    assert d.numel_lookup.dispatch(t) is dispatch._numel
    assert d.nannumel_lookup.dispatch(t) is dispatch._nannumel
    assert d.to_numpy_dispatch.dispatch(t) is dispatch._to_numpy
    assert d.to_cupy_dispatch.dispatch(t) is dispatch._to_cupy
    assert dispatch.to_gpunb_dispatch().dispatch(np.ndarray) is dispatch._numpy_to_gpunb
    assert dispatch.to_gpunb_dispatch().dispatch(t) is dispatch._identity


def test_meta_is_a_zero_size_array_over_no_memory():
    m = gpunb.dask.meta(3, np.float32)
    assert type(m) is gp.ndarray and m.shape == (0, 0, 0) and m.dtype == np.float32
    assert m.data.ptr == 0 and m.size == 0 and m.nbytes == 0
    assert m[:0, :0].shape == (0, 0, 0)          # Dask slices metas: views, no allocation
    with pytest.raises(ValueError, match="ndim >= 1"):
        gpunb.dask.meta(0)


def test_metas_and_backend_graphs_make_no_cuda_context():
    """No context, so no allocation and no launch (with or without a GPU)."""
    out = _run("import dask, dask.array as da, numpy as np, gpunb.dask\n"
               "from gpunb.core.runtime import driver\n"
               "m = gpunb.dask.meta(2, np.float32)\n"
               "with dask.config.set({'array.backend': 'gpunb'}):\n"
               "    a = da.ones((1000, 10), chunks=100, dtype=np.float32)\n"
               "    b = da.arange(100, chunks=10)\n"
               "print(type(a._meta).__name__, type(b._meta).__name__, driver.active is None)")
    assert out == ["ndarray ndarray True"]


def test_pickling_a_meta_stays_off_the_gpu():
    gpunb.dask.register()
    m = pickle.loads(pickle.dumps(gpunb.dask.meta(2, "i8")))
    assert type(m) is gp.ndarray and m.shape == (0, 0) and m.dtype == np.int64
    assert m.data.ptr == 0


def test_sizeof_and_tokens_name_the_memory():
    gpunb.dask.register()
    x, y = fake((100, 10)), fake((100, 10))
    assert sizeof(x) == 4000
    assert tokenize(x) == tokenize(x)
    assert tokenize(x) != tokenize(y)                # the same address, two arrays
    assert tokenize(x[1:]) != tokenize(x[:-1]) and tokenize(x[1:]) == tokenize(x[1:])
    assert tokenize(x) != tokenize(x.reshape(10, 100))


# -- graphs built on the CPU ----------------------------------------------------------------------

def test_from_array_chunks_and_meta():
    x = _host_fake((1000, 300))
    d = da.from_array(x, chunks=(250, 100))
    assert d.chunks == ((250,) * 4, (100,) * 3) and d.numblocks == (4, 3)
    assert type(d._meta) is gp.ndarray and d._meta.shape == (0, 0) and d.dtype == np.float32
    assert "chunktype=gpunb.ndarray" in repr(d)
    assert d.name == da.from_array(x, chunks=(250, 100)).name      # a deterministic token
    assert len(d.__dask_keys__()) == 4 and len(d.__dask_keys__()[0]) == 3


@pytest.mark.parametrize("scheduler", ["sync", "threads", "gpunb"])
def test_each_task_gets_its_chunk_as_a_view(scheduler):
    """Chunk logic: each task sees a gpunb view at its chunk's offset (no GPU touched)."""
    x = _host_fake((100, 30))
    d = da.from_array(x, chunks=(25, 10))
    base = x.data.ptr

    def where(block):
        assert type(block) is gp.ndarray
        return np.array([[block.data.ptr - base, block.shape[0], block.shape[1]]])

    got = d.map_blocks(where, chunks=(1, 3), dtype=np.int64, meta=np.empty((0, 0), np.int64))
    out = got.compute(scheduler=gpunb.dask.get if scheduler == "gpunb" else scheduler)
    want = [[(i * 25 * 30 + j * 10) * 4, 25, 10] for i in range(4) for j in range(3)]
    assert out.reshape(12, 3).tolist() == want


def _made_in_task(block):
    return fake(block.shape, "float32")


def _shape_of(block):
    assert type(block) is gp.ndarray
    return np.array([block.shape])


def test_distributed_runs_graphs_of_gpunb_chunks(client):
    """distributed pickles the graph (even in one process): here the gpunb chunks are made by
    tasks, and stay on their worker; a graph holding a gpunb array pickles it through the host
    (on the GPU: test_local_gpu_cluster_on_this_gpu)."""
    g = da.zeros((100, 30), chunks=(25, 10)).map_blocks(
        _made_in_task, dtype=np.float32, meta=gpunb.dask.meta(2, np.float32))
    assert type(g._meta) is gp.ndarray
    shapes = g.map_blocks(_shape_of, chunks=(1, 2), dtype=np.int64,
                          meta=np.empty((0, 0), np.int64))
    out = client.compute(shapes).result()
    assert out.reshape(12, 2).tolist() == [[25, 10]] * 12


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=":0", preload=["gpunb.dask.hooks"]) as cluster, \
            distributed.Client(cluster) as c:
        yield c


@pytest.mark.parametrize("name, args, kwargs, shape, dtype", [
    ("ones", ((100, 10),), {"chunks": 25}, (100, 10), np.float64),
    ("zeros", (10,), {"chunks": 5, "dtype": "i4"}, (10,), np.int32),
    ("empty", ((8, 2, 2),), {"chunks": 4, "dtype": np.float32}, (8, 2, 2), np.float32),
    ("full", ((4, 4), 2.5), {"chunks": 2}, (4, 4), np.float64),
    ("full", ((4,), 7), {"chunks": 2}, (4,), np.int64),
    ("arange", (10,), {"chunks": 3}, (10,), np.int64),
    ("arange", (0.0, 1.0, 0.25), {"chunks": 3}, (4,), np.float64),
])
def test_backend_creation_builds_gpunb_chunks(name, args, kwargs, shape, dtype):
    with dask.config.set({"array.backend": "gpunb"}):
        from dask.array.backends import array_creation_dispatch

        assert array_creation_dispatch.backend == "gpunb"
        d = getattr(da, name)(*args, **kwargs)
    assert type(d._meta) is gp.ndarray and d._meta.size == 0 and d._meta.data.ptr == 0
    assert d.shape == shape and d.dtype == dtype and d._meta.dtype == dtype
    with dask.config.set({"array.backend": "numpy"}):
        assert type(getattr(da, name)(*args, **kwargs)._meta) is np.ndarray


def test_backend_names_gpunbs_random_classes():
    from dask.array.backends import array_creation_dispatch

    from gpunb.dask.backend import GpunbBackendEntrypoint

    with dask.config.set({"array.backend": "gpunb"}):
        backend = array_creation_dispatch.dispatch("gpunb")
        assert isinstance(backend, GpunbBackendEntrypoint)
        assert array_creation_dispatch.RandomState is gp.random.RandomState
        assert array_creation_dispatch.default_bit_generator is gp.random.Philox4x3210


def test_an_unknown_backend_still_fails_as_dask_says():
    with dask.config.set({"array.backend": "no-such-backend"}), \
            pytest.raises(ValueError, match="No backend dispatch registered for no-such-backend"):
        da.ones(3)


def test_graphs_of_elementwise_sum_and_matmul():
    """Graph construction (the metas of computed results need a GPU: without one Dask falls
    back to NumPy metas; test_metas_of_results_are_gpunb_arrays checks them on the GPU)."""
    d = da.from_array(_host_fake((1000, 300)), chunks=(250, 300))
    e = d * 2 + 1
    assert e.chunks == d.chunks and e.dtype == np.float32
    assert len(dict(e.__dask_graph__())) == 1 + 4 * 3      # the array, its 4 chunks, 2 layers
    s = d.sum(axis=0)
    assert s.shape == (300,) and s.chunks == ((300,),)
    m = d @ d.T
    assert m.chunks == (d.chunks[0], d.chunks[0])


@pytest.mark.gpu
def test_metas_of_results_are_gpunb_arrays():
    d = da.from_array(gp.asarray(_data((100, 30))), chunks=(25, 30))
    for r in (d * 2 + 1, d.sum(axis=0), d.mean(), d.std(axis=1), d @ d.T,
              d.map_blocks(lambda b: b + 1)):
        assert type(r._meta) is gp.ndarray and (r._meta.size == 0 or r.ndim == 0), r


def test_local_gpu_cluster_pins_one_device_per_worker():
    distributed = pytest.importorskip("distributed")
    import os

    from gpunb.dask import LocalGPUCluster

    with pytest.raises(ValueError, match="processes=True"):
        LocalGPUCluster(devices=[0, 1], processes=False)
    # GPU "1" may not exist here: distributed's own NVML monitor would refuse to start a worker
    # pinned to it, so it is off (the pinning, not the GPU, is under test)
    with dask.config.set({"distributed.diagnostics.nvml": False}), \
            LocalGPUCluster(devices=["0", "1"], dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as c:
        assert cluster.devices == ["0", "1"]
        seen = sorted(c.run(lambda: (os.environ.get("CUDA_VISIBLE_DEVICES"),
                                     os.environ.get("GPUNB_DASK_WORKER"))).values())
        assert seen == [("0,1", "1"), ("1,0", "1")]
        assert all(c.run(lambda: __import__("gpunb.dask.dispatch")
                         .dask.dispatch._registered).values())      # the preload ran


# -- on the GPU: results against NumPy ----------------------------------------------------------

def _compute(x, scheduler, request):
    if scheduler == "distributed":
        return request.getfixturevalue("client").compute(x).result()
    if scheduler == "gpunb":
        return x.compute(scheduler=gpunb.dask.get)
    return x.compute(scheduler=scheduler)


def _data(shape=(1000, 300), dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_reductions_equal_numpys(scheduler, request):
    h = _data()
    d = da.from_array(gp.asarray(h), chunks=(128, 100))
    for axis in (None, 0, 1):
        for name in ("sum", "mean", "std", "min", "max"):
            got = _compute(getattr(d, name)(axis=axis), scheduler, request)
            assert type(got) is gp.ndarray, (name, axis)
            np.testing.assert_allclose(gp.asnumpy(got), getattr(h, name)(axis=axis),
                                       rtol=1e-10, atol=1e-10, err_msg=f"{name} axis={axis}")


@gp.fuse
def _fused(x):                  # at module level: distributed pickles it by reference
    return gp.exp(-x * x) * 2 + gp.sin(x)


@pytest.mark.gpu
@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_elementwise_fuse_matmul_equal_numpys(scheduler, request):
    h = _data()
    d = da.from_array(gp.asarray(h), chunks=(250, 300))

    got = _compute(d.map_blocks(_fused), scheduler, request)
    np.testing.assert_allclose(gp.asnumpy(got), np.exp(-h * h) * 2 + np.sin(h), rtol=1e-12,
                               atol=1e-15)
    got = _compute(da.sqrt(abs(d)) + d ** 2, scheduler, request)
    np.testing.assert_allclose(gp.asnumpy(got), np.sqrt(abs(h)) + h ** 2, rtol=1e-12,
                               atol=1e-15)
    got = _compute(d.T @ d, scheduler, request)
    np.testing.assert_allclose(gp.asnumpy(got), h.T @ h, rtol=1e-9, atol=1e-9)


RAW = r'''extern "C" __global__ void affine(const double* x, double* y, double a, double b,
                                     long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + b;
}'''


_KERNELS: dict = {}


def _raw_per_chunk(block):
    """A RawKernel per chunk. The kernel object holds this process's CUDA module, so it is
    made where the task runs (once per process; the kernel cache makes it a lookup)."""
    kernel = _KERNELS.get("affine") or _KERNELS.setdefault("affine", gp.RawKernel(RAW, "affine"))
    block = gp.ascontiguousarray(block)
    out = gp.empty_like(block)
    n = block.size
    kernel(((n + 255) // 256,), (256,), (block, out, 3.0, -1.0, n))
    return out


@pytest.mark.gpu
@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_a_raw_kernel_per_chunk(scheduler, request):
    h = _data((999, 7))
    d = da.from_array(gp.asarray(h), chunks=(100, 7))
    got = _compute(d.map_blocks(_raw_per_chunk, dtype=d.dtype), scheduler, request)
    np.testing.assert_allclose(gp.asnumpy(got), 3.0 * h - 1.0, rtol=1e-13, atol=1e-15)  # FMA


@pytest.mark.gpu
def test_backend_creation_and_random_compute_on_the_gpu():
    with dask.config.set({"array.backend": "gpunb"}):
        ones = da.ones((100, 10), chunks=25, dtype=np.float32)
        full = da.full((7, 3), 2.5, chunks=2)
        ar = da.arange(0, 100, 3, chunks=7)
        rng = da.random.default_rng(42).standard_normal((20_000, 4), chunks=(5_000, 4))
        rs = da.random.RandomState(1).uniform(size=(20_000,), chunks=4_000)
    for d, want in ((ones, np.ones((100, 10), np.float32)), (full, np.full((7, 3), 2.5)),
                    (ar, np.arange(0, 100, 3))):
        got = d.compute()
        assert type(got) is gp.ndarray
        np.testing.assert_array_equal(gp.asnumpy(got), want)
    r = rng.compute()
    assert type(r) is gp.ndarray and r.shape == (20_000, 4)
    assert abs(float(r.mean())) < 0.05 and abs(float(r.std()) - 1) < 0.05
    assert not np.array_equal(gp.asnumpy(r[:5000]), gp.asnumpy(r[5000:10000]))   # per-chunk streams
    np.testing.assert_array_equal(gp.asnumpy(r), gp.asnumpy(rng.compute()))       # reproducible
    u = rs.compute()
    assert type(u) is gp.ndarray and 0 <= float(u.min()) and float(u.max()) < 1


@pytest.mark.gpu
@pytest.mark.parametrize("scheduler", ["threads", "sync", "gpunb.dask.get"])
def test_first_gpu_use_inside_tasks(scheduler):
    """A fresh process whose first GPU use is in the tasks (backend-made chunks): the result
    is usable in the calling thread."""
    if "." in scheduler:
        scheduler = "__import__('gpunb.dask').dask.get"
    else:
        scheduler = repr(scheduler)
    out = _run("import dask, dask.array as da, numpy as np\n"
               "with dask.config.set({'array.backend': 'gpunb'}):\n"
               "    x = da.arange(1000, chunks=100, dtype=np.float64)\n"
               f"r = (x * 2).sum().compute(scheduler={scheduler})\n"
               "print(type(r).__name__, float(r), float((r + 1).get()))")
    assert out == ["ndarray 999000.0 999001.0"]


@pytest.mark.gpu
def test_dispatched_chunk_functions_equal_numpys():
    h = _data((400, 60))
    d = da.from_array(gp.asarray(h), chunks=(100, 20))
    hn = h.copy()
    hn[::7, ::5] = np.nan
    dn = da.from_array(gp.asarray(hn), chunks=(100, 20))
    checks = [
        (da.concatenate([d, d], axis=1), np.concatenate([h, h], axis=1)),
        (da.tensordot(d, d, axes=([0], [0])), np.tensordot(h, h, axes=([0], [0]))),
        (da.einsum("ij,ij->j", d, d), np.einsum("ij,ij->j", h, h)),
        (d[[3, 150, 399, 0]], h[[3, 150, 399, 0]]),                      # take
        (da.nanmean(dn, axis=0), np.nanmean(hn, axis=0)),                  # nannumel
        (da.nansum(dn), np.nansum(hn)),
        (d.mean(axis=1, keepdims=True), h.mean(axis=1, keepdims=True)),    # numel
        (da.true_divide(d, 3.0), h / 3.0),
        (d.var(axis=0, ddof=1), h.var(axis=0, ddof=1)),
    ]
    for got, want in checks:
        g = got.compute()
        assert type(g) is gp.ndarray
        np.testing.assert_allclose(gp.asnumpy(g), want, rtol=1e-10, atol=1e-10)
    # Dask's percentile merges per-chunk percentiles (approximate): the same merge of NumPy
    # chunks is the reference (the per-chunk values are gpunb.percentile's, merged on the host)
    p = da.percentile(d[:, 0], [10, 50, 90]).compute()
    want = da.percentile(da.from_array(h[:, 0], chunks=100), [10, 50, 90]).compute()
    p = gp.asnumpy(p) if isinstance(p, gp.ndarray) else p
    np.testing.assert_allclose(p, want, rtol=1e-10)


@pytest.mark.gpu
def test_backend_conversions():
    h = _data((300, 20))
    dn = da.from_array(h, chunks=100)
    dg = dn.to_backend("gpunb")
    assert type(dg._meta) is gp.ndarray
    got = dg.compute()
    assert type(got) is gp.ndarray
    np.testing.assert_array_equal(gp.asnumpy(got), h)
    back = dg.to_backend("numpy").compute()
    assert type(back) is np.ndarray
    np.testing.assert_array_equal(back, h)
    cupy = pytest.importorskip("cupy")
    c = dg.to_backend("cupy").compute()
    assert type(c) is cupy.ndarray
    np.testing.assert_array_equal(cupy.asnumpy(c), h)
    g = da.from_array(cupy.asarray(h), chunks=100).to_backend("gpunb").compute()
    np.testing.assert_array_equal(gp.asnumpy(g), h)


@pytest.mark.gpu
def test_chunks_pickle_through_the_host_and_tokens_are_cheap():
    gpunb.dask.register()
    x = gp.asarray(_data((50, 4)))
    y = pickle.loads(pickle.dumps(x))
    assert type(y) is gp.ndarray and y.data.ptr != x.data.ptr
    np.testing.assert_array_equal(gp.asnumpy(y), gp.asnumpy(x))
    assert sizeof(x) == x.nbytes


@pytest.mark.gpu
def test_local_gpu_cluster_on_this_gpu():
    distributed = pytest.importorskip("distributed")
    from gpunb.dask import LocalGPUCluster

    h = _data((4000, 50))
    with LocalGPUCluster(devices=[0], dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as c:
        with dask.config.set({"array.backend": "gpunb"}):
            d = da.from_array(h, chunks=(500, 50)).to_backend("gpunb")
        got = c.compute(d.mean(axis=0)).result()
        assert type(got) is gp.ndarray
        np.testing.assert_allclose(gp.asnumpy(got), h.mean(axis=0), rtol=1e-12)
        s = c.compute((d * 2).sum()).result()
        np.testing.assert_allclose(float(s), 2 * h.sum(), rtol=1e-12)
