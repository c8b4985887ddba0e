"""``Generator`` and ``default_rng`` (NumPy's ``numpy.random.Generator``) on gpunb's Philox.

``random`` and ``integers`` (and ``uniform`` with scalar bounds, ``bytes``) are NumPy's
values bit for bit when the bit generator is :class:`~gpunb.random.Philox`: the kernels
compute NumPy's stream positions and transforms, and the state advances as NumPy's does,
so consecutive calls continue NumPy's stream. The other distributions use GPU-friendly
transforms of the same stream (Box-Muller normals, inverse-CDF exponentials,
Marsaglia-Tsang gammas): the same distributions as NumPy's, not NumPy's values.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from ..core import args, layout
from ..core.kernels.fastgen import MISS
from ..core.kernels.random import fastdraw
from ..core.kernels.random import plan as pl
from ..core.kernels.random import run
from ..core.runtime import driver
from ..core.ndarray import ndarray
from ._derived import Derived
from ._more import More
from .bitgen import BitGenerator, Philox4x3210

_F64, _F32, _I64 = np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.int64)
# dtype= of the float draws as commonly written -> the dtype (others go through np.dtype)
_FLOATS = {np.float64: _F64, np.float32: _F32, float: _F64, _F64: _F64, _F32: _F32,
           "float64": _F64, "float32": _F32, "f8": _F64, "f4": _F32, "d": _F64, "f": _F32}
_KEY_TYPES = frozenset({type, str, type(_F64), type(_F32)})
_INT_BOUNDS = {np.dtype(t): ((0, 1, "bool") if t is np.bool_ else
                             (int(np.iinfo(t).min), int(np.iinfo(t).max), np.dtype(t).name))
               for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                         np.uint32, np.uint64)}


# ---- shapes, parameters, outputs -----------------------------------------------------------------

def _shape(size) -> tuple:
    if size is None:
        return ()
    if size.__class__ is int:
        if size < 0:
            raise ValueError("negative dimensions are not allowed")
        return (size,)
    if isinstance(size, (tuple, list)):
        shape = tuple(operator.index(s) for s in size)
    else:
        shape = (operator.index(size),)
    if any(s < 0 for s in shape):
        raise ValueError("negative dimensions are not allowed")
    return shape


def _same_size(kept, size) -> bool:
    """``size`` is the ``kept`` one of a prepared draw (None, an int or a tuple of ints)."""
    return kept is size or (size.__class__ in _SIZE_TYPES and kept == size)


_SIZE_TYPES = (int, tuple)
_PLAIN = (int, float)           # scalar bounds the prepared uniform takes as written


def _noted(*args):
    """The prepared draw of a (size, dtype) seen once: none yet, the general path's."""
    return MISS


def _alloc(size, dtype) -> ndarray:
    return ndarray._empty(_shape(size), dtype if isinstance(dtype, np.dtype) else np.dtype(dtype))


def _float_dtype(dtype, func: str) -> np.dtype:
    dt = _FLOATS.get(dtype) if dtype.__class__ in _KEY_TYPES else None
    if dt is None:          # (a dict lookup first: a small draw's host time)
        dt = np.dtype(dtype)
        if dt not in (_F64, _F32):
            raise TypeError(f"Unsupported dtype {dt!r} for {func}")
    return dt


def _out(out, size, dtype: np.dtype) -> ndarray:
    """The array a standard draw writes: ``out`` (checked as NumPy checks it) or a new one."""
    if out is None:
        return _alloc(size, dtype)
    out = args.out_array(out, "out")
    if out.dtype != dtype:
        raise TypeError(f"Supplied output array has the wrong type. Expected {dtype.name}, "
                        f"got {out.dtype.name}")
    if size is not None and _shape(size) != out.shape:
        raise ValueError("size must match out.shape when used together")
    if not out._c_contiguous:
        raise ValueError("Supplied output array is not contiguous, writable or aligned.")
    return out


def _param(value, name: str):
    """A distribution parameter: a float for a scalar, else a float64 gpunb array."""
    x = args.as_gpu(value, name)
    if x is None:
        return float(value)
    return x if x.dtype == _F64 else x.astype(_F64)


def _ufunc(name):
    from .._math.ufuncs import UFUNCS
    return UFUNCS[name]


def _any(x) -> bool:
    from .._logic.truth import any as any_
    return bool(any_(x).get())


def _check(params, bad, message, exc=ValueError):
    """NumPy's parameter checks: ``bad(v)`` for scalars, the same test on GPU arrays (read
    back as one bool)."""
    for p in params:
        if isinstance(p, ndarray):
            if p.size and _any(bad(p, True)):
                raise exc(message)
        elif bad(p, False):
            raise exc(message)


def _result_shape(size, params) -> tuple:
    shapes = [p.shape for p in params if isinstance(p, ndarray)]
    if size is None:
        return layout.broadcast_shapes(*shapes) if shapes else ()
    shape = _shape(size)
    if shapes:
        layout.broadcast_shapes(shape, *shapes)
    return shape


def _full(shape, value) -> ndarray:
    from ..core.kernels.elementwise.run import assign
    x = ndarray._empty(shape, _F64)
    assign(x, value)
    return x


def _broadcast(p, shape) -> ndarray | float:
    """A parameter as ``run.fill_per_element`` takes it: a float, or C-contiguous float64 of
    the result's shape."""
    if not isinstance(p, ndarray):
        return p
    if p.shape == shape and p._c_contiguous:
        return p
    return _full(shape, p)


class Generator(Derived, More):
    """NumPy's ``numpy.random.Generator`` on the GPU, drawing from a gpunb bit generator.

    ``Generator(Philox(seed)).random(n)`` and ``.integers(...)`` equal NumPy's
    ``Generator(Philox(seed))`` results bit for bit."""

    def __init__(self, bit_generator):
        if not isinstance(bit_generator, BitGenerator):
            raise TypeError("bit_generator must be a gpunb.random bit generator (gpunb.random.Philox)")
        self._bit_generator = bit_generator
        # NumPy's values for random and uniform (Philox), else Philox4x32's (the integer
        # draws ask the bit generator)
        self._numpy = bit_generator._NUMPY_VALUES
        # the prepared draws (fastdraw) of the last (size, dtype) of each method that has
        # one: (size, dtype or what, device context, fast)
        self._prepared = {}

    def __getstate__(self) -> dict:
        # the prepared draws belong to a device context (generated code, ctypes buffers),
        # not to the stream: a pickled or copied generator prepares its own
        return {**self.__dict__, "_prepared": {}}

    def _prepare(self, method, size, key, out: ndarray, make) -> None:
        """After a general draw into a new ``out``: note ``size`` and ``key``, and keep
        ``make(shape)``'s prepared draw for them when the call before was the same (a loop
        drawing a new size each time compiles nothing). Not for a list ``size`` (it could
        change) nor an empty draw."""
        kept = self._prepared.get(method)
        ctx = driver.active
        if kept is not None and kept[2] is ctx and kept[1] == key and _same_size(kept[0], size):
            if kept[3] is _noted:       # (else a miss of the draw's own, a pending half: keep it)
                self._prepared[method] = (kept[0], kept[1], ctx, make(out._shape))
            return
        if out._size == 0 or not (size is None or size.__class__ is int or (
                size.__class__ is tuple and all(s.__class__ is int for s in size))):
            return
        self._prepared[method] = (size, key, ctx, _noted)

    def _general(self, method, size, dtype, fill, make):
        """A float draw's general path: ``fill(state, x)`` into a new array of ``size`` and
        ``dtype``, then :meth:`_prepare` with ``make(shape, dtype)``."""
        dt = _float_dtype(dtype, method)
        x = _alloc(size, dt)
        fill(self._state, x)
        self._prepare(method, size, dtype, x, lambda shape: make(shape, dt))
        return x

    @property
    def bit_generator(self):
        return self._bit_generator

    @property
    def _state(self) -> pl.StreamState:
        return self._bit_generator._state

    def __repr__(self) -> str:
        return f"Generator({type(self._bit_generator).__name__})"

    def spawn(self, n_children: int) -> list:
        """Independent child generators (NumPy's ``Generator.spawn``)."""
        return [Generator(b) for b in self._bit_generator.spawn(n_children)]

    # ---- NumPy's exact values --------------------------------------------------------------

    def random(self, size=None, dtype=np.float64, out=None):
        """Floats in [0, 1) (NumPy's ``Generator.random``; its values, bit for bit)."""
        if out is None:
            kept = self._prepared.get("random")
            if kept is not None and kept[1] is dtype and (
                    kept[0] is size or (size.__class__ in _SIZE_TYPES and kept[0] == size)):
                x = kept[3](self._bit_generator._state)
                if x is not MISS:
                    return x
            if not self._numpy:
                return self._general("random", size, dtype,
                                     lambda state, x: run.fill_dist(state, x, "uniform"),
                                     lambda shape, dt: fastdraw.make_dist(
                                         run._fn("dist", "uniform", dt), "uniform", shape, dt,
                                         standard=True))
            return self._general("random", size, dtype, run.fill_random,
                                 lambda shape, dt: fastdraw.make_random(
                                     run._fn("fill", "random", dt), shape, dt))
        out = _out(out, size, _float_dtype(dtype, "random"))
        if self._numpy:
            run.fill_random(self._state, out)
        else:
            run.fill_dist(self._state, out, "uniform")
        return out

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        """Random integers from [low, high) or [low, high] (NumPy's ``Generator.integers``;
        its values, bit for bit, for scalar bounds)."""
        if high is None:
            low, high = 0, low
        dt = dtype if dtype.__class__ is np.dtype else np.dtype(dtype)
        bounds = _INT_BOUNDS.get(dt)
        if bounds is None:
            raise TypeError(f"Unsupported dtype {dt!r} for integers")
        if not (low.__class__ is int and high.__class__ is int) and (
                isinstance(low, ndarray) or isinstance(high, ndarray) or np.ndim(low) or np.ndim(high)):
            return self._integers_array(low, high, size, dt, endpoint)
        shape = _shape(size)
        if size is not None and 0 in shape:
            return ndarray._empty(shape, dt)
        lo, hi = int(low), int(high)
        if not endpoint:
            hi -= 1
        if lo < bounds[0]:
            raise ValueError(f"low is out of bounds for {bounds[2]}")
        if hi > bounds[1]:
            raise ValueError(f"high is out of bounds for {bounds[2]}")
        if lo > hi:
            raise ValueError("low > high" if endpoint else "low >= high")
        out = ndarray._empty(shape, dt)
        self._bit_generator._fill_integers(out, lo, hi - lo)
        return out

    def _integers_array(self, low, high, size, dt, endpoint):
        # Array bounds: NumPy draws element by element with each element's own word width,
        # which no parallel mapping reproduces; draw float64 uniforms and scale them (not
        # NumPy's values, the same distribution up to 2**-53 granularity).
        lo, hi = _param(low, "low"), _param(high, "high")
        if not endpoint:
            hi = hi - 1 if not isinstance(hi, ndarray) else _ufunc("subtract")(hi, 1.0)
        span = _ufunc("subtract")(hi, lo) if isinstance(hi, ndarray) or isinstance(lo, ndarray) else hi - lo
        _check([span], lambda v, arr: _ufunc("less")(v, 0) if arr else v < 0,
               "low > high" if endpoint else "low >= high")
        shape = _result_shape(size, [lo, hi])
        u = self.random(shape)
        x = _ufunc("floor")(_ufunc("multiply")(u, _ufunc("add")(span, 1.0)))
        return _ufunc("add")(x, lo).astype(dt)

    def uniform(self, low=0.0, high=1.0, size=None):
        """Floats in [low, high) (NumPy's ``Generator.uniform``; its values, bit for bit)."""
        if low.__class__ in _PLAIN and high.__class__ in _PLAIN:
            kept = self._prepared.get("uniform")      # (the repeat call: _param's floats)
            if kept is not None and _same_size(kept[0], size):
                lo, hi = float(low), float(high)
                if math.isfinite(hi - lo):
                    x = kept[3](self._bit_generator._state, lo, hi - lo)
                    if x is not MISS:
                        return x
        lo, hi = _param(low, "low"), _param(high, "high")
        if not isinstance(lo, ndarray) and not isinstance(hi, ndarray):
            rng = hi - lo
            if not np.isfinite(rng):
                raise OverflowError("high - low range exceeds valid bounds")
            if not self._numpy:
                return self._affine("uniform", lo, rng, size)
            out = _alloc(size, _F64)
            run.fill_random(self._state, out, lo, rng)
            self._prepare("uniform", size, _F64, out, lambda shape: fastdraw.make_random(
                run._fn("fill", "random", _F64), shape, _F64, affine=True))
            return out
        rng = _ufunc("subtract")(hi, lo)
        _check([rng], lambda v, arr: _ufunc("logical_not")(_ufunc("isfinite")(v)),
               "high - low range exceeds valid bounds", OverflowError)
        u = self.random(_result_shape(size, [lo, hi]))
        return _ufunc("add")(lo, _ufunc("multiply")(rng, u))

    def bytes(self, length: int) -> bytes:
        """``length`` random bytes (NumPy's ``Generator.bytes``: the low bytes of 32-bit words)."""
        length = operator.index(length)
        q = length - 1      # NumPy's word count, C division (so bytes(0) draws a word too)
        words = (q // 4 if q >= 0 else -(-q // 4)) + 1
        out = ndarray._empty(_shape(words), np.dtype(np.uint32))
        self._bit_generator._fill_integers(out, 0, 0xFFFFFFFF)
        return out.get().tobytes()[:length]

    # ---- continuous distributions (GPU transforms) -------------------------------------------

    def _affine(self, what, loc, scale, size, dtype=_F64, out=None):
        if not isinstance(loc, ndarray) and not isinstance(scale, ndarray):
            if out is not None:
                out = _out(out, size, dtype)
                run.fill_dist(self._state, out, what, loc, scale)
                return out
            kept = self._prepared.get(what)
            if kept is not None and kept[1] is dtype and _same_size(kept[0], size):
                x = kept[3](self._bit_generator._state, loc, scale)
                if x is not MISS:
                    return x
            x = _alloc(size, dtype)
            run.fill_dist(self._state, x, what, loc, scale)
            self._prepare(what, size, dtype, x, lambda shape: fastdraw.make_dist(
                run._fn("dist", what, dtype), what, shape, dtype))
            return x
        z = self._affine(what, 0.0, 1.0, _result_shape(size, [loc, scale]))
        return _ufunc("add")(loc, _ufunc("multiply")(scale, z)) if what != "exponential" \
            else _ufunc("multiply")(scale, z)

    def standard_normal(self, size=None, dtype=np.float64, out=None):
        """Standard normal samples (NumPy's ``Generator.standard_normal``; Box-Muller)."""
        if out is None:
            kept = self._prepared.get("standard_normal")
            if kept is not None and kept[1] is dtype and (
                    kept[0] is size or (size.__class__ in _SIZE_TYPES and kept[0] == size)):
                x = kept[3](self._bit_generator._state)
                if x is not MISS:
                    return x
            return self._general("standard_normal", size, dtype,
                                 lambda state, x: run.fill_dist(state, x, "normal"),
                                 lambda shape, dt: fastdraw.make_dist(
                                     run._fn("dist", "normal", dt), "normal", shape, dt,
                                     standard=True))
        return self._affine("normal", 0.0, 1.0, size, _float_dtype(dtype, "standard_normal"), out)

    def normal(self, loc=0.0, scale=1.0, size=None):
        """Normal samples (NumPy's ``Generator.normal``)."""
        if loc.__class__ in _PLAIN and scale.__class__ in _PLAIN and scale >= 0:
            kept = self._prepared.get("normal")       # (the repeat call: _param's floats)
            if kept is not None and kept[1] is _F64 and _same_size(kept[0], size):
                x = kept[3](self._bit_generator._state, float(loc), float(scale))
                if x is not MISS:
                    return x
        loc, scale = _param(loc, "loc"), _param(scale, "scale")
        _check([scale], lambda v, arr: _ufunc("less")(v, 0) if arr else v < 0, "scale < 0")
        return self._affine("normal", loc, scale, size)

    def standard_exponential(self, size=None, dtype=np.float64, method="zig", out=None):
        """Standard exponential samples (NumPy's ``Generator.standard_exponential``; inverse
        CDF whatever ``method``)."""
        return self._affine("exponential", 0.0, 1.0, size,
                            _float_dtype(dtype, "standard_exponential"), out)

    def exponential(self, scale=1.0, size=None):
        """Exponential samples (NumPy's ``Generator.exponential``)."""
        scale = _param(scale, "scale")
        _check([scale], lambda v, arr: _ufunc("less")(v, 0) if arr else v < 0, "scale < 0")
        return self._affine("exponential", 0.0, scale, size)

    def _per_element(self, what, params, size, dtype=_F64, out=None):
        shape = _result_shape(size, params)
        res = _out(out, size, dtype) if out is not None \
            else ndarray._empty(shape, dtype)
        run.fill_per_element(self._state, res, what, [_broadcast(p, shape) for p in params])
        return res

    def standard_gamma(self, shape, size=None, dtype=np.float64, out=None):
        """Standard gamma samples (NumPy's ``Generator.standard_gamma``; Marsaglia-Tsang)."""
        dt = _float_dtype(dtype, "standard_gamma")
        k = _param(shape, "shape")
        _check([k], lambda v, arr: _ufunc("less")(v, 0) if arr else v < 0, "shape < 0")
        return self._per_element("gamma", [k], size, dt, out)

    def gamma(self, shape, scale=1.0, size=None):
        """Gamma samples (NumPy's ``Generator.gamma``)."""
        k, s = _param(shape, "shape"), _param(scale, "scale")
        _check([k], lambda v, arr: _ufunc("less")(v, 0) if arr else v < 0, "shape < 0")
        _check([s], lambda v, arr: _ufunc("less")(v, 0) if arr else v < 0, "scale < 0")
        x = self._per_element("gamma", [k], _result_shape(size, [k, s]))
        return x if (not isinstance(s, ndarray) and s == 1.0) else _ufunc("multiply")(x, s)

    def beta(self, a, b, size=None):
        """Beta samples (NumPy's ``Generator.beta``; the ratio of two gammas)."""
        a, b = _param(a, "a"), _param(b, "b")
        _check([a], lambda v, arr: _ufunc("less_equal")(v, 0) if arr else v <= 0, "a <= 0")
        _check([b], lambda v, arr: _ufunc("less_equal")(v, 0) if arr else v <= 0, "b <= 0")
        return self._per_element("beta", [a, b], size)

    def poisson(self, lam=1.0, size=None):
        """Poisson samples, int64 (NumPy's ``Generator.poisson``)."""
        lam = _param(lam, "lam")
        _check([lam], lambda v, arr: _ufunc("logical_not")(_ufunc("greater_equal")(v, 0))
               if arr else not v >= 0, "lam < 0 or lam is NaN")
        _check([lam], lambda v, arr: _ufunc("greater")(v, _POISSON_LAM_MAX) if arr
               else v > _POISSON_LAM_MAX, "lam value too large")
        return self._per_element("poisson", [lam], size, _I64)

    # ---- permutations -----------------------------------------------------------------------

    def permutation(self, x, axis=0):
        """A permuted range or a shuffled copy of ``x`` along ``axis`` (NumPy's
        ``Generator.permutation``)."""
        from ._shuffle import permutation
        return permutation(self, x, axis)

    def shuffle(self, x, axis=0) -> None:
        """Shuffle ``x`` in place along ``axis`` (NumPy's ``Generator.shuffle``)."""
        from ._shuffle import shuffle
        shuffle(self, x, axis)

    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True):
        """Random samples from ``a`` (NumPy's ``Generator.choice``)."""
        from ._shuffle import choice
        return choice(self, a, size, replace, p, axis, shuffle)


_POISSON_LAM_MAX = float(np.iinfo(np.int64).max - np.sqrt(np.iinfo(np.int64).max) * 10)


def default_rng(seed=None) -> Generator:
    """A :class:`Generator` on :class:`~gpunb.random.Philox4x3210` (NumPy's ``default_rng``;
    NumPy's default bit generator is PCG64, CuPy's XORWOW, gpunb's Philox4x32-10, counter-based
    and drawing at the write bandwidth). For NumPy's values bit for bit, use
    ``Generator(Philox(seed))``."""
    if isinstance(seed, Generator):
        return seed
    if isinstance(seed, BitGenerator):
        return Generator(seed)
    return Generator(Philox4x3210(seed))
