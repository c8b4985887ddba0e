"""Row interchanges of an LU factorization, run: load the kernel of :mod:`.codegen`, launch it."""

from __future__ import annotations

import ctypes

from .. import loader
from ..execute import Step, execute
from . import codegen as cg


def unpivot(x_ptr: int, ipiv_ptr: int, n: int, itemsize: int, parallel: bool = True) -> None:
    """``x = P x`` for the ``n`` items at ``x_ptr``: the 1-based int64 pivots at ``ipiv_ptr``
    swapped backward (``codegen.fits(n, itemsize)`` must hold); by the parallel kernel where
    it fits unless ``parallel=False``."""
    if not cg.fits(n, itemsize):
        raise ValueError(f"{n} items of {itemsize} bytes do not fit the unpivot kernel")
    if n == 0:
        return
    k = cg.UnpivotKernel(itemsize)
    lk = loader.get(cg, ("unpivot", itemsize), lambda: k)
    par = parallel and cg.fits(n, itemsize, True)
    step = Step(lk.functions[k.name + "_par" if par else k.name], (1,), (cg.THREADS,),
                (0, 1, ctypes.c_int32(n)), cg.shared_bytes(n, itemsize, par))
    execute((step,), [ctypes.c_void_p(x_ptr), ctypes.c_void_p(ipiv_ptr)])
