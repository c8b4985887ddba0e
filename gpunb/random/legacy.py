"""The legacy API (NumPy's ``numpy.random.RandomState`` and the ``numpy.random.<name>``
module functions on a global instance), CuPy-style.

The stream is gpunb's :class:`~gpunb.random.Philox4x3210` (``default_rng``'s), not NumPy's
MT19937: ``gpunb.random.seed(0); rand(3)`` does not give ``numpy.random.seed(0);
numpy.random.rand(3)``'s values (CuPy's legacy functions do not either). ``get_state``
returns its state dictionary. Each method calls the
:class:`~gpunb.random.Generator` method that NumPy's legacy one corresponds to; names,
signatures, defaults and errors are the legacy ones.
"""

from __future__ import annotations

import warnings

import numpy as np

from .bitgen import Philox4x3210
from .generator import Generator


class RandomState:
    """NumPy's ``numpy.random.RandomState`` on gpunb's Philox4x3210 (not MT19937; see the
    module)."""

    def __init__(self, seed=None):
        self.seed(seed)

    def seed(self, seed=None) -> None:
        """Reseed (``Philox4x3210(seed)``; None: fresh entropy)."""
        if isinstance(seed, np.ndarray) and seed.ndim == 0:
            seed = int(seed)
        self._gen = Generator(Philox4x3210(seed))

    def get_state(self, legacy: bool = True) -> dict:
        """The state dictionary (NumPy's ``Philox.state`` form)."""
        return self._gen.bit_generator.state

    def set_state(self, state) -> None:
        """Set the state from :meth:`get_state`'s dictionary."""
        self._gen.bit_generator.state = state

    def __repr__(self) -> str:
        return "RandomState(Philox4x3210)"

    # -- uniform floats and integers --------------------------------------------------------
    def random_sample(self, size=None):
        """Floats in [0, 1) (NumPy's ``random_sample``)."""
        return self._gen.random(size)

    random = ranf = sample = random_sample

    def rand(self, *args):
        """Floats in [0, 1) of shape ``args`` (NumPy's ``rand``)."""
        return self._gen.random(args or None)

    def randn(self, *args):
        """Standard normals of shape ``args`` (NumPy's ``randn``)."""
        return self._gen.standard_normal(args or None)

    def randint(self, low, high=None, size=None, dtype=int):
        """Integers in [low, high) (NumPy's ``randint``)."""
        dt = np.dtype(dtype)
        if dt.kind not in "biu":
            raise TypeError(f"Unsupported dtype {dt!r} for randint")
        return self._gen.integers(low, high, size, dt)

    def random_integers(self, low, high=None, size=None):
        """Integers in [low, high] (NumPy's deprecated ``random_integers``)."""
        if high is None:
            warnings.warn("This function is deprecated. Please call randint(1, {low} + 1) "
                          "instead".format(low=low), DeprecationWarning, stacklevel=2)
            low, high = 1, low
        else:
            warnings.warn("This function is deprecated. Please call randint({low}, {high} + 1) "
                          "instead".format(low=low, high=high), DeprecationWarning, stacklevel=2)
        return self._gen.integers(low, high, size, endpoint=True)

    def bytes(self, length):
        """Random bytes (NumPy's ``bytes``)."""
        return self._gen.bytes(length)

    def uniform(self, low=0.0, high=1.0, size=None):
        return self._gen.uniform(low, high, size)

    # -- continuous --------------------------------------------------------------------------
    def standard_normal(self, size=None):
        return self._gen.standard_normal(size)

    def normal(self, loc=0.0, scale=1.0, size=None):
        return self._gen.normal(loc, scale, size)

    def standard_exponential(self, size=None):
        return self._gen.standard_exponential(size)

    def exponential(self, scale=1.0, size=None):
        return self._gen.exponential(scale, size)

    def standard_gamma(self, shape, size=None):
        return self._gen.standard_gamma(shape, size)

    def gamma(self, shape, scale=1.0, size=None):
        return self._gen.gamma(shape, scale, size)

    def beta(self, a, b, size=None):
        return self._gen.beta(a, b, size)

    def lognormal(self, mean=0.0, sigma=1.0, size=None):
        return self._gen.lognormal(mean, sigma, size)

    def laplace(self, loc=0.0, scale=1.0, size=None):
        return self._gen.laplace(loc, scale, size)

    def logistic(self, loc=0.0, scale=1.0, size=None):
        return self._gen.logistic(loc, scale, size)

    def gumbel(self, loc=0.0, scale=1.0, size=None):
        return self._gen.gumbel(loc, scale, size)

    def weibull(self, a, size=None):
        return self._gen.weibull(a, size)

    def rayleigh(self, scale=1.0, size=None):
        return self._gen.rayleigh(scale, size)

    def pareto(self, a, size=None):
        return self._gen.pareto(a, size)

    def power(self, a, size=None):
        return self._gen.power(a, size)

    def chisquare(self, df, size=None):
        return self._gen.chisquare(df, size)

    def standard_t(self, df, size=None):
        return self._gen.standard_t(df, size)

    def f(self, dfnum, dfden, size=None):
        return self._gen.f(dfnum, dfden, size)

    def triangular(self, left, mode, right, size=None):
        return self._gen.triangular(left, mode, right, size)

    def dirichlet(self, alpha, size=None):
        return self._gen.dirichlet(alpha, size)

    def standard_cauchy(self, size=None):
        return self._gen.standard_cauchy(size)

    def wald(self, mean, scale, size=None):
        return self._gen.wald(mean, scale, size)

    def noncentral_chisquare(self, df, nonc, size=None):
        return self._gen.noncentral_chisquare(df, nonc, size)

    def noncentral_f(self, dfnum, dfden, nonc, size=None):
        return self._gen.noncentral_f(dfnum, dfden, nonc, size)

    def multivariate_normal(self, mean, cov, size=None, check_valid="warn", tol=1e-8):
        return self._gen.multivariate_normal(mean, cov, size, check_valid, tol)

    def vonmises(self, mu, kappa, size=None):
        return self._gen.vonmises(mu, kappa, size)

    def multinomial(self, n, pvals, size=None):
        """Multinomial samples (NumPy's legacy ``multinomial``: an int ``n``, 1-d ``pvals``)."""
        from ._more import multinomial
        return multinomial(self._gen, n, pvals, size, legacy=True)

    # -- discrete ----------------------------------------------------------------------------
    def poisson(self, lam=1.0, size=None):
        return self._gen.poisson(lam, size)

    def binomial(self, n, p, size=None):
        return self._gen.binomial(n, p, size)

    def geometric(self, p, size=None):
        return self._gen.geometric(p, size)

    def negative_binomial(self, n, p, size=None):
        return self._gen.negative_binomial(n, p, size)

    def zipf(self, a, size=None):
        return self._gen.zipf(a, size)

    def logseries(self, p, size=None):
        return self._gen.logseries(p, size)

    def hypergeometric(self, ngood, nbad, nsample, size=None):
        """Hypergeometric samples (NumPy's legacy checks: ``nsample >= 1``, no ``10**9``
        bound on ``ngood`` and ``nbad``)."""
        from ._more import hypergeometric
        return hypergeometric(self._gen, ngood, nbad, nsample, size, legacy=True)

    # -- permutations ------------------------------------------------------------------------
    def choice(self, a, size=None, replace=True, p=None):
        return self._gen.choice(a, size, replace, p)

    def permutation(self, x):
        return self._gen.permutation(x)

    def shuffle(self, x) -> None:
        self._gen.shuffle(x)


_global: RandomState | None = None


def _rs() -> RandomState:
    global _global
    if _global is None:
        _global = RandomState()
    return _global


def seed(seed=None) -> None:
    """Reseed the global RandomState (NumPy's ``numpy.random.seed``; Philox's stream)."""
    _rs().seed(seed)


def get_state(legacy: bool = True) -> dict:
    """The global RandomState's Philox state (NumPy's ``numpy.random.get_state``)."""
    return _rs().get_state(legacy)


def set_state(state) -> None:
    """Set the global RandomState's state (NumPy's ``numpy.random.set_state``)."""
    _rs().set_state(state)


def _module_function(name):
    def f(*args, **kwargs):
        return getattr(_rs(), name)(*args, **kwargs)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"``numpy.random.{name}`` on the global :class:`RandomState` (gpunb's Philox "
                 "stream, not MT19937).")
    return f


for _name in ("rand", "randn", "randint", "random_integers", "random_sample", "random", "ranf",
              "sample", "uniform", "normal", "standard_normal", "exponential",
              "standard_exponential", "gamma", "standard_gamma", "beta", "poisson", "binomial",
              "choice", "permutation", "shuffle", "bytes", "lognormal", "laplace", "logistic",
              "geometric", "chisquare", "standard_t", "weibull", "rayleigh", "gumbel", "pareto",
              "power", "triangular", "negative_binomial", "f", "dirichlet", "standard_cauchy",
              "wald", "noncentral_chisquare", "noncentral_f", "multivariate_normal", "vonmises",
              "zipf", "logseries", "hypergeometric", "multinomial"):
    globals()[_name] = _module_function(_name)
del _name
