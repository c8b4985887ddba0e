"""Order statistics: ``median``, ``percentile``, ``quantile`` and their NaN-ignoring forms.

The values at the needed ranks come from the GPU; everything that depends only on ``q``
and the length (NumPy's virtual indexes, the neighbouring ranks, gamma) is NumPy's own code
on the host, and the interpolation is NumPy's ``_lerp`` done with gpunb's ufuncs, so the
results and dtypes are NumPy's.

A reduction of the whole array to one or two ranks (``median``, a scalar ``q``) does not
sort: a radix select (:func:`gpunb.core.kernels.search.run.select2`, three passes over
float32 data, nothing read back) finds both order statistics. Reductions along an axis sort
the rows (:func:`gpunb.sort`) and gather the ranks. Weights (``method='inverted_cdf'``, the
full and NaN-ignoring forms) follow NumPy's weighted steps on every row at once
(:func:`inverted_cdf_rows`, written against an array namespace: the CPU tests run it on NumPy).
"""

from __future__ import annotations

import numpy as np
from numpy.lib import _function_base_impl as _npf

from ..core import args
from ..core.kernels.search.run import select2
from ..core.ndarray import ndarray

_I64 = np.dtype("int64")


def _uf(name):
    from .._math.ufuncs import UFUNCS

    return UFUNCS[name]


def _upload(host) -> ndarray:
    from .._creation.from_data import upload

    return upload(np.asarray(host))


def _assign(dst, src):
    from ..core.kernels.elementwise.run import assign

    assign(dst, src)


# ---- reshaping the reduction ---------------------------------------------------------------------

def _rows(x: ndarray, axis):
    """``x`` with the reduced axes merged last: ``(x2 of shape R + (K,), R, kept shape for
    keepdims)``; NumPy's ``_ureduce``."""
    if axis is None:
        return x.reshape(x.size), (), (1,) * x.ndim
    axes = args.axes(axis, x.ndim)
    rest = [d for d in range(x.ndim) if d not in axes]
    R = tuple(x.shape[d] for d in rest)
    K = 1
    for d in axes:
        K *= x.shape[d]
    moved = x.transpose(rest + list(axes)) if list(rest) + list(axes) != list(range(x.ndim)) else x
    kept = tuple(1 if d in axes else x.shape[d] for d in range(x.ndim))
    return moved.reshape(R + (K,)), R, kept


def _sorted_rows(x2: ndarray) -> ndarray:
    from .._sorting.sort import sort

    return sort(x2, axis=-1)


def _order_stats(x2: ndarray, ranks: np.ndarray):
    """The values at ``ranks`` (sorted distinct non-negative ints) along the last axis of
    ``x2``: a GPU array of shape ``(len(ranks),) + R``, and the rows' last sorted values
    (NaN where a row holds NaN; None when the values already carry the NaN)."""
    R = x2.shape[:-1]
    if not R and len(ranks) <= 2 and x2.dtype.kind not in "cb":
        v = select2(x2, int(ranks[0]), int(ranks[-1]))
        return (v if len(ranks) == 2 else v[:1]), None
    s = _sorted_rows(x2)
    K = x2.shape[-1]
    cols = [s[(..., int(r))] for r in ranks]
    from .._manipulation.joining import stack

    G = stack(cols, axis=0) if len(cols) > 1 else cols[0].reshape((1,) + R)
    last = s[(..., K - 1)] if x2.dtype.kind in "fc" else None
    return G, last


def _pick(G: ndarray, pos: np.ndarray) -> ndarray:
    """``G[pos]`` along the first axis, for host positions of any shape."""
    if pos.ndim == 0:
        return G[int(pos)]
    from .._indexing.gather import take

    return take(G, _upload(pos.astype(np.int64)), axis=0)


def _lerp(a: ndarray, b: ndarray, t):
    """NumPy's ``_lerp(a, b, t)``: ``a + (b - a) * t``, or ``b - (b - a) * (1 - t)`` where
    ``t >= 0.5``; ``t`` a Python float (weak) or a host array."""
    sub, add, mul = _uf("subtract"), _uf("add"), _uf("multiply")
    diff = sub(b, a)
    if isinstance(t, float):
        low = add(a, mul(diff, t))
        if t >= 0.5:
            high = sub(b, mul(diff, 1 - t))
            return high if high.dtype == low.dtype else high.astype(low.dtype)
        return low
    tg = _upload(t)
    low = add(a, mul(diff, tg))
    cond = t >= 0.5
    if not cond.any():
        return low
    high = sub(b, mul(diff, _upload(1 - t)))
    if high.dtype != low.dtype:
        high = high.astype(low.dtype)
    if cond.all():
        return high
    return _uf("where")(_upload(cond), high, low)


def _finish(result: ndarray, last, out, keepdims, qshape, kept):
    if last is not None:
        isnan = _uf("isnan")(last)
        picked = _uf("where")(isnan, last, result)
        result = picked if picked.dtype == result.dtype else picked.astype(result.dtype)
    if keepdims:
        result = result.reshape(tuple(qshape) + kept)
    if out is not None:
        out = args.out_array(out, "quantile")
        _assign(out, result)
        return out
    return result


# ---- quantile ------------------------------------------------------------------------------------

def _method(method):
    try:
        return _npf._QuantileMethods[method]
    except (KeyError, TypeError):
        raise ValueError(f"{method!r} is not a valid method. Use one of: "
                         f"{_npf._QuantileMethods.keys()}") from None


def _quantile(x: ndarray, q: np.ndarray, axis, out, method, keepdims, weak_q, weights=None):
    x2, R, kept = _rows(x, axis)
    K = x2.shape[-1]
    props = _method(method)
    if q.ndim > 2:
        raise ValueError("q must be a scalar or 1d")
    if K == 0:
        raise IndexError("index -1 is out of bounds for axis 0 with size 0")
    if weights is not None:
        return _weighted(x2, q, weights, R, out, keepdims, kept, axis)
    vi = np.asanyarray(props["get_virtual_index"](K, q))
    integral = props["fix_gamma"] is None or (method == "linear" and vi.dtype.kind in "iu")
    if integral:
        idx = vi.astype(np.int64)
        ranks = np.unique(idx % K)
        G, last = _order_stats(x2, ranks)
        result = _pick(G, np.searchsorted(ranks, idx % K))
    else:
        if weak_q and not R and vi.ndim == 0:          # a Python scalar q of a whole array
            from .quantile_small import small_quantile

            res = small_quantile(x2, vi, props)
            if res is not None:
                return _finish(res, None, out, keepdims, q.shape, kept)
        prev, nxt = _npf._get_indexes(np.empty(0, x2.dtype), vi, K)
        ranks = np.unique(np.concatenate([(prev % K).ravel(), (nxt % K).ravel()]))
        G, last = _order_stats(x2, ranks)
        a = _pick(G, np.searchsorted(ranks, prev % K))
        b = _pick(G, np.searchsorted(ranks, nxt % K))
        gamma = _npf._get_gamma(vi, prev, props)
        gamma = float(gamma) if weak_q else gamma.reshape(vi.shape + (1,) * len(R))
        result = _lerp(a, b, gamma)
    return _finish(result, last, out, keepdims, q.shape, kept)


def _weighted(x2, q, weights, R, out, keepdims, kept, axis):
    """``method='inverted_cdf'`` with weights (``weights`` of ``x``'s shape, broadcast):
    one row by a binary search in its CDF, rows by :func:`inverted_cdf_rows`."""
    import gpunb

    if R:
        w2 = _rows(weights, axis)[0]
        return _finish(inverted_cdf_rows(gpunb, x2, w2, q), None, out, keepdims, q.shape, kept)
    from .._sorting.bisect import searchsorted
    from .._sorting.sort import argsort
    from ..core.kernels.scan.run import scan

    w = weights.reshape(weights.size)
    order = argsort(x2)
    from .._indexing.gather import take

    xs, ws = take(x2, order), take(w, order)
    last = xs[-1] if x2.dtype.kind in "fc" else None
    cdf = scan(ws, 0, "sum", np.float64)
    if bool(_uf("isnan")(_uf("true_divide")(cdf[-1], cdf[-1])).get()):
        raise ValueError("Weights included NaN, inf or were all zero.")
    cdf = _flat_over_zeros(gpunb, cdf, ws)
    cdf = _uf("true_divide")(cdf, cdf[-1])
    if q.dtype.kind == "f":
        cdf = cdf.astype(q.dtype)
    if bool(_uf("equal")(cdf[0], 0).get()):
        cdf = _uf("where")(_uf("equal")(cdf, 0), -1, cdf).astype(cdf.dtype)
    qg = _upload(q)
    ind = _uf("minimum")(searchsorted(cdf, qg, side="left"), x2.shape[-1] - 1)
    result = take(xs, ind)
    return _finish(result, last, out, keepdims, q.shape, kept)


def _flat_over_zeros(xp, cdf, ws):
    """The cumulative weights ``cdf`` with each zero weight's entry equal to the last
    positive weight's before it (0 before the first). NumPy's sequential sum has that
    exactly; a parallel scan sums each position in its own order, so a trailing zero weight
    could land a rounding below ``q = 1`` and be picked after the last weighted value."""
    pos = ws > 0
    count = xp.cumsum(pos, axis=-1)
    first = xp.argsort(~pos, axis=-1, kind="stable")     # the positive positions, in order
    last = xp.take_along_axis(first, xp.maximum(count - 1, 0), axis=-1)
    return xp.where(count == 0, 0.0, xp.take_along_axis(cdf, last, axis=-1))


def inverted_cdf_rows(xp, x2, w2, q: np.ndarray, nan_last: bool = True):
    """NumPy's weighted ``inverted_cdf`` quantiles along the last axis of ``x2`` (shape
    ``R + (K,)``, ``K > 0``) with weights ``w2`` of its shape: an array of shape
    ``q.shape + R``. NumPy's steps row by row (a stable sort; the weights' float64 CDF
    normalized by its last value; ``q``'s float dtype; leading zeros of the CDF set to -1;
    the first position whose CDF reaches ``q``), where NumPy's per-row ``searchsorted`` is
    the count of CDF values below ``q``; NaN where a row's last sorted value is NaN when
    ``nan_last``. ``xp`` is gpunb or NumPy (the CPU tests run it on NumPy)."""
    K = x2.shape[-1]
    order = xp.argsort(x2, axis=-1, kind="stable")
    xs = xp.take_along_axis(x2, order, axis=-1)
    ws = xp.take_along_axis(w2, order, axis=-1)
    cdf = xp.cumsum(ws, axis=-1, dtype=np.float64)
    if bool(xp.any(xp.isnan(cdf[..., -1] / cdf[..., -1]))):
        raise ValueError("Weights included NaN, inf or were all zero.")
    cdf = _flat_over_zeros(xp, cdf, ws)
    cdf = cdf / cdf[..., -1:]
    if q.dtype.kind == "f":
        cdf = cdf.astype(q.dtype)
    cdf = xp.where(cdf == 0, -1, cdf)
    cols = []
    for qi in q.reshape(-1):
        idx = xp.minimum(xp.sum(cdf < qi, axis=-1), K - 1)
        cols.append(xp.take_along_axis(xs, idx[..., None], axis=-1)[..., 0])
    res = xp.reshape(xp.stack(cols, axis=0), q.shape + x2.shape[:-1])
    if nan_last and x2.dtype.kind == "f":
        last = xs[..., -1]
        res = xp.where(xp.isnan(last), last, res)
    return res


def nan_inverted_cdf_rows(xp, x2, w2, q: np.ndarray):
    """:func:`inverted_cdf_rows` ignoring NaN (numpy.nanquantile with weights): a NaN weighs
    nothing and sorts last; an all-NaN row gives NaN. ``(result, any row all NaN)``."""
    if x2.dtype.kind != "f":
        return inverted_cdf_rows(xp, x2, w2, q), False
    isnan = xp.isnan(x2)
    w2 = xp.where(isnan, 0, w2)
    empty = xp.all(isnan, axis=-1)
    if not bool(xp.any(empty)):
        return inverted_cdf_rows(xp, x2, w2, q, False), False
    res = inverted_cdf_rows(xp, x2, xp.where(empty[..., None], 1, w2), q, False)
    return xp.where(empty, xp.asarray(np.nan, dtype=res.dtype), res), True


def _check_q(q, func: str, scale: float):
    g = args.as_gpu(q, "q") if not isinstance(q, np.ndarray) else None
    weak = type(q) in (int, float)
    host = g.get() if g is not None else q
    qa = np.true_divide(host, scale) if scale != 1 else np.asanyarray(host)
    if not _npf._quantile_is_valid(qa):
        raise ValueError("Percentiles must be in the range [0, 100]" if scale != 1 else
                         "Quantiles must be in the range [0, 1]")
    return qa, weak


def _prepare(a, q, method, interpolation, weights, func, scale, axis):
    if interpolation is not None:
        method = _npf._check_interpolation_as_method(method, interpolation, func)
    x = args.array(a, func)
    if x.dtype.kind == "c":
        raise TypeError("a must be an array of real numbers")
    qa, weak = _check_q(q, func, scale)
    w = None
    if weights is not None:
        if method != "inverted_cdf":
            raise ValueError(f"Only method 'inverted_cdf' supports weights. Got: {method}.")
        w = _checked_weights(x, weights, axis, func)
    return x, qa, weak, method, w


def _checked_weights(x: ndarray, weights, axis, func) -> ndarray:
    """The weights as :func:`_weights` broadcasts them, none negative (one flag read back)."""
    w = _weights(x, args.array(weights, func), axis)
    if bool(_uf("less")(w, 0).any().get()):
        raise ValueError("Weights must be non-negative.")
    return w


def _weights(x: ndarray, w: ndarray, axis) -> ndarray:
    """NumPy's ``_weights_are_valid``: ``w`` of ``x``'s shape, or of the shape of ``x``'s
    ``axis`` (in that order), broadcast along them."""
    if w.shape == x.shape:
        return w
    if axis is None:
        raise TypeError("Axis must be specified when shapes of a and weights differ.")
    axes = args.axis_list(axis, x.ndim, "axis")
    if w.shape != tuple(x.shape[ax] for ax in axes):
        raise ValueError("Shape of weights must be consistent with shape of a along "
                         "specified axis.")
    from .._manipulation.dims import broadcast_to

    w = w.transpose(tuple(int(i) for i in np.argsort(axes)))
    return broadcast_to(w.reshape(tuple(s if d in axes else 1 for d, s in enumerate(x.shape))),
                        x.shape)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None, interpolation=None):
    """The ``q``-th quantiles of ``a`` along ``axis`` (numpy.quantile), every NumPy
    ``method``; ``weights`` with ``'inverted_cdf'``. A GPU array (0-d for a scalar ``q``)."""
    x, qa, weak, method, w = _prepare(a, q, method, interpolation, weights, "quantile", 1, axis)
    return _quantile(x, qa, axis, out, method, keepdims, weak, w)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, interpolation=None):
    """The ``q``-th percentiles of ``a`` along ``axis`` (numpy.percentile): ``quantile`` of
    ``q / 100``."""
    x, qa, weak, method, w = _prepare(a, q, method, interpolation, weights, "percentile", 100, axis)
    return _quantile(x, qa, axis, out, method, keepdims, weak, w)


# ---- median --------------------------------------------------------------------------------------

def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median along ``axis`` (numpy.median): the mean of the middle one or two values;
    NaN where a slice holds NaN. The whole array's median takes a radix select, no sort."""
    from .meanvar import mean

    x = args.array(a, "median")
    x2, R, kept = _rows(x, axis)
    K = x2.shape[-1]
    if K == 0 or x2.size == 0:
        res = mean(x2, axis=-1)
        if keepdims:
            res = res.reshape(kept)
        if out is not None:
            _assign(args.out_array(out, "median"), res)
            return out
        return res
    h = K // 2
    ranks = np.array([h - 1, h] if K % 2 == 0 else [h], np.int64)
    G, last = _order_stats(x2, ranks)
    res = mean(G, axis=0)
    return _finish(res, last, out, keepdims, (), kept)


# ---- NaN-ignoring forms --------------------------------------------------------------------------

def _drop_nan(x: ndarray, axis, func):
    """The non-NaN elements of ``x`` (a whole-array reduction): the compaction's size is
    read back. ``None`` along an axis of a multi-dimensional array (not supported)."""
    if x.dtype.kind not in "fc":
        return x
    if axis is not None and x.ndim > 1 and args.axes(axis, x.ndim) != tuple(range(x.ndim)):
        return None
    from ..core.kernels.scan.run import select

    return select(x, _uf("logical_not")(_uf("isnan")(x)))


def _nan_result(x, q, func, out, keepdims, kept_ndim):
    import warnings

    warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)
    shape = np.shape(q) + ((1,) * kept_ndim if keepdims else ())
    from .._creation.basic import full

    res = full(shape, np.nan, dtype=x.dtype if x.dtype.kind == "f" else np.float64)
    if out is not None:
        _assign(out, res)
        return out
    return res


def _nanform(func, a, q, axis, out, method, keepdims, weights, interpolation, scale):
    if interpolation is not None:
        method = _npf._check_interpolation_as_method(method, interpolation, func)
    x = args.array(a, func)
    if x.dtype.kind == "c":
        raise TypeError("a must be an array of real numbers")
    qa, weak = _check_q(q, func, scale)
    _method(method)
    if weights is not None:
        return _nan_weighted(x, qa, weights, axis, out, method, keepdims, func)
    kept = (1,) * x.ndim
    v = _drop_nan(x, axis, func)
    if v is None:
        return _nan_along(x, qa, axis, out, method, keepdims, weak, func)
    if v.size == 0 and x.size:
        return _nan_result(x, qa, func, out, keepdims, x.ndim)
    res = _quantile(v, qa, None, None, method, False, weak)
    if keepdims:
        res = res.reshape(qa.shape + kept)
    if out is not None:
        _assign(args.out_array(out, func), res)
        return out
    return res


def _nan_weighted(x, qa, weights, axis, out, method, keepdims, func):
    import gpunb

    if method != "inverted_cdf":
        raise ValueError(f"Only method 'inverted_cdf' supports weights. Got: {method}.")
    if qa.ndim > 2:
        raise ValueError("q must be a scalar or 1d")
    w = _checked_weights(x, weights, axis, func)
    x2, R, kept = _rows(x, axis)
    if x2.shape[-1] == 0:
        raise IndexError("index -1 is out of bounds for axis 0 with size 0")
    res, empty = nan_inverted_cdf_rows(gpunb, x2, _rows(w, axis)[0], qa)
    if empty:
        import warnings

        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)
    if keepdims:
        res = res.reshape(tuple(qa.shape) + kept)
    if out is not None:
        _assign(args.out_array(out, func), res)
        return out
    return res


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None, interpolation=None):
    """:func:`quantile` ignoring NaN (numpy.nanquantile)."""
    return _nanform("nanquantile", a, q, axis, out, method, keepdims, weights, interpolation, 1)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None, interpolation=None):
    """:func:`percentile` ignoring NaN (numpy.nanpercentile)."""
    return _nanform("nanpercentile", a, q, axis, out, method, keepdims, weights, interpolation, 100)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """:func:`median` ignoring NaN (numpy.nanmedian); an all-NaN input gives NaN with NumPy's
    RuntimeWarning."""
    x = args.array(a, "nanmedian")
    v = _drop_nan(x, axis, "nanmedian")
    if v is None:
        return _nan_along(x, None, axis, out, "median", keepdims, True, "nanmedian")
    if v.size == 0 and x.size:
        return _nan_result(x, 0.5, "nanmedian", out, keepdims, x.ndim)
    res = median(v, None, None, False, False)
    if keepdims:
        res = res.reshape((1,) * x.ndim)
    if out is not None:
        _assign(args.out_array(out, "nanmedian"), res)
        return out
    return res


# ---- NaN-ignoring forms along axes ---------------------------------------------------------------

def _nan_virtual(method: str, n: ndarray, qv: ndarray, qhost):
    """NumPy's virtual index of each row (``n`` non-NaN values, float of q's dtype) for one
    quantile ``qv`` (0-d, q's dtype): (virtual index, integral?, fix_gamma or None)."""
    f, add, sub, mul = _uf("floor"), _uf("add"), _uf("subtract"), _uf("multiply")
    lin = mul(sub(n, 1), qv)
    if method == "linear":
        return lin, False, None
    if method in ("lower", "higher", "nearest"):
        r = {"lower": f, "higher": _uf("ceil"), "nearest": _uf("rint")}[method](lin)
        return r.astype(_I64), True, None
    if method == "midpoint":
        return mul(0.5, add(f(lin), _uf("ceil")(lin))), False, "midpoint"
    if method == "averaged_inverted_cdf":
        return sub(mul(n, qv), 1), False, "averaged"
    if method in ("inverted_cdf", "closest_observation"):
        index = sub(mul(n, qv), 1)
        if method == "closest_observation":
            index = sub(index, 0.5)
        prev = f(index)
        gamma = sub(index, prev)
        cond = _uf("equal")(gamma, 0)
        if method == "closest_observation":
            cond = _uf("logical_and")(cond, _uf("equal")(_uf("remainder")(prev, 2), 1))
        res = _uf("where")(cond, prev, add(prev, 1)).astype(_I64)
        return _uf("maximum")(res, 0), True, None
    alpha, beta = {"interpolated_inverted_cdf": (0, 1), "hazen": (0.5, 0.5), "weibull": (0, 0),
                   "median_unbiased": (1 / 3.0, 1 / 3.0), "normal_unbiased": (3 / 8.0, 3 / 8.0)}[method]
    t = alpha + qhost * (1 - alpha - beta)      # NumPy's order of operations, on the host
    return sub(add(mul(n, qv), _upload(np.asarray(t))), 1), False, None


def _nan_along(x: ndarray, qa, axis, out, method, keepdims, weak, func):
    """nanquantile / nanmedian along some axes: the rows sorted (NaN last), each row's count
    of non-NaN values, NumPy's per-row indexes and interpolation computed on the GPU for all
    rows at once; all-NaN rows give NaN with NumPy's warning (one flag read back)."""
    if x.dtype.kind not in "f":
        return median(x, axis, out, False, keepdims) if method == "median" else \
            _quantile(x, qa, axis, out, method, keepdims, weak)
    x2, R, kept = _rows(x, axis)
    K = x2.shape[-1]
    s = _sorted_rows(x2)
    from ..core.kernels.reduction.run import reduce
    from .._indexing.gather import take_along_axis
    from .._manipulation.joining import stack

    valid = reduce("sum", _uf("logical_not")(_uf("isnan")(x2)), (x2.ndim - 1,), _I64, None, False)
    sub, where = _uf("subtract"), _uf("where")
    lastidx = _uf("maximum")(sub(valid, 1), 0)

    def gather(idx):
        idx = _uf("minimum")(_uf("maximum")(idx, 0), max(K - 1, 0))
        return take_along_axis(s, idx.reshape(idx.shape + (1,)), axis=-1).reshape(idx.shape)

    if method == "median":
        from .meanvar import mean

        h = _uf("floor_divide")(valid, 2)
        odd = _uf("equal")(_uf("remainder")(valid, 2), 1)
        a, b = gather(where(odd, h, sub(h, 1))), gather(h)
        res = where(odd, a, mean(stack([a, b]), axis=0))
        res = res if res.dtype == a.dtype else res.astype(a.dtype)
        qshape = ()
    else:
        qshape = qa.shape
        qdt = qa.dtype if qa.dtype.kind == "f" else np.dtype(np.float64)
        n = valid.astype(qdt)
        outs = []
        for qh in np.asarray(qa, qdt).reshape(-1):
            qv = _upload(np.asarray(qh, qdt))
            vi, integral, fix = _nan_virtual(method, n, qv, qh)
            if integral:
                outs.append(gather(vi))
                continue
            prev = _uf("floor")(vi)
            above = _uf("greater_equal")(vi, sub(valid, 1))
            prev = where(above, -1, prev).astype(qdt)
            nxt = where(above, -1, _uf("add")(_uf("floor")(vi), 1)).astype(qdt)
            below = _uf("less")(vi, 0)
            prev, nxt = where(below, 0, prev).astype(qdt), where(below, 0, nxt).astype(qdt)
            gamma = sub(vi, prev)
            if fix == "midpoint":
                gamma = where(_uf("equal")(_uf("remainder")(vi, 1), 0), 0.0, 0.5).astype(qdt)
            elif fix == "averaged":
                gamma = where(_uf("equal")(gamma, 0), 0.5, 1.0).astype(qdt)
            pi, ni = prev.astype(_I64), nxt.astype(_I64)
            pi = where(_uf("equal")(pi, -1), lastidx, pi)
            ni = where(_uf("equal")(ni, -1), lastidx, ni)
            a, b = gather(pi), gather(ni)
            t, one_minus_t = gamma, sub(1, gamma)
            if weak:    # NumPy: a Python float gamma per row (1 - t in float64, then weak)
                t, one_minus_t = t.astype(x.dtype), one_minus_t.astype(x.dtype)
            diff = sub(b, a)
            low = _uf("add")(a, _uf("multiply")(diff, t))
            high = sub(b, _uf("multiply")(diff, one_minus_t))
            r = where(_uf("greater_equal")(gamma, 0.5), high, low)
            outs.append(r if r.dtype == low.dtype else r.astype(low.dtype))
        res = outs[0].reshape(R) if not qshape else stack(outs).reshape(qshape + R)
    empty = _uf("equal")(valid, 0)
    if R and bool(reduce("any", empty, None, None, None, False).get()) or (not R and bool(empty.get())):
        import warnings

        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)
        res = where(empty, np.nan, res).astype(res.dtype)
    if keepdims:
        res = res.reshape(tuple(qshape) + kept)
    if out is not None:
        _assign(args.out_array(out, func), res)
        return out
    return res
