"""gpunb arrays as Dask array chunks: a Dask backend, Dask's dispatch registrations, and a
local cluster of one worker per GPU.

Importing this package imports nothing (no dask): Dask itself finds the modules below through
two entry points that ``pip install gpunb`` declares (``pyproject.toml``):

- ``dask.array.backends``: ``gpunb`` -> :class:`gpunb.dask.backend.GpunbBackendEntrypoint`.
  ``dask.config.set({"array.backend": "gpunb"})`` then makes ``da.ones``, ``da.zeros``,
  ``da.empty``, ``da.full``, ``da.arange``, ``da.random.default_rng``/``RandomState`` and the
  ``*_like`` functions build gpunb chunks, and ``x.to_backend("gpunb")`` moves a NumPy- or
  CuPy-backed array to the GPU chunk by chunk.
- ``dask.sizeof``: ``gpunb`` -> :func:`gpunb.dask.hooks.sizeof_plugin`, which Dask calls at
  ``import dask``. It registers, lazily on the top-level module name ``gpunb`` (the mechanism
  Dask uses for CuPy), a hook on Dask's ``sizeof`` and ``normalize_token`` dispatches: the first
  time Dask sizes or tokenizes any gpunb object (``da.from_array(x)`` tokenizes ``x``;
  distributed sizes every task result), :func:`register` runs. The ``dask.sizeof`` group is the
  only third-party hook Dask loads at import; ``Dispatch.register_lazy`` itself is only called
  by Dask's own modules.

:func:`register` (idempotent; :mod:`gpunb.dask.dispatch`) does what Dask does for CuPy:
``concatenate``, ``take``, ``tensordot``, ``einsum``, ``empty``, ``divide``, ``percentile``,
``numel``/``nannumel``, ``to_numpy_dispatch`` (``x.get()``), ``to_cupy_dispatch`` (zero copy,
``__cuda_array_interface__``), a ``to_gpunb_dispatch`` from NumPy and CuPy, ``sizeof``
(``nbytes``), ``normalize_token`` (the device address, shape, strides and dtype: never a copy
to the host) and pickling (through the host, so that distributed can move chunks between
worker processes). Call it yourself (``import gpunb.dask; gpunb.dask.register()``) where gpunb
runs from a source tree without its package metadata (no entry points).

Threads: Dask runs tasks in pool threads (the threaded scheduler's, a distributed worker's)
and unpickles data in its event-loop threads; gpunb's runtime makes its CUDA context current in
each thread on that thread's first GPU call, so none of them needs anything from here.

Meta objects: Dask's ``_meta`` of a gpunb-backed array is a 0-size gpunb array over a null
device address (:func:`gpunb.dask.dispatch.meta`): building it allocates nothing, creates no
CUDA context and launches nothing.

One GPU: the scheduler
----------------------
Dask's local schedulers spend about 120 us of host time on each task, several times the GPU
time of a 2**24-element chunk's sum. :func:`gpunb.dask.get` (:mod:`gpunb.dask.scheduler`) runs
a graph's tasks in order in the calling thread without waiting on the GPU, so the host queues
the next chunk's kernels while the GPU runs the last ones::

    with dask.config.set(scheduler=gpunb.dask.get):   # or .compute(scheduler=gpunb.dask.get)
        x.sum().compute()

It runs the graph as the collection built it, without Dask's low-level optimisation (task
fusion saves nothing in one thread; ``low_level_optimize=True`` runs it, e.g. for slices of
arrays read from files), and converts, compiles and orders a collection's tasks once: a
second ``compute`` of it costs only the tasks.

Several GPUs
------------
:class:`LocalGPUCluster` (:mod:`gpunb.dask.cluster`) is a ``distributed.LocalCluster`` with one
worker process per GPU, each started with ``CUDA_VISIBLE_DEVICES`` naming its GPU first (what
``dask_cuda.LocalCUDACluster`` does), one thread each::

    from distributed import Client
    from gpunb.dask import LocalGPUCluster
    import dask, dask.array as da

    cluster = LocalGPUCluster()            # every GPU; or devices=[0, 1]
    client = Client(cluster)               # client.dashboard_link: the dashboard
    with dask.config.set({"array.backend": "gpunb"}):
        x = da.random.default_rng(0).standard_normal((400_000, 1_000), chunks=(50_000, 1_000))
    x.mean(axis=0).compute()               # a NumPy-free gpunb result on the client

A worker's chunks live on its own GPU; what moves between workers goes through host memory
(pickled), as the final result does. For a cluster over several hosts start, on each host, one
``dask worker --nthreads 1`` per GPU with its ``CUDA_VISIBLE_DEVICES`` set.
"""

from __future__ import annotations

__all__ = ["register", "get", "LocalGPUCluster", "GpunbBackendEntrypoint", "meta"]

_LAZY = {"LocalGPUCluster": "cluster", "GpunbBackendEntrypoint": "backend", "meta": "dispatch",
         "get": "scheduler"}


def register() -> None:
    """Register gpunb's chunk type with Dask's dispatches (idempotent; imports dask.array)."""
    from . import dispatch

    dispatch.register()


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'gpunb.dask' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_LAZY))
