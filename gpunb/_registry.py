"""What gpunb derives from its one table of public names (:mod:`gpunb._table`, one line
each):

- the package face: ``gpunb.<name>``, ``__all__`` and ``dir(gpunb)``, resolved on first
  access so that ``import gpunb`` imports nothing but this table (:func:`resolve`);
- the methods and operators of :class:`gpunb.ndarray` (:func:`install`), resolved on first
  use, so that the array object (the engine) never imports the functions (the API);
- NumPy's protocols: ``numpy.sum(gpu_array)`` runs the entry whose ``numpy`` names
  ``numpy.sum`` (:func:`numpy_function`), ``numpy.sin(gpu_array)`` the ufunc of that name
  (:func:`numpy_ufunc`); a NumPy function with no entry raises TypeError naming it;
- what ``@gpunb.fuse`` can trace: ufuncs always; an entry with ``fuse='method'`` on a
  traced argument calls that value's method (the reductions, views), one with
  ``fuse='inline'`` traces through its own implementation (it only calls ufuncs).

A line names the implementation as ``'module:attribute'`` under the ``gpunb`` package. The
API modules (``gpunb/_creation``, ``_manipulation``, ``_indexing``, ``_math``, ``_logic``,
``_sorting``, ``_statistics`` and the subpackages ``linalg``, ``fft``, ``random``) normalize
arguments (:mod:`gpunb.core.args`) and call a kernel family of the engine (``gpunb/core``).
"""

from __future__ import annotations

import importlib

# (Plain classes and dicts: this module and the table are all that ``import gpunb`` runs, so
# they import nothing that costs time, dataclasses and functools included.)
from ._table import _TABLE, Entry


# -- what the table derives -----------------------------------------------------------------------

ENTRIES: dict[str, Entry] = {e.name: e for e in _TABLE if e.kind != "method" and "." not in e.name}
# the subpackages' members, by full name ('linalg.norm'): resolved by the subpackage (members())
SUBMEMBERS: dict[str, Entry] = {e.name: e for e in _TABLE if e.kind != "method" and "." in e.name}
METHODS: dict[str, Entry] = {e.method: e for e in _TABLE if e.method is not None}
# the names that make an array (from host data or from nothing): the first access to one in
# an expression begins the driver's start-up while its modules load (core/runtime/early.py)
EARLY = frozenset(e.name for e in ENTRIES.values() if e.name != "asnumpy" and e.target.split(":")[0]
                  in ("_creation.basic", "_creation.from_data", "_creation.ranges"))
# ...and the modules the first ufunc and the first reduction import (~30 ms), imported while
# cuInit runs
WARM = ("gpunb._math.ufuncs", "gpunb.core.kernels.elementwise.run", "gpunb.core.runtime.store",
        "gpunb.core.runtime.nvrtc", "gpunb.core.kernels.loader", "gpunb._math.sumprod",
        "gpunb.core.kernels.reduction.run")


def operators() -> list[tuple[str, str, str]]:
    """(dunder, ufunc name, role) of every operator: role 'forward' (``a + b``),
    'reflected' (``b + a``), 'inplace' (``a += b``) or 'unary' (``-a``)."""
    out = []
    for e in _TABLE:
        if e.operator is None:
            continue
        if e.form == "unary":
            out.append((f"__{e.operator}__", e.name, "unary"))
        else:
            out.append((f"__{e.operator}__", e.name, "forward"))
        if e.form == "binary":
            out.append((f"__r{e.operator}__", e.name, "reflected"))
            out.append((f"__i{e.operator}__", e.name, "inplace"))
    return out


# NumPy's array power takes these exponents through cheaper, exact ufuncs (its
# fast_scalar_power), so x ** 2 is exactly x * x: ndarray and fusion's traced values match it.
FAST_POWER = {2: "square", 0.5: "sqrt", -1: "reciprocal", 1: "positive"}


def _load(target: str):
    module, _, attr = target.partition(":")
    mod = importlib.import_module(f"gpunb.{module}")
    return getattr(mod, attr) if attr else mod


_implementations: dict = {}
_public: dict = {}
_numpy: dict = {}


def implementation(name: str):
    """The object that implements the public name ``name`` (imported on first use)."""
    impl = _implementations.get(name)
    if impl is None:
        e = ENTRIES.get(name) or SUBMEMBERS[name]
        impl = _implementations[name] = _load(e.target)
    return impl


def resolve(name: str):
    """The public object ``gpunb.<name>``: the implementation; for an entry that a traced
    argument handles by its method (``fuse='method'``), a function that sends traced values
    there and everything else to the implementation."""
    public = _public.get(name)
    if public is None:
        public = _public[name] = _public_object(ENTRIES.get(name) or SUBMEMBERS[name])
    return public


def _public_object(e: Entry):
    impl = implementation(e.name)
    if e.fuse != "method":
        return impl
    import functools

    from .core.fusion.tracer import Proxy

    method = e.method or e.name

    @functools.wraps(impl)
    def public(a, *args, **kwargs):
        if a.__class__ is Proxy:        # inside @gpunb.fuse: the traced value's method
            return getattr(a, method)(*args, **kwargs)
        return impl(a, *args, **kwargs)

    return public


def numpy_function(func) -> Entry | None:
    """The entry standing for the NumPy function ``func`` (``numpy.sum``...), or None."""
    if not _numpy:
        import numpy as np

        for e in (*ENTRIES.values(), *SUBMEMBERS.values()):
            if e.numpy is None or e.kind == "ufunc":
                continue
            obj = np
            for part in e.numpy.split("."):
                obj = getattr(obj, part, None)
            if obj is not None:
                _numpy[obj] = e
    return _numpy.get(func)


def numpy_name(func) -> str:
    """``numpy.sort``, ``numpy.linalg.norm``: a NumPy function's name as users write it."""
    module = getattr(func, "__module__", None) or "numpy"
    return f"{module}.{func.__name__}"


def numpy_ufunc(np_ufunc):
    """gpunb's ufunc standing for NumPy's ufunc ``np_ufunc``, or None."""
    e = ENTRIES.get(np_ufunc.__name__)
    if e is None or not (e.kind == "ufunc" or np_ufunc.signature is not None):
        return None     # a generalized ufunc (matmul, vecdot) is a function entry
    return implementation(e.name)


# -- ndarray's methods and operators, bound on first use ------------------------------------------

class _Lazy:
    """A class attribute that builds itself on first access and then replaces itself with
    what it built, so the second access is a plain function lookup."""

    def __init__(self, name: str, build):
        self.name, self.build = name, build

    def __get__(self, obj, cls):
        f = self.build()
        setattr(cls, self.name, f)
        return f if obj is None else f.__get__(obj, cls)


def _method(name: str):
    def build():
        impl = _load(METHODS[name].target)
        if not hasattr(impl, "__get__"):        # a ufunc object: make it bind as a method
            def method(self, *args, **kwargs):
                return impl(self, *args, **kwargs)
            method.__name__ = method.__qualname__ = name
            method.__doc__ = impl.__doc__
            return method
        return impl
    return build


def _operator(ufunc_name: str, role: str):
    def build():
        f = implementation(ufunc_name)
        if ufunc_name == "power":
            return _power(f, role)
        if role == "unary":
            return lambda self: f(self)
        if role == "inplace":
            return lambda self, other: f(self, other, out=self)
        from .core.kernels.fastgen import MISS

        swap = role == "reflected"

        # the prepared call the ufunc used last, tried here first: the call through the
        # ufunc object and its fast path is two more Python frames (~0.3 us of a + b)
        def binary(self, other):
            args = (other, self) if swap else (self, other)
            fast = f._last
            if fast is not None:
                r = fast(args)
                if r is not MISS:
                    return r
            return f(*args)
        return binary
    return build


def _power(power, role):
    if role == "reflected":
        return lambda self, other: power(other, self)

    def pow_(self, other, out=None):
        name = FAST_POWER.get(other) if type(other) in (int, float) and self.dtype.kind in "fc" else None
        if name is not None:
            return implementation(name)(self, out=out)
        return power(self, other, out=out)

    return pow_ if role == "forward" else (lambda self, other: pow_(self, other, out=self))


def install(cls) -> None:
    """Give the array class ``cls`` the methods and operators of the table (built on first
    use). A name ``cls`` defines itself is an error: the table would silently lose."""
    for name in METHODS:
        if name in cls.__dict__:
            raise TypeError(f"{cls.__name__}.{name} is defined both in the class and in the registry")
        setattr(cls, name, _Lazy(name, _method(name)))
    for dunder, ufunc_name, role in operators():
        setattr(cls, dunder, _Lazy(dunder, _operator(ufunc_name, role)))
    cls.__hash__ = None     # arrays define __eq__ elementwise: unhashable, as NumPy's


def public_names() -> list[str]:
    return sorted(ENTRIES)


def members(package: str) -> list[str]:
    """The public names of the subpackage ``gpunb.<package>`` (its ``__all__``)."""
    prefix = package + "."
    return sorted(n[len(prefix):] for n in SUBMEMBERS if n.startswith(prefix))


def submodule_getattr(package: str):
    """A PEP 562 ``__getattr__`` for the subpackage ``gpunb.<package>``: its registry members,
    imported on first access."""
    import sys

    def __getattr__(name: str):
        full = f"{package}.{name}"
        if full not in SUBMEMBERS:
            raise AttributeError(f"module 'gpunb.{package}' has no attribute {name!r}")
        value = resolve(full)
        setattr(sys.modules[f"gpunb.{package}"], name, value)
        return value

    return __getattr__
