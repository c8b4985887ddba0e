"""``gpunb.poly1d`` (numpy.poly1d, cupy.poly1d): a one-dimensional polynomial whose
coefficients (highest power first) are a GPU array.

Its arithmetic is NumPy's, step for step, through the namespace-generic polynomial
functions (:mod:`.polynomial`, :mod:`.numeric`) on the namespace :meth:`poly1d._ns`: gpunb's
here, NumPy's in the CPU tests (tests/test_vectorize_poly.py), which so check every method
against ``numpy.poly1d`` without a GPU. As NumPy's, a new poly1d trims its leading zero
coefficients (one value read back from the GPU); ``str``, ``repr``, ``==`` and ``order``
read the host where NumPy's would.
"""

from __future__ import annotations

import numpy as np

from .numeric import _gp, _polyval
from .polynomial import _pad_sum, _polydiv, _polyder, _polyint, _polymul, _trimmed


def _host(a) -> np.ndarray:
    return a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray) else np.asarray(a)


class poly1d:
    """A one-dimensional polynomial (numpy.poly1d): ``poly1d([1, 2, 3])`` is
    ``x**2 + 2x + 3``; ``poly1d([1, 2], r=True)`` the polynomial with roots 1 and 2;
    ``variable`` names the variable in ``str``. Coefficients live on the GPU (``.coeffs``,
    also ``.c``, ``.coef``, ``.coefficients``); ``p(x)`` evaluates it (polyval); ``+``, ``-``,
    ``*``, ``**``, ``/`` (by a scalar; by a polynomial: ``(quotient, remainder)``) as NumPy's.
    gpunb functions and NumPy functions on gpunb objects read it as its coefficients; ``get()``
    gives a ``numpy.poly1d`` (CuPy's spelling)."""

    __hash__ = None

    @staticmethod
    def _ns():
        """The array namespace of the coefficients (gpunb)."""
        return _gp()

    def __init__(self, c_or_r, r=False, variable=None):
        if isinstance(c_or_r, poly1d):
            self._coeffs, self._variable = c_or_r._coeffs, c_or_r._variable
            if variable is not None:
                self._variable = variable
            return
        if isinstance(c_or_r, np.poly1d):
            variable = c_or_r.variable if variable is None else variable
            c_or_r = c_or_r.coeffs
        xp = self._ns()
        if r:
            c_or_r = xp.poly(c_or_r)
        self._coeffs = _trimmed(xp, c_or_r)
        self._variable = "x" if variable is None else variable

    # -- attributes
    @property
    def coeffs(self):
        """The coefficients, highest power first."""
        return self._coeffs

    @coeffs.setter
    def coeffs(self, value):
        # NumPy's: allowing this makes p.coeffs *= 2 legal
        if value is not self._coeffs:
            raise AttributeError("Cannot set attribute")

    c = coef = coefficients = coeffs

    @property
    def variable(self) -> str:
        """The name of the variable in ``str``."""
        return self._variable

    @property
    def order(self) -> int:
        """The degree."""
        return len(self._coeffs) - 1

    o = order

    @property
    def roots(self):
        """The roots (numpy.roots of the coefficients)."""
        return self._ns().roots(self._coeffs)

    r = roots

    # -- conversions
    def __array__(self, t=None, copy=None):
        # NumPy's: the coefficients (a copy to the host, as a gpunb array's __array__)
        return np.asarray(self._coeffs, t, copy=copy) if t else np.asarray(self._coeffs, copy=copy)

    @property
    def __cuda_array_interface__(self) -> dict:
        return self._coeffs.__cuda_array_interface__

    def get(self, stream=None) -> np.poly1d:
        """A copy in host memory: a ``numpy.poly1d`` (cupy.poly1d.get)."""
        return np.poly1d(_host(self._coeffs), variable=self._variable)

    def __repr__(self) -> str:
        return f"poly1d({repr(_host(self._coeffs))[6:-1]})"

    def __str__(self) -> str:
        return str(np.poly1d(_host(self._coeffs), variable=self._variable))

    def __len__(self) -> int:
        return self.order

    def __iter__(self):
        return iter(self._coeffs)

    # NumPy's ufuncs and functions on a poly1d run gpunb's, as on gpunb arrays: a ufunc (and
    # so a NumPy scalar's operator, numpy.float64(2) * p) reads the coefficients and gives an
    # array, as NumPy's do with its poly1d; numpy.polyadd(p, q) is gpunb.polyadd(p, q)
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        from ..core.ndarray import ndarray

        return ndarray.__array_ufunc__(self, ufunc, method, *inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        from ..core.ndarray import ndarray

        return ndarray.__array_function__(self, func, types, args, kwargs)

    # -- evaluation and calculus
    def __call__(self, val):
        if isinstance(val, poly1d):
            return _polyval_poly1d(self._coeffs, val)
        return _polyval(self._ns(), self._coeffs, val)

    def deriv(self, m=1):
        """The ``m``-th derivative (numpy.polyder)."""
        return type(self)(_polyder(self._ns(), self._coeffs, m))

    def integ(self, m=1, k=0):
        """The ``m``-th antiderivative, integration constants ``k`` (numpy.polyint)."""
        return type(self)(_polyint(self._ns(), self._coeffs, m, k))

    # -- arithmetic (NumPy's: a non-scalar operand becomes a poly1d first)
    def _poly(self, other):
        return other if isinstance(other, poly1d) else type(self)(other)

    def __neg__(self):
        return type(self)(-self._coeffs)

    def __pos__(self):
        return self

    def __mul__(self, other):
        if np.isscalar(other):
            return type(self)(self._coeffs * other)
        return type(self)(_polymul(self._ns(), self._coeffs, self._poly(other)._coeffs))

    def __rmul__(self, other):
        if np.isscalar(other):
            return type(self)(other * self._coeffs)
        return type(self)(_polymul(self._ns(), self._coeffs, self._poly(other)._coeffs))

    def __add__(self, other):
        return type(self)(_pad_sum(self._ns(), self._coeffs, self._poly(other)._coeffs, False))

    def __radd__(self, other):
        return type(self)(_pad_sum(self._ns(), self._coeffs, self._poly(other)._coeffs, False))

    def __sub__(self, other):
        return type(self)(_pad_sum(self._ns(), self._coeffs, self._poly(other)._coeffs, True))

    def __rsub__(self, other):
        return type(self)(_pad_sum(self._ns(), self._poly(other)._coeffs, self._coeffs, True))

    def __pow__(self, val):
        if not np.isscalar(val) or int(val) != val or val < 0:
            raise ValueError("Power to non-negative integers only.")
        xp = self._ns()
        res = xp.asarray([1])
        for _ in range(val):        # NumPy's: val products (a TypeError for a float val)
            res = _polymul(xp, self._coeffs, res)
        return type(self)(res)

    def __truediv__(self, other):
        if np.isscalar(other):
            return type(self)(self._coeffs / other)
        return self._divmod(self, self._poly(other))

    def __rtruediv__(self, other):
        if np.isscalar(other):
            return type(self)(other / self._coeffs)
        return self._divmod(self._poly(other), self)

    def _divmod(self, u, v):
        q, r = _polydiv(self._ns(), u._coeffs, v._coeffs)
        return type(self)(q), type(self)(r)

    # -- comparison
    def __eq__(self, other):
        if not isinstance(other, poly1d):
            return NotImplemented
        if self._coeffs.shape != other._coeffs.shape:
            return False
        return bool((self._coeffs == other._coeffs).all())

    def __ne__(self, other):
        if not isinstance(other, poly1d):
            return NotImplemented
        return not self.__eq__(other)

    # -- coefficients by power
    def __getitem__(self, val):
        """The coefficient of ``x**val`` (0 beyond the degree and for negative powers)."""
        if val > self.order or val < 0:
            return self._ns().zeros((), self._coeffs.dtype)[()]
        return self._coeffs[self.order - val]

    def __setitem__(self, key, val):
        """Set the coefficient of ``x**key``, growing the polynomial with zeros beyond its
        degree (NumPy's: in place; no trimming afterwards)."""
        if key < 0:
            raise ValueError("Does not support negative powers.")
        ind = self.order - key
        if key > self.order:
            xp = self._ns()
            zr = xp.zeros(key - self.order, self._coeffs.dtype)
            self._coeffs = xp.concatenate((zr, self._coeffs))
            ind = 0
        self._coeffs[ind] = val


def _polyval_poly1d(p, x):
    """NumPy's polyval at a poly1d ``x``: Horner's steps in poly1d arithmetic (a poly1d)."""
    y = 0
    for pv in p:
        y = y * x + pv
    return y
