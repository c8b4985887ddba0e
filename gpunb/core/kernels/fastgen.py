"""Prepared elementwise calls as Python source made for one call signature (which arguments
are arrays and of what dtype, which are Python scalars of what type), compiled with ``exec``
once and kept in the device context: the repeat calls of ufuncs and ElementwiseKernels.

Unrolled for its signature, a call checks each argument in one expression, allocates the
outputs, packs every kernel parameter with one ``struct`` call and launches. A loop over the
arguments, ctypes objects set one by one and a dictionary key built per call cost more than
the rest of a small call together.

The source holds only identifiers and constants made here, never a user's string, so ``exec``
runs nothing a user wrote.
"""

from __future__ import annotations

import numpy as np

from ..ndarray import C_STRIDES, c_strides, ndarray
from .empty_source import empty_lines, empty_namespace
from ..runtime import driver, fastcall
from .elementwise import plan as eplan

MISS = object()     # "not this call's signature": the caller takes its general path

# dtype name -> (struct codes, how the converted NumPy scalar v is packed); raw kernels use
# the plain types' codes too
PACK = {"bool": ("?", "{v}"), "int8": ("b", "{v}"), "int16": ("h", "{v}"), "int32": ("i", "{v}"),
         "int64": ("q", "{v}"), "uint8": ("B", "{v}"), "uint16": ("H", "{v}"),
         "uint32": ("I", "{v}"), "uint64": ("Q", "{v}"), "float32": ("f", "{v}"),
         "float64": ("d", "{v}"), "float16": ("f", "float({v})"),      # half computes as float
         "complex64": ("ff", "{v}.real, {v}.imag"), "complex128": ("dd", "{v}.real, {v}.imag")}


def make(args, conv, function: int, *, vec: int, block: int, out_dtypes=(), given_outs=0,
         result: str = "single", aligned: bool = True, count: str = "I", cap: int | None = None,
         min_size: int = 1):
    """``fast(args)``: the prepared call of ``args``' signature, returning the kernel's result
    or :data:`MISS` when ``args`` differ from the signature (types, dtypes, C-contiguity, one
    shape, a size in ``[min_size, 2**31)``, alignment). None when no argument is an array.

    ``conv[i]``: the dtype a scalar argument converts to (NumPy's conversion, which may raise:
    before anything is allocated), None for an array. The kernel's parameters: each argument
    (a pointer, or the scalar as :mod:`.execute` passes it), a pointer per output (allocated
    per call, one per ``out_dtypes``; the last ``given_outs`` arguments are outputs given by
    the caller), then the element count (struct code ``count``). ``aligned``: every array on a
    16-byte boundary (the vector entry), else at least one not. ``result``: 'single', 'tuple'
    or 'none'. The grid: ``n / vec`` elements in blocks of ``block``, at most ``cap`` blocks."""
    ns = {"ndarray": ndarray, "MISS": MISS, "LIMIT": eplan.INT32_LIMIT, "driver": driver,
          "C_STRIDES": C_STRIDES, "c_strides": c_strides, **empty_namespace()}
    codes, checks, values, pointers, prelude, first = [], [], [], [], [], None
    for i, (a, c) in enumerate(zip(args, conv)):
        if type(a) is ndarray:
            ns[f"D{i}"] = a._dtype
            checks.append(f"x{i}.__class__ is not ndarray or x{i}._dtype is not D{i} "
                          f"or (x{i}._cc is not True and not x{i}._c_contiguous)")
            if first is None:
                first = i
            else:
                checks.append(f"x{i}._shape != x{first}._shape")
            pointers.append(f"x{i}._data.ptr")
            codes.append("P")
            values.append(f"x{i}._data.ptr")
        else:
            ns[f"S{i}"], ns[f"C{i}"] = type(a), np.dtype(c).type
            checks.append(f"x{i}.__class__ is not S{i}")
            code, expr = PACK[np.dtype(c).name]
            codes.append(code)
            if "," in expr:         # complex: converted once, packed as two parts
                prelude.append(f"    v{i} = complex(C{i}(x{i}))\n")
                values.append(expr.format(v=f"v{i}"))
            else:
                values.append(expr.format(v=f"C{i}(x{i})"))
    if first is None:
        return None
    bits = " | ".join(pointers)
    checks.append(f"({bits}) & 15" if aligned else f"not ({bits}) & 15")
    outs, sizes = [], set()
    if out_dtypes:
        prelude.append(f"    shape = x{first}._shape\n")
    for j, dt in enumerate(out_dtypes):
        ns[f"O{j}"] = dt
        outs.append(f"o{j}")
        codes.append("P")
        values.append(f"o{j}._data.ptr")
        size = dt.itemsize
        if size not in sizes:
            sizes.add(size)
            prelude.append(f"    strides{size} = C_STRIDES.get((shape, {size})) or c_strides(shape, {size})\n")
        prelude += [f"    {ln}\n" for ln in empty_lines(f"o{j}", "shape", f"strides{size}", "n", f"O{j}",
                                                       f"n * {size}")]
    codes.append(count)
    values.append("n")
    ns.update(fastcall.launch_namespace(function, codes, driver.active, driver._current,
                                        driver.stream_handle))
    returned = outs or [f"x{i}" for i in range(len(args) - given_outs, len(args))]
    if result == "none":
        ret = "None"
    elif result == "single":
        ret = returned[0]
    else:
        ret = "(" + "".join(f"{r}, " for r in returned) + ")"
    blocks = f"(-(-n // {vec}) + {block - 1}) // {block}"
    if cap is not None:
        blocks = f"min({blocks}, {cap})"
    launch = fastcall.launch_source("    ", ", ".join(values), f"{blocks}, 1, 1",
                                    f"{block}, 1, 1", "0")
    source = f"""
def fast(args):
    if len(args) != {len(args)} or driver.active is not CTX:
        return MISS
    {"".join(f"x{i}, " for i in range(len(args)))}= args
    if {" or ".join(f"({c})" for c in checks)}:
        return MISS
    n = x{first}._size
    if n < {min_size} or n > LIMIT:
        return MISS
{"".join(prelude)}{launch}    return {ret}
"""
    exec(source, ns)
    return ns["fast"]
