"""Arrays from existing data: ``array``, ``asarray``, ``ascontiguousarray``, ``copy``, and
the way back to the host, ``asnumpy``. Host data is uploaded; GPU arrays (gpunb's, or any
``__cuda_array_interface__`` array) are taken without a copy unless one is asked for."""

from __future__ import annotations

import numpy as np

from .._array_api.devices import on
from ..core import args, dtypes
from ..core.ndarray import _order, ndarray
from ..core.runtime import memory


def upload(host: np.ndarray) -> ndarray:
    """A new GPU array with the contents of the NumPy array ``host`` (Fortran order when
    ``host`` is Fortran- but not C-contiguous, else C order)."""
    if host.ndim > 1 and host.flags.f_contiguous and not host.flags.c_contiguous:
        return upload(host.T).T      # the same bytes: a C-ordered transpose
    if not host.flags.c_contiguous:      # (np.ascontiguousarray would turn 0-d into 1-d)
        host = host.copy(order="C")
    dtypes.check(host.dtype)
    out = ndarray(host.shape, host.dtype)
    memory.copy_to_device(out.data.ptr, host)
    return out


def _gpu(obj, what):
    return args.as_gpu(obj, what) if not isinstance(obj, np.ndarray) else None


_NO_COPY = ("Unable to avoid copy while creating an array as requested.\nIf using "
            "`np.array(obj, copy=False)` replace it with `np.asarray(obj)` to allow a copy when "
            "needed (no behavior change in NumPy 1.x).\nFor more details, see "
            "https://numpy.org/devdocs/numpy_2_0_migration_guide.html"
            "#adapting-to-changes-in-the-copy-keyword.")


def _convert(obj, dtype, copy, order, ndmin, what) -> ndarray:
    """numpy.array's conversion with NumPy 2's ``copy`` (True: always; None: only when needed;
    False: never, ValueError when needed). Host data always needs one (to the GPU)."""
    order = _order(order, "K")
    always = None if copy is None else bool(copy)
    g = _gpu(obj, what)
    if g is None:
        if always is False:
            raise ValueError(_NO_COPY)
        host = np.array(obj, dtype=dtype, copy=True, order=order, ndmin=ndmin)
        return upload(host)
    dt = g.dtype if dtype is None else args.dtype(dtype)
    needed = dt != g.dtype or (order == "C" and not g._c_contiguous) or (
        order == "F" and not g.flags.f_contiguous)
    if always or (always is None and needed):
        g = g.astype(dt, order=order, copy=True)
    elif needed:
        raise ValueError(_NO_COPY)
    while g.ndim < ndmin:
        g = g[None]
    return g


def array(obj, dtype=None, copy=True, order="K", ndmin=0, *, like=None) -> ndarray:
    """A GPU array from a NumPy array, nested sequences, scalars or another GPU array
    (numpy.array): ``copy`` and ``order`` ('C', 'F', 'A', 'K') as in NumPy 2."""
    return _convert(obj, dtype, copy, order, ndmin, "array()'s input")


def asarray(a, dtype=None, order=None, *, device=None, copy=None, like=None) -> ndarray:
    """``a`` as a GPU array (numpy.asarray): GPU arrays (any ``__cuda_array_interface__``)
    without a copy unless the dtype or ``order`` needs one; host data is copied to the GPU.
    ``copy=False`` raises ValueError when a copy is needed, as NumPy 2. ``device`` (the array
    API's): None or a gpunb device (``x.device``)."""
    if device is not None:
        with on(device, "asarray"):
            return _convert(a, dtype, copy, order, 0, "asarray()'s input")
    return _convert(a, dtype, copy, order, 0, "asarray()'s input")


def ascontiguousarray(a, dtype=None, *, like=None) -> ndarray:
    """``a`` as a C-contiguous GPU array, copied only if it is not one (numpy.ascontiguousarray)."""
    return _convert(a, dtype, None, "C", 1, "ascontiguousarray()'s input")   # NumPy: at least 1-d


def asfortranarray(a, dtype=None, *, like=None) -> ndarray:
    """``a`` as a Fortran-contiguous GPU array, copied only if it is not one
    (numpy.asfortranarray)."""
    return _convert(a, dtype, None, "F", 1, "asfortranarray()'s input")   # NumPy: at least 1-d


def copy(a, order="K", subok=False):
    """A new array with a copy of the data (numpy.copy); ``order`` 'K' keeps the layout."""
    return args.array(a, "copy").copy(order=_order(order, "K"))


def asnumpy(a, stream=None, order="C", out=None, blocking=True) -> np.ndarray:
    """A NumPy array in host memory (CuPy's asnumpy): copies GPU arrays (into ``out`` if
    given; ``blocking=False``: see ``ndarray.get``), passes host data through."""
    g = a if isinstance(a, ndarray) else _gpu(a, "asnumpy()'s input")
    if g is not None:
        return g.get(stream, order, out, blocking)
    if out is not None:
        out[...] = a
        return out
    return np.asarray(a, order=order)


def frombuffer(buffer, dtype=float, count=-1, offset=0, *, like=None):
    """A GPU array of the bytes of a host buffer (numpy.frombuffer, then uploaded)."""
    return upload(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def fromiter(iter, dtype, count=-1, *, like=None):  # noqa: A002 (NumPy's name)
    """A 1-D GPU array of an iterable's values (numpy.fromiter, then uploaded)."""
    return upload(np.fromiter(iter, dtype=dtype, count=count))


def copyto(dst, src, casting="same_kind", where=True):
    """``src`` copied into ``dst`` with broadcasting (numpy.copyto): NumPy's ``casting``
    check and message; where ``where`` is False ``dst`` keeps its value."""
    out = args.out_array(dst, "copyto")
    g = args.as_gpu(src, "copyto") if not np.isscalar(src) else None
    probe_src = np.empty((1,), g.dtype) if g is not None else src
    np.copyto(np.empty((1,), out.dtype), probe_src, casting=casting)    # NumPy's rule and error
    if where is True:
        out[...] = g if g is not None else src
        return
    from .._math.ufuncs import UFUNCS

    out[...] = UFUNCS["where"](where, g if g is not None else src, out)


def asarray_chkfinite(a, dtype=None, order=None):
    """:func:`asarray` that raises NumPy's ValueError when ``a`` holds an infinity or NaN (one
    flag read back)."""
    from .._math.ufuncs import UFUNCS

    x = asarray(a, dtype=dtype, order=order)
    if x.dtype.kind in "fc" and x.size and not bool(UFUNCS["isfinite"](x).all()):
        raise ValueError("array must not contain infs or NaNs")
    return x


def require(a, dtype=None, requirements=None, *, like=None):
    """An array meeting ``requirements`` ('C', 'F', 'A', 'W', 'O', 'E' and their long names;
    numpy.require): a copy only when ``a`` does not."""
    names = {"C": "C", "C_CONTIGUOUS": "C", "CONTIGUOUS": "C", "F": "F", "F_CONTIGUOUS": "F",
             "FORTRAN": "F", "A": "A", "ALIGNED": "A", "W": "W", "WRITEABLE": "W", "O": "O",
             "OWNDATA": "O", "E": "E", "ENSUREARRAY": "E"}
    reqs = {names[str(r).upper()] for r in (requirements or ())}
    if "C" in reqs and "F" in reqs:
        raise ValueError("Cannot specify both 'C' and 'F' order")
    order = "C" if "C" in reqs else "F" if "F" in reqs else "A"
    x = asarray(a, dtype=dtype)
    if (order == "C" and not x.flags.c_contiguous) or (order == "F" and not x.flags.f_contiguous) \
            or ("O" in reqs and x.base is not None):
        x = x.copy(order=order if order != "A" else "K")
    return x
