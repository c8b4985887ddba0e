"""``gpunb.ndarray``: an n-dimensional array in GPU memory.

An array is a view: a pointer into a pooled device buffer, a shape, byte strides and a dtype.
Views share the buffer and keep it alive through ``base``. View arithmetic is in
:mod:`gpunb.core.layout`. The methods that compute (``sum``, ``max``, indexing, the
operators...) are not defined here: the registry (:mod:`gpunb._registry`) installs them from
the API's implementations, bound on first use, so this module imports no kernel family.
Nothing here copies to the host behind your back: ``get()``, ``__array__`` and ``item()`` are
the explicit ways out.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from .. import _registry
from . import dtypes, layout
from .runtime import driver, memory
from .runtime.memory import MemoryPointer  # noqa: F401  (its public home: gpunb.cuda.MemoryPointer)
from .runtime.stream import current_stream_handle


C_STRIDES: dict = {}      # (shape, itemsize) -> C strides: the allocation hot path's one lookup


def c_strides(shape: tuple, itemsize: int) -> tuple:
    """The C strides of ``shape``, remembered in :data:`C_STRIDES` (a 0-d or 1-element shape's
    are empty or any: ``C_STRIDES.get(...) or c_strides(...)`` may compute them again)."""
    strides = layout.c_strides(shape, itemsize)
    if len(C_STRIDES) < 4096:
        C_STRIDES[(shape, itemsize)] = strides
    return strides


class Flags:
    """Contiguity flags, readable as attributes or NumPy-style keys."""

    __slots__ = ("c_contiguous", "f_contiguous", "owndata")

    def __init__(self, c, f, own):
        self.c_contiguous, self.f_contiguous, self.owndata = c, f, own

    def __getitem__(self, key):
        return {"C_CONTIGUOUS": self.c_contiguous, "C": self.c_contiguous,
                "F_CONTIGUOUS": self.f_contiguous, "F": self.f_contiguous,
                "OWNDATA": self.owndata}[key.upper()]

    def __repr__(self) -> str:
        return (f"  C_CONTIGUOUS : {self.c_contiguous}\n  F_CONTIGUOUS : {self.f_contiguous}\n"
                f"  OWNDATA : {self.owndata}")


class ndarray:
    """An array in GPU memory, with NumPy's (and CuPy's) interface.

    Parameters
    ----------
    shape : int or tuple of int
    dtype : dtype, default float64
    memptr : MemoryPointer, optional
        Existing memory to view; default a new allocation from the memory pool.
    strides : tuple of int, optional
        Byte strides (only with ``memptr``).
    order : {'C', 'F'}
    """

    __array_priority__ = 100
    # no per-array dictionary (as NumPy's and CuPy's arrays: no new attributes), 1.3k of
    # a + b's 27k instructions
    __slots__ = ("_data", "_shape", "_strides", "_dtype", "_base", "_size", "_cc", "__weakref__")

    def __init__(self, shape, dtype=float, memptr=None, strides=None, order="C"):
        shape = layout.new_shape(shape)
        dt = dtypes.check(dtype)
        if order not in ("C", "F"):
            raise ValueError(f"order must be 'C' or 'F', not {order!r}")
        nbytes = math.prod(shape) * dt.itemsize
        if memptr is None:
            if strides is not None:
                raise ValueError("strides need memptr: a new allocation is always contiguous")
            memptr = memory.get_default_memory_pool().malloc(nbytes)
        if strides is None:
            strides = layout.c_strides(shape, dt.itemsize) if order == "C" else layout.f_strides(shape, dt.itemsize)
        else:
            strides = tuple(int(s) for s in strides)
        self._init(memptr, shape, tuple(strides), dt, None)

    def _init(self, memptr, shape, strides, dt, base):
        self._data = memptr
        self._shape = shape
        self._strides = strides
        self._dtype = dt
        self._base = base
        self._size = 1
        self._cc = None          # C-contiguity, computed on first use
        for s in shape:
            self._size *= s

    @classmethod
    def _empty(cls, shape: tuple, dt: np.dtype) -> "ndarray":
        """A new C-contiguous array; ``shape`` and ``dt`` already validated (the ufunc path)."""
        size = 1
        for s in shape:
            size *= s
        itemsize = dt.itemsize
        strides = C_STRIDES.get((shape, itemsize)) or c_strides(shape, itemsize)
        self = cls.__new__(cls)
        self._data = memory.get_default_memory_pool().malloc(size * itemsize)
        self._shape = shape
        self._strides = strides
        self._dtype = dt
        self._base = None
        self._size = size
        self._cc = True
        return self

    @classmethod
    def _view(cls, memptr: MemoryPointer, shape, strides, dt, base) -> "ndarray":
        self = cls.__new__(cls)
        self._init(memptr, tuple(shape), tuple(strides), dt, base)
        return self

    def _derive(self, shape, strides, offset: int = 0, dt=None) -> "ndarray":
        """A view of this array's memory."""
        mp = self._data if offset == 0 else MemoryPointer(self._data.ptr + offset, self._data.owner,
                                                         self._data.device_id)
        return ndarray._view(mp, shape, strides, dt or self._dtype,
                             self._base if self._base is not None else self)

    # -- attributes ----------------------------------------------------------------------------

    shape = property(lambda self: self._shape)
    strides = property(lambda self: self._strides)
    dtype = property(lambda self: self._dtype)
    size = property(lambda self: self._size)
    ndim = property(lambda self: len(self._shape))
    itemsize = property(lambda self: self._dtype.itemsize)
    nbytes = property(lambda self: self._size * self._dtype.itemsize)
    data = property(lambda self: self._data)
    base = property(lambda self: self._base)

    @shape.setter
    def shape(self, value):
        new = self.reshape(value)
        if new._data.ptr != self._data.ptr or new._base is not self and new._base is not self._base:
            raise AttributeError("incompatible shape for in-place modification; use .reshape()")
        self._shape, self._strides, self._cc = new._shape, new._strides, None

    @property
    def flags(self) -> Flags:
        n = self.itemsize
        return Flags(layout.is_c_contiguous(self._shape, self._strides, n),
                     layout.is_f_contiguous(self._shape, self._strides, n), self._base is None)

    @property
    def _c_contiguous(self) -> bool:
        cc = self._cc
        if cc is None:
            cc = self._cc = layout.is_c_contiguous(self._shape, self._strides, self._dtype.itemsize)
        return cc

    @property
    def __cuda_array_interface__(self) -> dict:
        return {"version": 3, "shape": self._shape, "typestr": self._dtype.str,
                "descr": [("", self._dtype.str)],
                "data": (self._data.ptr if self._size else 0, False),
                "strides": None if self._c_contiguous else self._strides,
                "stream": current_stream_handle()}

    def __dlpack_device__(self):
        return (2, self._data.device_id)   # kDLCUDA

    # -- transfer ------------------------------------------------------------------------------

    def get(self, stream=None, order="C", out=None, blocking=True) -> np.ndarray:
        """Copy to a NumPy array in host memory.

        ``blocking=False`` returns once the copy is queued on ``stream`` (CuPy's): into
        page-locked ``out`` (``gpunb.empty_pinned``) it overlaps other work, and ``out`` is
        ready after the stream is synchronized; pageable memory is waited for anyway."""
        src = self if self._c_contiguous else self.copy()
        host = out if out is not None else np.empty(self._shape, self._dtype)
        if out is not None and (out.shape != self._shape or out.dtype != self._dtype
                                or not out.flags.c_contiguous):
            raise ValueError(f"out must be a C-contiguous {self._dtype} array of shape {self._shape}")
        if host.nbytes:
            memory.copy_device_to_host(host.ctypes.data, src._data.ptr, host.nbytes, stream,
                                       wait=bool(blocking))
        if driver.index_flag is not None and driver.index_flag[0]:   # an out-of-bounds GPU index
            driver.index_error()
        return host if order == "C" else np.asarray(host, order=order)

    def set(self, arr, stream=None) -> None:
        """Copy a NumPy array (of this shape) from host memory into this array."""
        host = np.asarray(arr)
        if host.shape != self._shape:
            raise ValueError(f"shape mismatch: array of shape {host.shape} into {self._shape}")
        host = np.ascontiguousarray(host, dtype=self._dtype)
        if self._c_contiguous:
            memory.copy_to_device(self._data.ptr, host, stream)
        else:
            tmp = ndarray(self._shape, self._dtype)
            memory.copy_to_device(tmp._data.ptr, host, stream)
            self[...] = tmp

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("a gpunb array cannot be viewed as a NumPy array without a copy to the host")
        host = self.get()
        return host if dtype is None else host.astype(dtype, copy=False)

    def __reduce__(self):
        """Pickling (pickle, multiprocessing, Dask's workers) goes through host memory; a
        0-size array (a Dask meta) stays off the GPU."""
        if self._size == 0:
            return _unpickle_empty, (self._shape, self._dtype.str)
        return _unpickle, (self.get(),)

    def tobytes(self, order="C") -> bytes:
        """The raw bytes of the array's values (copied to the host; numpy's ``tobytes``)."""
        return self.get().tobytes(order)

    def tofile(self, fid, sep="", format="%s") -> None:   # noqa: A002 (NumPy's name)
        """Write the values to a file (copied to the host; numpy's ``tofile``)."""
        self.get().tofile(fid, sep, format)

    def dumps(self) -> bytes:
        """The pickle of the array (numpy's ``dumps``)."""
        import pickle

        return pickle.dumps(self)

    def dump(self, file) -> None:
        """Pickle the array into ``file`` (a path or an open binary file; numpy's ``dump``)."""
        import pickle

        if hasattr(file, "write"):
            pickle.dump(self, file)
        else:
            with open(file, "wb") as f:
                pickle.dump(self, f)

    @property
    def flat(self) -> "flatiter":
        """A flat (C-order) view for indexing and assignment (numpy's ``ndarray.flat``)."""
        return flatiter(self)

    def item(self, *args):
        if args:
            return self[args if len(args) > 1 else args[0]].item()
        if self._size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return self.get().item()

    def tolist(self):
        return self.get().tolist()

    def __bool__(self):
        if self._size != 1:
            raise ValueError("The truth value of an array with more than one element is ambiguous. "
                             "Use a.any() or a.all()")
        return bool(self.item())

    def __int__(self):
        return int(self.item())

    def __float__(self):
        return float(self.item())

    def __complex__(self):
        return complex(self.item())

    def __index__(self):
        if self._dtype.kind not in "iu" or self._size != 1 or self.ndim:
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self.item())

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of unsized object")
        return self._shape[0]

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self._shape[0]))

    def __repr__(self) -> str:
        text = repr(self.get())
        return text[:-1] + f", device='cuda:{self._data.device_id}')"

    def __str__(self) -> str:
        return str(self.get())

    # -- views ---------------------------------------------------------------------------------
    def reshape(self, *shape, order="C") -> "ndarray":
        if len(shape) == 1:
            s0 = shape[0]
            if s0.__class__ is int and s0 == -1 and len(self._shape) == 1 and order == "C":
                return self._derive(self._shape, self._strides)     # ravel's common case
            if not isinstance(s0, (int, np.integer)):
                shape = s0
        new = layout.resolve_shape(self._size, shape)
        strides = layout.reshape(self._shape, self._strides, self.itemsize, new, order)
        if strides is None:                       # not expressible as a view: copy, as NumPy
            return self.copy(order=order).reshape(new, order=order)
        return self._derive(new, strides)

    def ravel(self, order="C") -> "ndarray":
        order = _order(order)
        if order == "K":       # memory order: axes by decreasing |stride|, directions kept
            perm = _memory_perm(self._strides)
            return self.transpose(perm).reshape(-1) if perm else self.reshape(-1)
        return self.reshape(-1, order=order)

    def flatten(self, order="C") -> "ndarray":
        flat = self.ravel(order)
        return flat.copy() if flat._data.owner is self._data.owner else flat

    def transpose(self, *axes) -> "ndarray":
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        shape, strides = layout.transpose(self._shape, self._strides, tuple(axes) if axes else None)
        return self._derive(shape, strides)

    T = property(lambda self: self.transpose())

    def _part(self):
        return np.dtype(np.float32 if self._dtype == np.complex64 else np.float64)

    @property
    def real(self) -> "ndarray":
        """The real part: a view (of the array itself when it is not complex)."""
        if self._dtype.kind != "c":
            return self._derive(self._shape, self._strides)
        return self._derive(self._shape, self._strides, 0, self._part())

    @real.setter
    def real(self, value) -> None:
        self.real[...] = value

    @property
    def imag(self) -> "ndarray":
        """The imaginary part: a view of a complex array; zeros (a new array) otherwise."""
        if self._dtype.kind != "c":
            zeros = ndarray._empty(self._shape, self._dtype)
            memory.fill_bytes(zeros._data.ptr, 0, zeros.nbytes)
            return zeros
        part = self._part()
        return self._derive(self._shape, self._strides, part.itemsize, part)

    @imag.setter
    def imag(self, value) -> None:
        if self._dtype.kind != "c":
            raise TypeError("array does not have imaginary part to set")
        self.imag[...] = value

    def swapaxes(self, axis1, axis2) -> "ndarray":
        return self._derive(*layout.swapaxes(self._shape, self._strides, axis1, axis2))

    def squeeze(self, axis=None) -> "ndarray":
        return self._derive(*layout.squeeze(self._shape, self._strides, axis))

    def _broadcast_to(self, shape) -> "ndarray":
        shape = layout.new_shape(shape)
        return self._derive(shape, layout.broadcast_to(self._shape, self._strides, shape))

    def view(self, dtype=None, type=None) -> "ndarray":
        """A new array object over the same memory (ndarray.view): ``dtype`` reinterprets the
        bytes, NumPy's rules for another item size (the last axis, contiguous, changes
        length). ``type`` (or a class as ``dtype``) may only be gpunb's ndarray."""
        def ours(t):
            return isinstance(t, builtins.type) and issubclass(t, ndarray)
        if type is not None and not ours(type):
            raise TypeError(f"gpunb arrays have no subclasses to view as: {type!r}")
        if dtype is None or ours(dtype):
            return self._derive(self._shape, self._strides)
        dt = dtypes.check(dtype)
        shape, strides = layout.view_as(self._shape, self._strides, self._dtype.itemsize, dt.itemsize)
        # a GPU load of an item needs the item's size as alignment (gpunb's complex and half
        # types are aligned so); a misaligned load ends the context
        need = dt.itemsize
        if math.prod(shape) and (self._data.ptr % need or any(
                st % need for n, st in zip(shape, strides) if n > 1)):
            raise ValueError(f"gpunb: a view as {dt} needs its start and strides to be multiples "
                             f"of {need} bytes (this one starts {self._data.ptr % 256} bytes past "
                             f"a 256-byte boundary, strides {self._strides}); copy it first")
        return self._derive(shape, strides, 0, dt)

    # -- copies ---------------------------------------------------------------------------------

    def copy(self, order="C") -> "ndarray":
        out = _alloc(self._shape, self._dtype, _order(order), self)
        _copy_into(out, self)
        return out

    def astype(self, dtype, order="K", casting="unsafe", copy=True) -> "ndarray":
        dt = dtypes.check(dtype)
        if casting != "unsafe" and not np.can_cast(self._dtype, dt, casting):
            raise TypeError(f"Cannot cast array data from {self._dtype!r} to {dt!r} according "
                            f"to the rule {casting!r}")
        if order == "K" and copy is True and (self._cc is True or self._c_contiguous):
            out = ndarray._empty(self._shape, dt)       # the common case, in fewer steps
            _elementwise_copy()(self, out)
            return out
        order = _order(order, "K")
        if dt == self._dtype and not copy and (
                order in "AK" or (order == "C" and self._c_contiguous)
                or (order == "F" and self.flags.f_contiguous)):
            return self
        out = _alloc(self._shape, dt, order, self)
        _copy_into(out, self)
        return out

    def fill(self, value) -> None:
        self[...] = value

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    # -- NumPy protocols ------------------------------------------------------------------------

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """``numpy.sin(x)`` on a gpunb array runs gpunb.sin; what gpunb lacks raises TypeError
        (returning NotImplemented makes NumPy raise it), never a copy to the host."""
        if method == "at":                    # numpy.add.at(gpu_array, ...): gpunb's ufunc.at
            f = _registry.numpy_ufunc(ufunc)
            return NotImplemented if f is None else f.at(*inputs, **kwargs)
        if method != "__call__" or set(kwargs) - {"out", "dtype", "casting"}:
            return NotImplemented
        f = _registry.numpy_ufunc(ufunc)
        return NotImplemented if f is None else f(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        """NumPy functions on gpunb arrays run gpunb's of the same name (the registry says
        which), or raise TypeError naming the function."""
        entry = _registry.numpy_function(func)
        if entry is None:
            raise TypeError(f"{_registry.numpy_name(func)} is not supported on gpunb arrays (gpunb "
                            "has no GPU implementation; it never copies to the host behind your back)")
        return _registry.implementation(entry.name)(*args, **kwargs)

    # -- the array API standard (gpunb/_array_api/devices.py) -----------------------------------

    @property
    def device(self):
        """The GPU this array lives on: a :class:`gpunb.cuda.Device` (equal for the same GPU)."""
        from .._array_api.devices import device_of

        return device_of(self._data.device_id)

    def __array_namespace__(self, *, api_version=None):
        """The array API namespace of this array: the ``gpunb`` module (``api_version``: one of
        the standard's versions gpunb follows, default the latest)."""
        from .._array_api.devices import namespace

        return namespace(api_version)

    def to_device(self, device, /, *, stream=None) -> "ndarray":
        """This array on ``device``: itself when it is already there (gpunb has no CPU device:
        use ``get()`` for the host)."""
        from .._array_api.devices import to_device

        return to_device(self, device, stream)

    @property
    def mT(self) -> "ndarray":
        """The matrix transpose of a stack of matrices: the last two axes swapped (a view)."""
        from .._array_api.devices import matrix_transpose

        return matrix_transpose(self)


def _unpickle(host: np.ndarray) -> ndarray:
    out = ndarray._empty(host.shape, host.dtype)
    memory.copy_to_device(out._data.ptr, host if host.flags.c_contiguous else host.copy())
    return out


def _unpickle_empty(shape, dtype) -> ndarray:
    dt = np.dtype(dtype)
    return ndarray._view(MemoryPointer(0, None, 0), shape, tuple(dt.itemsize for _ in shape), dt, None)


class flatiter:
    """``a.flat``: the array as a 1-D sequence in C order (numpy.flatiter): indexing reads
    (int, slice, integer or boolean arrays), assignment writes back into ``a``."""

    def __init__(self, base: ndarray):
        self.base = base

    def __len__(self) -> int:
        return self.base.size

    def _flat(self) -> ndarray:
        return self.base.reshape(self.base.size)

    def __getitem__(self, key):
        return self._flat()[key]

    def __setitem__(self, key, value) -> None:
        b = self.base
        if b._c_contiguous:
            b.reshape(b.size)[key] = value
            return
        tmp = b.ravel()
        tmp[key] = value
        b[...] = tmp.reshape(b.shape)

    def __iter__(self):
        flat = self._flat()
        return (flat[i] for i in range(flat.size))

    def copy(self) -> ndarray:
        return self.base.ravel().copy()


def _order(order, default: str = "C") -> str:
    """``order=`` as 'C', 'F', 'A' or 'K' (any case; None is the caller's default), as NumPy's
    ``PyArray_OrderConverter``, with its message for anything else."""
    if order is None:
        return default
    if isinstance(order, str) and order.upper() in ("C", "F", "A", "K") and len(order) == 1:
        return order.upper()
    raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")


def _memory_perm(strides) -> tuple | None:
    """The axes by decreasing ``|stride|`` (stable, as NumPy's sorted stride permutation), or
    None when that is already their order."""
    perm = sorted(range(len(strides)), key=lambda d: -abs(strides[d]))
    return None if perm == list(range(len(strides))) else tuple(perm)


def _alloc(shape, dt, order: str, like=None) -> ndarray:
    """A new array of ``shape`` in ``order`` ('C', 'F', or 'A'/'K' relative to ``like``: 'A' is
    Fortran when ``like`` is Fortran- but not C-contiguous; 'K' keeps ``like``'s axis order in
    memory, with every stride positive)."""
    if order in "AK" and like is not None and like.ndim > 1 and not like._c_contiguous:
        if like.flags.f_contiguous:
            order = "F"
        elif order == "K" and len(shape) == like.ndim:
            perm = _memory_perm(like._strides)
            if perm is not None:
                inner = ndarray(tuple(shape[p] for p in perm), dt)
                inverse = [0] * len(perm)
                for i, p in enumerate(perm):
                    inverse[p] = i
                return inner.transpose(inverse)
    return ndarray(shape, dt, order="F" if order == "F" else "C")


_copy_fn = []


def _elementwise_copy():
    """The elementwise family's ``copy(src, dst)`` (imported on first use: that family
    imports this module)."""
    if not _copy_fn:
        from .kernels.elementwise.run import copy

        _copy_fn.append(copy)
    return _copy_fn[0]


def _copy_into(out: ndarray, src: ndarray) -> None:
    """``out[...] = src`` for a new ``out`` of ``src``'s shape, both viewed in ``out``'s memory
    order so that the copy walks the destination contiguously (an F-to-F copy is then a flat
    one)."""
    perm = _memory_perm(out._strides) if out.ndim > 1 and not out._c_contiguous else None
    if perm is not None:
        out, src = out.transpose(perm), src.transpose(perm)
    out[...] = src


_registry.install(ndarray)     # the computing methods and the operators, bound on first use
