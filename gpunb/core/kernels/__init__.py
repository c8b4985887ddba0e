"""The kernel families: each turns a description of work into CUDA C++ and launches it.

Every family has the same stages, one module each: ``ir`` (what a kernel computes, as data),
``codegen`` (pure: IR in, CUDA C++ source out, no CUDA import), ``plan`` (pure: shapes,
strides and dtypes in, the entry point and grid of each launch out) and ``run`` (load through
:mod:`.loader`, execute through :mod:`.execute`).

- ``elementwise``: ufuncs, casts and copies, ``where``; ``ops`` is the table of NumPy's
  elementwise operations and how each is written in C++.
- ``reduction``: sum, prod, max/min, arg reductions, mean, var/std, any/all, nan-reductions.
- ``transpose``: copies that change which axis is contiguous, through shared-memory tiles.
- ``raw``: the user's own CUDA C++ (``RawModule``/``RawKernel``).

:mod:`.loader` compiles (through the cache) and loads every family's kernels into the device
context; :mod:`.execute` launches the plans. Fusion (:mod:`gpunb.core.fusion`) builds IR for
the elementwise and reduction families from traced Python. :mod:`.standard` lists the kernels
``gpunb.warm`` precompiles.
"""
