"""Transposing copies, run: load the tiled kernel and launch the plan of :mod:`.plan`."""

from __future__ import annotations

import ctypes

from .. import loader
from ..execute import Step, execute
from . import codegen as cg
from .plan import arguments, plan

launch_count = 0      # tiled launches so far in this process (tests check the kernel ran)


def try_copy(src, dst, stream=None) -> bool:
    """``dst[...] = src`` (NumPy's unsafe casting) with the tiled kernel, if :func:`.plan.plan`
    says it applies: then launch and return True; else return False, doing nothing.

    ``src`` must already be broadcast to ``dst.shape`` and must not overlap ``dst`` (the
    caller copies it first if it does). An empty copy returns True.
    """
    global launch_count
    if src.shape != dst.shape:
        raise ValueError(f"try_copy needs src broadcast to dst's shape: {src.shape} vs {dst.shape}")
    if dst.size == 0:
        return True
    p = plan(dst.shape, src.strides, dst.strides, src.itemsize, dst.itemsize)
    if p is None:
        return False
    src_ptr, dst_ptr = src.data.ptr + p.src_offset, dst.data.ptr + p.dst_offset
    if src_ptr % src.itemsize or dst_ptr % dst.itemsize:
        return False      # the kernel indexes typed pointers: needs aligned elements
    k = cg.TransposeKernel(src.dtype, dst.dtype)
    lk = loader.get(cg, ("transpose", k.src, k.dst), lambda: k)
    words = arguments(p, k.src, k.dst)
    # blocks loop over the tiles: no more than the device holds at once
    grid = (min(words[6], lk.occupancy[k.name] * lk.sm_count),)
    step = Step(lk.functions[k.name], grid, (cg.BLOCK_X, cg.BLOCK_Y),
                (0, 1, (ctypes.c_int64 * len(words))(*words)))
    execute((step,), [ctypes.c_void_p(src_ptr), ctypes.c_void_p(dst_ptr)], stream=stream)
    launch_count += 1
    return True
