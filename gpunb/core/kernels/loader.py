"""The one kernel loader: every family's kernels are compiled through the cache and loaded
into the device context here.

A generated kernel (elementwise, reduction, transpose) is described by its family's IR; on
first use :func:`get` renders it with the family's codegen, compiles it (or takes it from the
disk cache), loads its module and looks up each entry point's ``CUfunction`` and occupancy.
Later uses are one dictionary lookup in the device context's table. A raw kernel, compiled
by the user's :class:`~gpunb.RawModule`, is loaded by :func:`kernel` into the same tables.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from ..build.cached import compile_cached
from ..runtime import driver, libcuda


@dataclass
class Loaded:
    """A loaded generated kernel: its IR (``kernel``), each entry point's ``CUfunction``
    handle (``functions``), the device's SM count, the elements per vector step, and each
    entry point's resident blocks per SM (``occupancy``, at the family's block size)."""

    kernel: object
    functions: dict
    sm_count: int
    vec: int
    occupancy: dict


_lock = threading.Lock()


def get(family, key, make) -> Loaded:
    """The loaded kernel of ``family`` for ``key`` on the current device; ``make()`` builds
    its IR on first use.

    ``family`` is a codegen module (or object) with ``render(kernel)``,
    ``entry_points(kernel)``, ``vector_width(kernel)`` and ``THREADS`` (the block size its
    launches use), and optionally ``nvrtc_options(kernel)`` (include paths, defines: a family
    built on CUB); ``key`` must determine the IR.
    """
    ctx = driver.active or driver.context()
    full = (family.__name__, key)
    lk = ctx.loaded.get(full)
    if lk is not None:
        return lk
    with _lock:
        lk = ctx.loaded.get(full)
        if lk is None:
            k = make()
            opts = getattr(family, "nvrtc_options", None)
            entry = compile_cached(family.render(k), opts(k) if opts else (), ctx.arch,
                                   display_name=getattr(k, "label", None) or k.name)
            functions, occupancy = driver.load_functions(entry.key, entry.cubin,
                                                         family.entry_points(k), family.THREADS)
            lk = Loaded(k, functions, ctx.sm_count, family.vector_width(k), occupancy)
            ctx.loaded[full] = lk
    return lk


def kernel(entry, symbol: str):
    """The cuda.core Kernel ``symbol`` of a compiled cache entry (a raw module's), loaded
    once per device."""
    return driver.load_kernel(entry.key, entry.cubin, symbol)


def function(kernel_) -> int:
    """The ``CUfunction`` handle of a loaded Kernel on the current device."""
    return driver.function_of(kernel_)


def blocks_per_sm(function: int, threads: int) -> int:
    """Resident blocks of ``threads`` threads per SM of a loaded ``CUfunction`` (registers
    differ between entry points)."""
    return libcuda.blocks_per_sm(function, threads)
