"""The raw kernels' launches: the launch dimensions checked once per value, the prepared launch
of an argument signature (Python source made for it, the kernel's call once prepared), and
the cooperative launch. :mod:`.module` holds the modules and kernels that use them.
"""

from __future__ import annotations

import inspect

import numpy as np

from ... import memo
from ...ndarray import ndarray
from ...runtime import driver, fastcall  # import no CUDA module until a function in them is called
from .. import fastgen, loader

# grid/block values already validated -> (their dims, the value itself, its 3 extents)
_checked_dims = memo.table("raw.launch_dims")


# -- the prepared launch: a kernel whose arguments are gpunb arrays and exact scalars ---------
# (argument checking decided once per kernel and device, then replayed: the parameters packed
# in place and one cuLaunchKernel, as gpunb's own kernels launch)

# the scalar parameters a prepared launch takes, with their struct codes (fastgen's: a raw
# kernel's half or complex parameter is its own C++ type, left to the checked path)
_FAST_SCALARS = {name: fastgen.PACK[name][0] for name in
                 ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                  "float32", "float64")}


def _prepare_fast(kernel, params, args, general):
    """The prepared launch of a kernel whose parameters are all pointers (given gpunb arrays)
    and plain scalars: ``fast(grid, block, args, shared_mem=0, stream=None)``, the kernel's
    call, that launches when every argument is what it was prepared for (a gpunb array for a
    pointer; the parameter's NumPy scalar type, a Python int in its range or a Python float
    for a scalar), on the device it was prepared on with no stream given, and else returns
    ``general()(...)``: the checked path (``general``: a weak reference to it). None when
    some parameter takes the checked path only.

    The parameters live in one buffer that a ``struct`` packs in one call, and the check and
    the pack are Python source made for this signature (unrolled: a loop over the arguments
    costs more than the rest of the call)."""
    if not params or len(params) != len(args):
        return None
    codes, checks, values = [], [], []
    namespace = {"ndarray": ndarray}
    for i, (p, v) in enumerate(zip(params, args)):
        if p.kind == "pointer" and type(v) is ndarray:
            codes.append("P")
            checks.append(f"x{i}.__class__ is not ndarray")
            values.append(f"x{i}._data.ptr")
        elif p.kind == "scalar" and p.dtype in _FAST_SCALARS:
            code = _FAST_SCALARS[p.dtype]
            codes.append(code)
            namespace[f"T{i}"] = np.dtype(p.dtype).type
            plain = "float" if code in "fd" else "int"      # struct checks an int's range
            checks.append(f"(x{i}.__class__ is not T{i} and x{i}.__class__ is not {plain})")
            values.append(f"x{i}")
        else:
            return None
    names = ", ".join(f"x{i}" for i in range(len(codes)))
    checked = "return general()(grid, block, args, shared_mem=shared_mem, stream=stream)"
    launch = fastcall.launch_source("    ", ", ".join(values), "gx, gy, gz", "bx, by, bz",
                                    "shared_mem", on_overflow=checked)
    source = f"""
def fast(grid, block, args, *, shared_mem=0, stream=None):
    global LAST
    if stream is not None or driver.active is not CTX:
        {checked}
    last = LAST
    if last[0] is grid and last[1] is block:    # a loop's literal tuples: the same objects
        gx, gy, gz, bx, by, bz = last[2]
    else:
        g = dims_get(grid)
        b = dims_get(block)
        if g is None or b is None:
            {checked}
        # (4.0,) finds (4,)'s entry: a grid written as a literal is the very key object, any
        # other must be checked to hold ints only
        if (g[1] is not grid and not exact(grid)) or (b[1] is not block and not exact(block)):
            {checked}
        gx, gy, gz = g[2]
        bx, by, bz = b[2]
        LAST = (grid, block, (gx, gy, gz, bx, by, bz))   # one object: threads see all or none
    if (shared_mem.__class__ is not int or shared_mem < 0
            or (args.__class__ is not tuple and args.__class__ is not list) or len(args) != {len(codes)}):
        {checked}
    {names}, = args
    if {" or ".join(checks)}:
        {checked}
{launch}"""
    namespace.update(fastcall.launch_namespace(loader.function(kernel), codes, driver.active,
                                               driver._current, driver.stream_handle))
    namespace.update(dims_get=_checked_dims.get, exact=_exact_dims, LAST=(None, None, None),
                     general=general, driver=driver)
    exec(source, namespace)
    return namespace["fast"]


class _CallSignature:
    """``inspect.signature(kernel)``: the launch's (``__call__`` is a property, which
    ``inspect`` cannot read); None for the class itself, whose signature is its constructor's."""

    _SIG = inspect.Signature([
        inspect.Parameter("grid", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        inspect.Parameter("block", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        inspect.Parameter("args", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        inspect.Parameter("shared_mem", inspect.Parameter.KEYWORD_ONLY, default=0),
        inspect.Parameter("stream", inspect.Parameter.KEYWORD_ONLY, default=None)])

    def __get__(self, obj, cls):
        return None if obj is None else self._SIG


def _exact_dims(value) -> bool:
    t = type(value)
    if t is int:
        return True
    if t is not tuple:
        return False
    for d in value:         # (a loop: cheaper than all() over a generator on this path)
        if type(d) is not int:
            return False
    return True


def _dims(value, what: str) -> tuple[int, ...]:
    # 32.0 == 32 as a dict key, so the cache answers only for exact ints.
    if type(value) is int or (type(value) is tuple and all(type(d) is int for d in value)):
        hit = _checked_dims.get(value)
        if hit is not None:
            return hit[0]
    dims = (value,) if isinstance(value, (int, np.integer)) else tuple(value)
    if not 1 <= len(dims) <= 3 or not all(isinstance(d, (int, np.integer)) and d >= 1 for d in dims):
        raise ValueError(f"{what} must be a positive int or a tuple of 1 to 3 positive ints, got {value!r}")
    dims = tuple(int(d) for d in dims)
    if isinstance(value, (int, tuple)) and len(_checked_dims) < 4096:
        _checked_dims[value] = (dims, value, (dims + (1, 1))[:3])
    return dims


def _launch_cooperative(kernel, grid, block, shared_mem, stream, args) -> None:
    """A cooperative launch (``grid.sync()`` needs every block resident), as CuPy launches
    kernels of a module built with ``enable_cooperative_groups=True``."""
    core = driver.cuda_core()
    LaunchConfig, core_launch = core.LaunchConfig, core.launch

    core_launch(stream, LaunchConfig(grid=grid, block=block, shmem_size=shared_mem,
                                     is_cooperative=True), kernel, *args)
