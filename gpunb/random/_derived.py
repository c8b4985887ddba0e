"""The distributions :class:`~gpunb.random.Generator` derives from its basic draws (NumPy's
``Generator`` methods of the same names): transforms of uniform, normal, exponential and
gamma variates by gpunb's ufuncs, float64. NumPy's parameter checks and messages."""

from __future__ import annotations

import numpy as np

from ..core.ndarray import ndarray


def _u(name):
    """The ufunc ``name``: gpunb's when an argument is a GPU array, NumPy's on plain scalars
    (parameters), so a scalar parameter stays a scalar."""
    def call(*xs):
        if any(isinstance(x, ndarray) for x in xs):
            from .._math.ufuncs import UFUNCS
            return UFUNCS[name](*xs)
        return getattr(np, name)(*xs)[()]
    return call


def _where(c, a, b):
    import gpunb
    return gpunb.where(c, a, b) if isinstance(c, ndarray) else (a if c else b)


def _lt(v, arr):
    return _u("less")(v, 0) if arr else v < 0


def _le(v, arr):
    return _u("less_equal")(v, 0) if arr else v <= 0


def _bad_p(v, arr):      # p <= 0, p > 1 or NaN
    if arr:
        return _u("logical_not")(_u("logical_and")(_u("greater")(v, 0), _u("less_equal")(v, 1)))
    return not (0 < v <= 1)


class Derived:
    """Mixed into :class:`~gpunb.random.Generator`."""

    def _prep(self, values, checks):
        from .generator import _check, _param
        ps = [_param(v, n) for v, n in values]
        for i, bad, message in checks:
            _check([ps[i]], bad, message)
        return ps

    def _shape_of(self, size, ps):
        from .generator import _result_shape
        return _result_shape(size, ps)

    def lognormal(self, mean=0.0, sigma=1.0, size=None):
        """Log-normal samples (NumPy's ``Generator.lognormal``)."""
        m, s = self._prep([(mean, "mean"), (sigma, "sigma")], [(1, _lt, "sigma < 0")])
        return _u("exp")(self.normal(m, s, size))

    def laplace(self, loc=0.0, scale=1.0, size=None):
        """Laplace samples (NumPy's ``Generator.laplace``: the difference of two exponentials)."""
        m, s = self._prep([(loc, "loc"), (scale, "scale")], [(1, _lt, "scale < 0")])
        shape = self._shape_of(size, [m, s])
        d = _u("subtract")(self.standard_exponential(shape), self.standard_exponential(shape))
        return _u("add")(m, _u("multiply")(s, d))

    def logistic(self, loc=0.0, scale=1.0, size=None):
        """Logistic samples (NumPy's ``Generator.logistic``: ``log(expm1(E))``)."""
        m, s = self._prep([(loc, "loc"), (scale, "scale")], [(1, _lt, "scale < 0")])
        e = self.standard_exponential(self._shape_of(size, [m, s]))
        return _u("add")(m, _u("multiply")(s, _u("log")(_u("expm1")(e))))

    def gumbel(self, loc=0.0, scale=1.0, size=None):
        """Gumbel samples (NumPy's ``Generator.gumbel``: ``loc - scale log(E)``)."""
        m, s = self._prep([(loc, "loc"), (scale, "scale")], [(1, _lt, "scale < 0")])
        e = self.standard_exponential(self._shape_of(size, [m, s]))
        return _u("subtract")(m, _u("multiply")(s, _u("log")(e)))

    def weibull(self, a, size=None):
        """Weibull samples (NumPy's ``Generator.weibull``: ``E ** (1/a)``, 0 where a == 0)."""
        (k,) = self._prep([(a, "a")], [(0, _lt, "a < 0")])
        e = self.standard_exponential(self._shape_of(size, [k]))
        if not isinstance(k, ndarray):
            return _u("multiply")(e, 0.0) if k == 0 else _u("power")(e, 1.0 / k)
        return _where(_u("equal")(k, 0), 0.0, _u("power")(e, _u("divide")(1.0, k)))

    def rayleigh(self, scale=1.0, size=None):
        """Rayleigh samples (NumPy's ``Generator.rayleigh``: ``scale sqrt(2 E)``)."""
        (s,) = self._prep([(scale, "scale")], [(0, _lt, "scale < 0")])
        e = self.standard_exponential(self._shape_of(size, [s]))
        return _u("multiply")(s, _u("sqrt")(_u("multiply")(e, 2.0)))

    def pareto(self, a, size=None):
        """Pareto II samples (NumPy's ``Generator.pareto``: ``expm1(E / a)``)."""
        (k,) = self._prep([(a, "a")], [(0, _le, "a <= 0")])
        e = self.standard_exponential(self._shape_of(size, [k]))
        return _u("expm1")(_u("divide")(e, k))

    def power(self, a, size=None):
        """Power-law samples (NumPy's ``Generator.power``: ``(-expm1(-E)) ** (1/a)``)."""
        (k,) = self._prep([(a, "a")], [(0, _le, "a <= 0")])
        e = self.standard_exponential(self._shape_of(size, [k]))
        return _u("power")(_u("negative")(_u("expm1")(_u("negative")(e))), _u("divide")(1.0, k))

    def chisquare(self, df, size=None):
        """Chi-square samples (NumPy's ``Generator.chisquare``: ``2 gamma(df / 2)``)."""
        (d,) = self._prep([(df, "df")], [(0, _le, "df <= 0")])
        return _u("multiply")(self.standard_gamma(_u("multiply")(d, 0.5), size), 2.0)

    def standard_t(self, df, size=None):
        """Student's t samples (NumPy's ``Generator.standard_t``)."""
        (d,) = self._prep([(df, "df")], [(0, _le, "df <= 0")])
        shape = self._shape_of(size, [d])
        half = _u("multiply")(d, 0.5)
        g = self.standard_gamma(half, shape)
        return _u("multiply")(_u("sqrt")(half), _u("divide")(self.standard_normal(shape), _u("sqrt")(g)))

    def f(self, dfnum, dfden, size=None):
        """F samples (NumPy's ``Generator.f``)."""
        a, b = self._prep([(dfnum, "dfnum"), (dfden, "dfden")],
                          [(0, _le, "dfnum <= 0"), (1, _le, "dfden <= 0")])
        shape = self._shape_of(size, [a, b])
        num = _u("divide")(self.chisquare(a, shape), a)
        return _u("divide")(num, _u("divide")(self.chisquare(b, shape), b))

    def geometric(self, p, size=None):
        """Geometric samples, int64 (NumPy's ``Generator.geometric``: ``ceil(-E / log1p(-p))``)."""
        (q,) = self._prep([(p, "p")], [(0, _bad_p, "p <= 0, p > 1 or p contains NaNs")])
        e = self.standard_exponential(self._shape_of(size, [q]))
        x = _u("ceil")(_u("divide")(_u("negative")(e), _u("log1p")(_u("negative")(q))))
        return _u("maximum")(x, 1.0).astype(np.int64)

    def negative_binomial(self, n, p, size=None):
        """Negative binomial samples, int64 (NumPy's ``Generator.negative_binomial``:
        Poisson of a gamma)."""
        m, q = self._prep([(n, "n"), (p, "p")],
                          [(0, _le, "n <= 0"), (1, _bad_p, "p <= 0, p > 1 or p contains NaNs")])
        shape = self._shape_of(size, [m, q])
        lam = _u("multiply")(self.standard_gamma(m, shape),
                             _u("divide")(_u("subtract")(1.0, q), q))
        return self.poisson(lam)

    def triangular(self, left, mode, right, size=None):
        """Triangular samples (NumPy's ``Generator.triangular``: the inverse CDF)."""
        lo, mo, hi = self._prep([(left, "left"), (mode, "mode"), (right, "right")], [])
        from .generator import _check
        _check([_u("subtract")(lo, mo) if isinstance(lo, ndarray) or isinstance(mo, ndarray)
                else lo - mo], lambda v, arr: _u("greater")(v, 0) if arr else v > 0, "left > mode")
        _check([_u("subtract")(mo, hi) if isinstance(mo, ndarray) or isinstance(hi, ndarray)
                else mo - hi], lambda v, arr: _u("greater")(v, 0) if arr else v > 0, "mode > right")
        span = _u("subtract")(hi, lo)
        _check([span], lambda v, arr: _u("equal")(v, 0) if arr else v == 0, "left == right")
        u = self.random(self._shape_of(size, [lo, mo, hi]))
        lspan, rspan = _u("subtract")(mo, lo), _u("subtract")(hi, mo)
        cut = _u("divide")(lspan, span)
        a = _u("add")(lo, _u("sqrt")(_u("multiply")(_u("multiply")(u, span), lspan)))
        b = _u("subtract")(hi, _u("sqrt")(_u("multiply")(_u("multiply")(_u("subtract")(1.0, u), span), rspan)))
        return _where(_u("less_equal")(u, cut), a, b)

    def dirichlet(self, alpha, size=None):
        """Dirichlet samples (NumPy's ``Generator.dirichlet``: normalized gammas)."""
        from .generator import _shape
        from ..core import args
        al = args.as_gpu(alpha, "alpha")
        if al is None:
            host = np.asarray(alpha, np.float64)
            if host.ndim != 1:
                raise ValueError("alpha must be a one-dimensional array")
            if (host < 0).any() or np.isnan(host).any():
                raise ValueError("alpha < 0")
            import gpunb
            al = gpunb.asarray(host)
        elif al.ndim != 1:
            raise ValueError("alpha must be a one-dimensional array")
        shape = _shape(size) + al.shape
        g = self.standard_gamma(al.astype(np.float64), shape)
        import gpunb
        return g / gpunb.sum(g, axis=-1, keepdims=True)

    def binomial(self, n, p, size=None):
        """Binomial samples, int64 (NumPy's ``Generator.binomial``: Knuth's splitting by beta
        order statistics, then inversion)."""
        m, q = self._prep([(n, "n"), (p, "p")], [(0, _lt, "n < 0")])
        from .generator import _check
        _check([q], lambda v, arr: _u("logical_not")(_u("logical_and")(
            _u("greater_equal")(v, 0), _u("less_equal")(v, 1))) if arr else not (0 <= v <= 1),
            "p < 0, p > 1 or p is NaN")
        if not isinstance(m, ndarray):
            m = float(int(m))
        else:
            m = _u("floor")(m)
        return self._per_element("binomial", [m, q], size, np.dtype(np.int64))

    def standard_cauchy(self, size=None):
        """Standard Cauchy samples (NumPy's ``Generator.standard_cauchy``: a ratio of normals)."""
        return _u("divide")(self.standard_normal(size), self.standard_normal(size))

    def wald(self, mean, scale, size=None):
        """Wald (inverse Gaussian) samples (NumPy's ``Generator.wald``: Michael, Schucany and
        Haas' transform of a normal, accepted against a uniform)."""
        m, s = self._prep([(mean, "mean"), (scale, "scale")],
                          [(0, _le, "mean <= 0"), (1, _le, "scale <= 0")])
        shape = self._shape_of(size, [m, s])
        y = self.standard_normal(shape)
        y = _u("multiply")(m, _u("multiply")(y, y))
        mu_2l = _u("divide")(m, _u("multiply")(s, 2.0))
        root = _u("sqrt")(_u("add")(_u("multiply")(_u("multiply")(s, 4.0), y), _u("multiply")(y, y)))
        x = _u("add")(m, _u("multiply")(mu_2l, _u("subtract")(y, root)))
        u = self.random(shape)
        return _where(_u("less_equal")(u, _u("divide")(m, _u("add")(m, x))), x,
                      _u("divide")(_u("multiply")(m, m), x))

    def noncentral_chisquare(self, df, nonc, size=None):
        """Noncentral chi-square samples (NumPy's ``Generator.noncentral_chisquare``: a
        chi-square of ``df - 1`` plus a shifted normal's square when ``df > 1``, else a
        chi-square of ``df`` plus twice a Poisson count; NaN for a NaN ``nonc``)."""
        d, c = self._prep([(df, "df"), (nonc, "nonc")], [(0, _le, "df <= 0"), (1, _lt, "nonc < 0")])
        shape = self._shape_of(size, [d, c])
        import gpunb
        d_arr = _u("add")(gpunb.zeros(shape), d)
        c_arr = _u("add")(gpunb.zeros(shape), c)
        big = _u("greater")(d_arr, 1)
        n = _u("add")(self.standard_normal(shape), _u("sqrt")(c_arr))
        a = _u("add")(self.chisquare(_where(big, _u("subtract")(d_arr, 1.0), 1.0)), _u("multiply")(n, n))
        i = self.poisson(_u("divide")(c_arr, 2.0))
        b = self.chisquare(_u("add")(d_arr, _u("multiply")(i, 2)))
        r = _where(big, a, b)
        r = _where(_u("equal")(c_arr, 0), self.chisquare(d_arr), r)
        return _where(_u("isnan")(c_arr), c_arr, r)

    def noncentral_f(self, dfnum, dfden, nonc, size=None):
        """Noncentral F samples (NumPy's ``Generator.noncentral_f``)."""
        a, b, c = self._prep([(dfnum, "dfnum"), (dfden, "dfden"), (nonc, "nonc")],
                             [(0, _le, "dfnum <= 0"), (1, _le, "dfden <= 0"), (2, _lt, "nonc < 0")])
        shape = self._shape_of(size, [a, b, c])
        t = _u("multiply")(self.noncentral_chisquare(a, c, shape), b)
        return _u("divide")(t, _u("multiply")(self.chisquare(b, shape), a))

    def multivariate_normal(self, mean, cov, size=None, check_valid="warn", tol=1e-8, *,
                            method="svd"):
        """Multivariate normal samples (NumPy's ``Generator.multivariate_normal``: standard
        normals times a factor of ``cov`` from its SVD, eigh or Cholesky on the GPU; NumPy's
        checks, the positive-semidefinite one included)."""
        import warnings

        import gpunb
        from .generator import _shape
        if method not in {"svd", "eigh", "cholesky"}:
            raise ValueError("method must be one of {'eigh', 'svd', 'cholesky'}")
        mean = mean if isinstance(mean, ndarray) else np.asarray(mean, float)
        cov = cov if isinstance(cov, ndarray) else np.asarray(cov, float)
        if mean.ndim != 1:
            raise ValueError("mean must be 1 dimensional")
        if cov.ndim != 2 or cov.shape[0] != cov.shape[1]:
            raise ValueError("cov must be 2 dimensional and square")
        if mean.shape[0] != cov.shape[0]:
            raise ValueError("mean and cov must have same length")
        mean, cov = gpunb.asarray(mean), gpunb.asarray(cov)
        final = _shape(size) + mean.shape
        x = self.standard_normal(final).reshape(-1, mean.shape[0])
        cov = cov.astype(np.float64)
        if method == "svd":
            u, s, vh = gpunb.linalg.svd(cov)
        elif method == "eigh":
            s, u = gpunb.linalg.eigh(cov)
        else:
            factor = gpunb.linalg.cholesky(cov)
        if check_valid != "ignore" and method != "cholesky":
            if check_valid not in ("warn", "raise"):
                raise ValueError("check_valid must equal 'warn', 'raise', or 'ignore'")
            psd = (bool(gpunb.allclose((vh.T * s) @ vh, cov, rtol=tol, atol=tol)) if method == "svd"
                   else not bool(gpunb.any(s < -tol)))
            if not psd:
                if check_valid == "warn":
                    warnings.warn("covariance is not symmetric positive-semidefinite.",
                                  RuntimeWarning, stacklevel=2)
                else:
                    raise ValueError("covariance is not symmetric positive-semidefinite.")
        if method == "eigh":
            factor = u * gpunb.sqrt(gpunb.abs(s))
        elif method == "svd":
            factor = u * gpunb.sqrt(s)
        return (mean + x @ factor.T).reshape(final)
