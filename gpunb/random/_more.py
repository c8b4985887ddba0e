"""NumPy's remaining ``Generator`` distributions on the GPU: ``vonmises``, ``zipf``,
``logseries``, ``hypergeometric``, ``multinomial`` and ``multivariate_hypergeometric``
(NumPy's algorithms in the kernels of :mod:`gpunb.core.kernels.random.dists`; the same
distributions as NumPy's, not its values).

NumPy's parameter checks, in NumPy's order and with its messages (a scalar's ``... is NaN``,
an array's ``... contains NaNs``), and its output shapes: parameters broadcast together and
with ``size``, which must be the broadcast shape. A parameter is a scalar, a list or tuple
(checked on the host, then copied to the GPU) or a GPU array (checked on the GPU: one bool
read back per check); a NumPy array in host memory is refused, as everywhere in gpunb. :func:`hypergeometric` and :func:`multinomial` also serve the legacy
``RandomState`` methods, whose checks differ.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from ..core import args
from ..core.kernels.random import run
from ..core.ndarray import ndarray
from ._derived import _u

_F64, _I64 = np.dtype(np.float64), np.dtype(np.int64)
INT64_MAX = (1 << 63) - 1
HYPERGEOM_MAX = 10 ** 9


def _api(name):
    import gpunb
    return getattr(gpunb, name)


def _ndim(p) -> int:
    return p.ndim if isinstance(p, (ndarray, np.ndarray)) else 0


def _param(value, name: str, dtype=_F64):
    """A parameter as a Python scalar (float, or int for an int64 one), a host array (from
    a list or tuple) or a gpunb array, of ``dtype``."""
    x = args.as_gpu(value, name)
    if x is not None:
        return x if x.dtype == dtype else x.astype(dtype)
    if isinstance(value, (list, tuple)):
        return np.asarray(value).astype(dtype)
    return float(value) if dtype == _F64 else int(value)


def _gpu(p):
    """A parameter as ``run.fill_per_element`` takes it: a float, or a float64 gpunb array
    (a host one copied)."""
    if isinstance(p, ndarray):
        return p if p.dtype == _F64 else p.astype(_F64)
    if isinstance(p, np.ndarray):
        return _api("asarray")(p.astype(_F64))
    return float(p)


def _anywhere(mask) -> bool:
    if isinstance(mask, ndarray):
        if not mask.size:
            return False
        from .._logic.truth import any as any_
        return bool(any_(mask).get())
    return bool(np.any(mask))


def _fail(params, names, bad, message: str, arr: bool, exc=ValueError) -> None:
    """Raise ``message`` (``{name}``; NumPy's array wording when ``arr``) for the first of
    ``params`` where ``bad`` (an elementwise test) holds anywhere."""
    for p, name in zip(params, names):
        if _anywhere(bad(p)):
            text = message.format(name=name)
            raise exc(text.replace(" is NaN", " contains NaNs") if arr else text)


def _negative(v):                 # NumPy's CONS_NON_NEGATIVE: the sign bit, NaN allowed
    return _u("logical_and")(_u("logical_not")(_u("isnan")(v)), _u("signbit")(v))


def _below0(v):
    return _u("less")(v, 0)


def _not_gt1(v):
    return _u("logical_not")(_u("greater")(v, 1))


def _not_in_0_1(v):               # [0, 1)
    return _u("logical_not")(_u("logical_and")(_u("greater_equal")(v, 0), _u("less")(v, 1)))


def _not_ge1(v):
    return _u("logical_not")(_u("greater_equal")(v, 1))


def size_shape(size) -> tuple:
    from .generator import _shape
    return _shape(size)


def draw_shape(size, shapes) -> tuple:
    """NumPy's shape of a draw whose parameters have ``shapes`` (``()`` for a scalar): their
    broadcast shape, or ``size``, which they must broadcast to (NumPy's messages)."""
    if size is None:
        return tuple(np.broadcast_shapes(*shapes)) if shapes else ()
    shape = size_shape(size)
    full = tuple(np.broadcast_shapes(shape, *shapes))
    if full != shape:
        raise ValueError(f"Output size {shape} is not compatible with broadcast dimensions "
                         f"of inputs {full}.")
    return shape


def _shapes(params) -> list:
    return [p.shape if isinstance(p, (ndarray, np.ndarray)) else () for p in params]


def _draw(gen, what, params, size, dtype):
    shape = draw_shape(size, _shapes(params))
    return gen._per_element(what, [_gpu(p) for p in params], shape, dtype)


# ---- hypergeometric and multinomial (Generator's and RandomState's) ---------------------------

def hypergeometric(gen, ngood, nbad, nsample, size=None, legacy=False):
    """NumPy's ``Generator.hypergeometric`` (``legacy``: ``RandomState``'s checks: no
    ``10**9`` bound, ``nsample >= 1``). int64."""
    ps = [_param(ngood, "ngood", _I64), _param(nbad, "nbad", _I64), _param(nsample, "nsample", _I64)]
    g, b, s = ps
    arr = any(_ndim(p) for p in ps)
    if not legacy:
        _fail([g, b], ["ngood", "nbad"], lambda v: _u("greater_equal")(v, HYPERGEOM_MAX),
              f"both ngood and nbad must be less than {HYPERGEOM_MAX}", False)
    if _anywhere(_u("less")(_u("add")(g, b), s)):
        raise ValueError("ngood + nbad < nsample")
    _fail([g, b], ["ngood", "nbad"], _below0, "{name} < 0", arr)
    if legacy:
        _fail([s], ["nsample"], _not_ge1, "{name} < 1 or {name} is NaN", arr)
    else:
        _fail([s], ["nsample"], _below0, "{name} < 0", arr)
    return _draw(gen, "hypergeometric", ps, size, _I64)


def _pvals(pvals, legacy: bool):
    """``pvals`` as float64 (host or GPU) and the array it came from (for NumPy's float32
    message)."""
    x = args.as_gpu(pvals, "pvals")
    if x is not None:
        p = x if x.dtype == _F64 else x.astype(_F64)
        if legacy and p.ndim > 1:
            raise ValueError("object too deep for desired array")
    else:
        p = np.asarray(pvals, np.float64) if not legacy or np.ndim(pvals) <= 1 else None
        if p is None:
            raise ValueError("setting an array element with a sequence. The requested array "
                             "would exceed the maximum number of dimension of 1.")
    if legacy and p.ndim == 0:
        raise TypeError("pvals must be a 1-d sequence")
    return p, x


def _check_pvals(p, original, d: int) -> None:
    _fail([p], ["pvals"], lambda v: _u("logical_not")(_u("logical_and")(
        _u("greater_equal")(v, 0), _u("less_equal")(v, 1))), "{name} < 0, {name} > 1 or {name} is NaN", True)
    if d == 0:
        return
    if isinstance(p, ndarray):
        over = _anywhere(_api("sum")(p[..., :-1], axis=-1) > 1.0 + 1e-12)
    else:
        over = any(math.fsum(row[:-1]) > 1.0 + 1e-12 for row in p.reshape(-1, d))
    if over:
        cut = "[:-1]" if p.ndim == 1 else "[...,:-1]"
        if (original is not None and original.dtype.kind == "f" and original.dtype != _F64
                and float(_api("sum")(original).get()) < 1.0001):
            raise ValueError(f"sum(pvals{cut}.astype(np.float64)) > 1.0. The pvals array is cast "
                             "to 64-bit floating point prior to checking the sum. Precision "
                             "changes when casting may cause problems even if the sum of the "
                             "original pvals is valid.")
        raise ValueError(f"sum(pvals{cut}) > 1.0")


def multinomial_shape(n_shape, p_shape, size, vector: bool) -> tuple:
    """NumPy's shape of a multinomial draw (batch shape plus the categories' axis)."""
    d = p_shape[-1]
    if not vector:
        return (d,) if size is None else size_shape(size) + (d,)
    shapes = [n_shape, p_shape[:-1]] + ([] if size is None else [size_shape(size)])
    batch = tuple(np.broadcast_shapes(*shapes))
    if size is not None and batch != size_shape(size):
        raise ValueError(f"Output size {size_shape(size)} is not compatible with broadcast "
                         f"dimensions of inputs {batch}.")
    return batch + (d,)


def multinomial(gen, n, pvals, size=None, legacy=False):
    """NumPy's ``Generator.multinomial`` (``legacy``: ``RandomState``'s: an int ``n``, 1-d
    ``pvals``): sequential binomials over the categories, one GPU thread per sample."""
    if legacy:
        if isinstance(n, (float, np.floating)):
            n = int(n)
        try:
            n = operator.index(n)
        except TypeError:
            raise TypeError("an integer is required") from None
    else:
        n = _param(n, "n", _I64)
    p, original = _pvals(pvals, legacy)
    d = p.shape[-1] if p.ndim >= 1 else 0
    if d == 0 and not legacy:
        raise ValueError("pvals must have at least 1 dimension and the last dimension of pvals "
                         "must be greater than 0.")
    _check_pvals(p, original, d)
    vector = not legacy and (_ndim(n) != 0 or p.ndim > 1)
    if vector:
        _fail([n], ["n"], _below0, "{name} < 0", True)
    shape = multinomial_shape(_shapes([n])[0], p.shape, size, vector)
    if not vector:
        _fail([n], ["n"], _below0, "{name} < 0", False)
    out = ndarray._empty(shape, _I64)
    if out.size == 0:
        return out
    batch = shape[:-1]
    pv = _api("asarray")(p) if isinstance(p, np.ndarray) else p
    if pv.ndim > 1:
        pv = _api("ascontiguousarray")(_api("broadcast_to")(pv, shape))
    elif not pv._c_contiguous:
        pv = _api("ascontiguousarray")(pv)
    count = _gpu(n)
    if isinstance(count, ndarray):
        count = _api("ascontiguousarray")(_api("broadcast_to")(count, batch))
        run.fill_rows(gen._state, out, "multinomial", [count, pv], d, off=d if pv.ndim > 1 else 0)
    else:
        run.fill_rows(gen._state, out, "multinomial", [None, pv], d, off=d if pv.ndim > 1 else 0,
                      f=(count, 0.0, 0.0, 0.0))
    return out


def _colors(colors) -> np.ndarray:
    x = args.as_gpu(colors, "colors")
    try:
        c = np.asarray(x.get() if x is not None else colors)
        invalid = (c.ndim != 1 or (c.size > 0 and not np.issubdtype(c.dtype, np.integer))
                   or bool(np.any((c < 0) | (c > INT64_MAX))))
    except ValueError:
        invalid = True
    if invalid:
        raise ValueError("colors must be a one-dimensional sequence of nonnegative integers not "
                         f"exceeding {INT64_MAX}.")
    return np.ascontiguousarray(c, dtype=np.int64)


class More:
    """Mixed into :class:`~gpunb.random.Generator`."""

    def vonmises(self, mu, kappa, size=None):
        """Von Mises samples on [-pi, pi] (NumPy's ``Generator.vonmises``: Best and Fisher's
        rejection)."""
        m, k = _param(mu, "mu"), _param(kappa, "kappa")
        _fail([k], ["kappa"], _negative, "{name} < 0", _ndim(m) or _ndim(k))
        return _draw(self, "vonmises", [m, k], size, _F64)

    def zipf(self, a, size=None):
        """Zipf samples, int64 (NumPy's ``Generator.zipf``: rejection from a Pareto bound)."""
        x = _param(a, "a")
        _fail([x], ["a"], _not_gt1, "{name} <= 1 or {name} is NaN", _ndim(x))
        return _draw(self, "zipf", [x], size, _I64)

    def logseries(self, p, size=None):
        """Logarithmic series samples, int64 (NumPy's ``Generator.logseries``: Kemp's
        algorithm)."""
        x = _param(p, "p")
        _fail([x], ["p"], _not_in_0_1, "{name} < 0, {name} >= 1 or {name} is NaN", _ndim(x))
        return _draw(self, "logseries", [x], size, _I64)

    def hypergeometric(self, ngood, nbad, nsample, size=None):
        """Hypergeometric samples, int64 (NumPy's ``Generator.hypergeometric``: HRUA, or
        sequential selection for small samples)."""
        return hypergeometric(self, ngood, nbad, nsample, size)

    def multinomial(self, n, pvals, size=None):
        """Multinomial samples, int64 with the categories last (NumPy's
        ``Generator.multinomial``, array ``n`` and ``pvals`` broadcasting included)."""
        return multinomial(self, n, pvals, size)

    def multivariate_hypergeometric(self, colors, nsample, size=None, method="marginals"):
        """Multivariate hypergeometric samples, int64 with the colors last (NumPy's
        ``Generator.multivariate_hypergeometric``). Both methods draw by the marginals
        algorithm (sequential hypergeometrics, one GPU thread per sample): NumPy's ``count``
        shuffles a ``sum(colors)`` array per sample, which a GPU thread cannot hold; the
        distribution is the same. ``count`` keeps its own limit on ``sum(colors)``."""
        if method not in ("count", "marginals"):
            raise ValueError('method must be "count" or "marginals".')
        try:
            operator.index(nsample)
        except TypeError:
            raise ValueError("nsample must be an integer") from None
        if nsample < 0:
            raise ValueError("nsample must be nonnegative.")
        if nsample > INT64_MAX:
            raise ValueError(f"nsample must not exceed {INT64_MAX}")
        c = _colors(colors)
        total = sum(int(v) for v in c)
        if total > INT64_MAX:
            raise ValueError("sum(colors) must not exceed the maximum value of a 64 bit signed "
                             f"integer ({INT64_MAX})")
        if method == "marginals" and total >= 1000000000:
            raise ValueError('When method is "marginals", sum(colors) must be less than '
                             '1000000000.')
        if method == "count" and total > INT64_MAX // 8:
            raise ValueError(f"When method is 'count', sum(colors) must not exceed {INT64_MAX // 8}")
        if int(nsample) > total:
            raise ValueError("nsample > sum(colors)")
        shape = (c.size,) if size is None else size_shape(size) + (c.size,)
        out = ndarray._empty(shape, _I64)
        if out.size:
            run.fill_rows(self._state, out, "mvhg", [_api("asarray")(c)], c.size, off=total,
                          rng=int(nsample))
        return out

    def permuted(self, x, *, axis=None, out=None):
        """``x`` with each slice along ``axis`` shuffled independently (the flattened array
        when None), into ``out`` if given (NumPy's ``Generator.permuted``)."""
        from ._shuffle import permuted
        return permuted(self, x, axis, out)
