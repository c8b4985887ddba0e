"""gpunb's engine: the array object and the stages a computation flows through, imports
flowing one way (a module imports only modules below it in this list):

- ``errors``, ``config``, ``events``, ``memo``: exceptions, settings, compile events, the
  resettable memo tables;
- ``runtime``: the only package that imports cuda.core / cuda.bindings (driver and device
  context, memory pool, streams, NVRTC, the launch hot path);
- ``build``: compile through the cache (``compiler`` -> ``cache`` -> ``cached``), cubin and
  signature parsing, inspection, ``warm``;
- ``dtypes``, ``layout``, ``ndarray``, ``interop``, ``args``: the array, its views,
  DLPack/CAI, and argument normalization;
- ``kernels``: the kernel families (elementwise, reduction, transpose, raw), each IR ->
  codegen -> plan -> run, with one loader and one executor;
- ``fusion``: ``gpunb.fuse``'s tracer and fused functions; ``ufunc``: ``gpunb.ufunc``.

The public functions (``gpunb/_creation``, ``_math``...) import the engine; the engine never
imports them, nor the package face. :func:`reset` forgets all state (tests).
"""


def reset() -> None:
    """Forget every device context (pools, loaded kernels, prepared launches) and empty every
    memo table, as if no GPU work had been done in this process. For tests; arrays made
    before stay valid."""
    from . import memo
    from .runtime import driver

    driver.reset_contexts()
    memo.clear_all()
