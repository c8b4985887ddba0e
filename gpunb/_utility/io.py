"""Files: ``save``, ``load``, ``savez``, ``savez_compressed`` (cupy.save/load): NumPy's
``.npy``/``.npz`` formats, the arrays copied to the host to write and uploaded when read."""

from __future__ import annotations

import numpy as np

from .._creation.from_data import asnumpy as _host
from .._creation.from_data import upload as _upload


def save(file, arr, allow_pickle=True):
    """Write one array to a ``.npy`` file (numpy.save of its values)."""
    np.save(file, _host(arr), allow_pickle=allow_pickle)


def savez(file, *args, **kwds):
    """Write several arrays to an uncompressed ``.npz`` archive (numpy.savez)."""
    np.savez(file, *[_host(a) for a in args], **{k: _host(v) for k, v in kwds.items()})


def savez_compressed(file, *args, **kwds):
    """Write several arrays to a compressed ``.npz`` archive (numpy.savez_compressed)."""
    np.savez_compressed(file, *[_host(a) for a in args], **{k: _host(v) for k, v in kwds.items()})


class NpzFile:
    """An open ``.npz`` archive whose members come back as GPU arrays (cupy's NpzFile)."""

    def __init__(self, npz):
        self.npz = npz

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.npz.__exit__(*exc)

    def __getitem__(self, key):
        return _upload(self.npz[key])

    def __contains__(self, key):
        return key in self.npz

    def __iter__(self):
        return iter(self.npz)

    def __len__(self):
        return len(self.npz)

    def keys(self):
        return self.npz.keys()

    @property
    def files(self):
        return self.npz.files

    def close(self):
        self.npz.close()


def load(file, mmap_mode=None, allow_pickle=False):
    """Read a ``.npy`` file as a GPU array, or a ``.npz`` archive as an :class:`NpzFile` of
    GPU arrays (numpy.load; objects and pickles are not GPU data and raise)."""
    obj = np.load(file, mmap_mode=mmap_mode, allow_pickle=allow_pickle)
    if isinstance(obj, np.lib.npyio.NpzFile):
        return NpzFile(obj)
    return _upload(np.asarray(obj))


def loadtxt(*args, **kwargs):
    """numpy.loadtxt, the result uploaded."""
    return _upload(np.asarray(np.loadtxt(*args, **kwargs)))


def genfromtxt(*args, **kwargs):
    """numpy.genfromtxt, the result uploaded (structured results are not GPU data and raise)."""
    return _upload(np.asarray(np.genfromtxt(*args, **kwargs)))


def savetxt(fname, X, *args, **kwargs):
    """numpy.savetxt of the array's values."""
    np.savetxt(fname, _host(X), *args, **kwargs)


def fromfile(*args, **kwargs):
    """numpy.fromfile, the result uploaded."""
    return _upload(np.fromfile(*args, **kwargs))


def fromstring(*args, **kwargs):
    """numpy.fromstring (text mode, ``sep`` given), the result uploaded."""
    return _upload(np.fromstring(*args, **kwargs))


def fromregex(file, regexp, dtype, encoding=None):
    """numpy.fromregex's parse on the host (its regular expression, dtype checks and errors),
    then one upload. NumPy's result is a structured array, which is no GPU data: a dtype of
    one field gives that field, ``numpy.fromregex(...)[name]`` (shape ``(n,)``); fields that
    all share one dtype give an ``(n, fields)`` array, one column per field
    (``numpy.lib.recfunctions.structured_to_unstructured``); fields of mixed or unsupported
    dtypes raise TypeError."""
    host = np.fromregex(file, regexp, dtype, encoding=encoding)
    return _upload(_unstructured(host))


def _unstructured(a: np.ndarray) -> np.ndarray:
    """A structured array as plain data: its one field, or its fields of one dtype as
    columns."""
    from ..core.dtypes import UnsupportedDTypeError

    names = a.dtype.names
    field, *others = {a.dtype.fields[n][0] for n in names}
    if others or field.names is not None or field.shape:
        fields = ", ".join(f"{n}: {a.dtype.fields[n][0]}" for n in names)
        raise UnsupportedDTypeError(
            f"structured arrays are not GPU data; gpunb's fromregex gives fields of one plain "
            f"dtype as columns, not {fields}")
    if len(names) == 1:
        return a[names[0]]
    from numpy.lib import recfunctions

    return recfunctions.structured_to_unstructured(a)
