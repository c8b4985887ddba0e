"""gpunb.random's remaining distributions: von Mises, Zipf, logarithmic series, hypergeometric,
multinomial, multivariate hypergeometric, and ``Generator.permuted``.

CPU: NVRTC compiles every new kernel; NumPy's errors (type and message) for bad parameters,
Generator's and RandomState's; NumPy's signatures; NumPy's output shapes (broadcasting,
``size``) by the host-side shape functions and, with the kernel launch and the allocation
replaced by recorders, by the methods themselves (dtype, shape, the parameters a kernel
gets). GPU: chi-square tests against exact pmfs (``math.comb`` / ``lgamma``) and two-sample
Kolmogorov-Smirnov tests against NumPy's own draws, with p-values computed here (no scipy);
moments; broadcasting of array parameters; the stream's exact advance; reproducibility and
independence; the legacy API.
"""

import inspect
import math

import numpy as np
import pytest

import gpunb as gp
from gpunb.core.build.compiler import compile_program
from gpunb.core.kernels.random import codegen as cg
from gpunb.core.kernels.random import dists
from gpunb.random import _more
from tests.data import fake

gpu = pytest.mark.gpu
N = 1 << 20
NEW = ("vonmises", "zipf", "logseries", "hypergeometric", "multinomial")


# -- CPU: kernels compile ----------------------------------------------------------------------

@pytest.mark.parametrize("what", dists.WHATS)
def test_kernels_compile(what):
    k = cg.RandomKernel("dist", what, dists.DTYPES[what])
    src = cg.render(k)
    assert "wstream" in src and k.name in src
    prog = compile_program(src, (), "sm_90")
    assert k.name.encode() in prog.cubin


# -- CPU: NumPy's errors and signatures ----------------------------------------------------------

ERRORS = [
    ("vonmises", (0, -1), {}), ("vonmises", (0, -0.0), {}), ("vonmises", (0, [1, -1]), {}),
    ("vonmises", ([0, 1], [1, 2, 3]), {}), ("vonmises", (0, [1, 2]), {"size": 3}),
    ("vonmises", (0, [1, 2]), {"size": (1,)}), ("vonmises", (0, 1), {"size": -1}),
    ("zipf", (1,), {}), ("zipf", (0.5,), {}), ("zipf", (np.nan,), {}), ("zipf", ([2, 1],), {}),
    ("zipf", ([2, np.nan],), {}), ("zipf", ([2, 3],), {"size": (2, 3)}),
    ("logseries", (1,), {}), ("logseries", (-0.1,), {}), ("logseries", (np.nan,), {}),
    ("logseries", ([0.5, 1.0],), {}),
    ("hypergeometric", (-1, 5, 3), {}), ("hypergeometric", (5, -1, 3), {}),
    ("hypergeometric", (5, 5, -1), {}), ("hypergeometric", (5, 5, 11), {}),
    ("hypergeometric", (-5, 5, 3), {}), ("hypergeometric", (10 ** 9, 5, 3), {}),
    ("hypergeometric", (5, 10 ** 9, 3), {}), ("hypergeometric", ([5, -1], 5, 3), {}),
    ("hypergeometric", ([5, 5], 5, [3, 11]), {}), ("hypergeometric", ([10 ** 9], 5, 3), {}),
    ("hypergeometric", (5, [5, -2], 3), {}), ("hypergeometric", ([5, 6], 5, 3), {"size": 1}),
    ("multinomial", (5, [0.6, 0.6, 0.0]), {}), ("multinomial", (-1, [0.5, 0.5]), {}),
    ("multinomial", (5, 0.5), {}), ("multinomial", (5, []), {}), ("multinomial", (5, [[]]), {}),
    ("multinomial", (5, [-0.1, 1.1]), {}), ("multinomial", (5, [np.nan, 1]), {}),
    ("multinomial", (5, [[0.6, 0.6, 0.0], [0.1, 0.1, 0.8]]), {}),
    ("multinomial", ([5, -1], [0.5, 0.5]), {}),
    ("multinomial", ([5, 6], [0.5, 0.5]), {"size": (3, 1)}),
    ("multinomial", ([5, 6], [0.5, 0.5]), {"size": 3}),
    ("multinomial", ([5, 6], [[0.5, 0.5]] * 3), {}),
    ("multinomial", (5, [0.5, 0.5]), {"size": -2}),
    ("multivariate_hypergeometric", ([3, 4], 8), {}),
    ("multivariate_hypergeometric", ([3, -4], 2), {}),
    ("multivariate_hypergeometric", ([[3, 4]], 2), {}),
    ("multivariate_hypergeometric", ([3.0, 4], 2), {}),
    ("multivariate_hypergeometric", ([True, False], 1), {}),
    ("multivariate_hypergeometric", ([2 ** 63], 2), {}),
    ("multivariate_hypergeometric", ([[1], [2, 3]], 2), {}),
    ("multivariate_hypergeometric", ([3, 4], -1), {}),
    ("multivariate_hypergeometric", ([3, 4], 2.5), {}),
    ("multivariate_hypergeometric", ([3, 4], 2 ** 63), {}),
    ("multivariate_hypergeometric", ([3, 4], 2), {"method": "x"}),
    ("multivariate_hypergeometric", ([10 ** 9, 4], 2), {}),
    ("multivariate_hypergeometric", ([2 ** 62, 2 ** 62], 2), {"method": "count"}),
    ("multivariate_hypergeometric", ([2 ** 61, 2 ** 61], 2), {"method": "count"}),
    ("multivariate_hypergeometric", ([], 1), {}),
]

LEGACY_ERRORS = [
    ("vonmises", (0, -1), {}), ("zipf", (1,), {}), ("zipf", ([2, 1],), {}),
    ("logseries", (1,), {}), ("logseries", ([0.5, -1.0],), {}),
    ("hypergeometric", (-1, 5, 3), {}), ("hypergeometric", (5, -1, 3), {}),
    ("hypergeometric", (5, 5, 0), {}), ("hypergeometric", (5, 5, -1), {}),
    ("hypergeometric", (5, [5, 6], [0, 1]), {}), ("hypergeometric", (5, 5, 11), {}),
    ("hypergeometric", ([5, -1], 5, 3), {}),
    ("multinomial", (5, [0.6, 0.6, 0.0]), {}), ("multinomial", (-1, [0.5, 0.5]), {}),
    ("multinomial", (5, 0.5), {}), ("multinomial", (5, [-0.1, 1.1]), {}),
    ("multinomial", (5, [[0.5, 0.5]]), {}), ("multinomial", ([5, 6], [0.5, 0.5]), {}),
    ("multinomial", (None, [0.5, 0.5]), {}),
]


def _same_error(call_numpy, call_gpunb):
    with pytest.raises(Exception) as want:
        call_numpy()
    with pytest.raises(type(want.value)) as got:
        call_gpunb()
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("name,a,kw", ERRORS, ids=lambda v: str(v))
def test_errors_match_numpy(name, a, kw):
    _same_error(lambda: getattr(np.random.Generator(np.random.Philox(0)), name)(*a, **kw),
                lambda: getattr(gp.random.default_rng(0), name)(*a, **kw))


@pytest.mark.parametrize("name,a,kw", LEGACY_ERRORS, ids=lambda v: str(v))
def test_legacy_errors_match_numpy(name, a, kw):
    _same_error(lambda: getattr(np.random.RandomState(0), name)(*a, **kw),
                lambda: getattr(gp.random.RandomState(0), name)(*a, **kw))
    _same_error(lambda: getattr(np.random, name)(*a, **kw),
                lambda: getattr(gp.random, name)(*a, **kw))


def test_permuted_errors():
    g, ng = gp.random.default_rng(0), np.random.default_rng(0)
    cases = [((3,), "int64", {"axis": 1}), ((2, 3), "int64", {"axis": -3}),
             ((), "float64", {}), ((), "float64", {"axis": 0}),
             ((3,), "float64", {"out": ((4,), "float64")}),
             ((3,), "float64", {"out": ((3,), "int64")}),
             ((2, 3), "int32", {"out": ((2, 3), "int16"), "axis": 1})]
    for shape, dt, kw in cases:
        nkw, gkw = dict(kw), dict(kw)
        if "out" in kw:
            nkw["out"] = np.zeros(*kw["out"])
            gkw["out"] = fake(*kw["out"])
        _same_error(lambda: ng.permuted(np.zeros(shape, dt), **nkw),
                    lambda: g.permuted(fake(shape, dt), **gkw))
    with pytest.raises(TypeError, match="out must be a gpunb.ndarray"):
        g.permuted(fake((3,), "int64"), out=np.zeros(3, np.int64))
    with pytest.raises(TypeError):
        g.permuted(fake((3,), "int64"), 0)          # axis is keyword-only, as NumPy's


def test_signatures_are_numpys():
    for name in NEW + ("multivariate_hypergeometric", "permuted"):
        assert inspect.signature(getattr(gp.random.Generator, name)) == \
            inspect.signature(getattr(np.random.Generator, name)), name
    for name in NEW:
        assert inspect.signature(getattr(gp.random.RandomState, name)) == \
            inspect.signature(getattr(np.random.RandomState, name)), name
        assert name in gp.random.__all__ and callable(getattr(gp.random, name))


# -- CPU: output shapes ------------------------------------------------------------------------

SHAPE_CASES = [  # (parameter shapes, size)
    ([()], None), ([()], 5), ([()], (2, 3)), ([(4,)], None), ([(4,)], (3, 4)),
    ([(2, 1), (3,)], None), ([(2, 1), (3,)], (5, 2, 3)), ([(), (3,)], (2, 3)), ([(1,)], (0,)),
    ([(2,), (3,)], None), ([(2,)], 3), ([(2,)], (1,)), ([(2, 1), (3,)], (1, 3)), ([(), ()], ()),
]


@pytest.mark.parametrize("shapes,size", SHAPE_CASES, ids=str)
def test_draw_shape_is_numpys(shapes, size):
    params = [np.full(s, 0.5) for s in shapes]
    vm = lambda: np.random.default_rng(0).vonmises(*(params + [np.full((), 1.0)])[:2], size=size)  # noqa: E731
    try:
        want = np.shape(vm())
    except ValueError as e:
        with pytest.raises(ValueError) as got:
            _more.draw_shape(size, (shapes + [()])[:2])
        assert str(got.value) == str(e)
        return
    assert _more.draw_shape(size, (shapes + [()])[:2]) == want


MULTINOMIAL_SHAPES = [  # (n shape, pvals shape, size)
    ((), (3,), None), ((), (3,), 4), ((), (3,), (2, 5)), ((2,), (3,), None), ((2,), (3,), (4, 2)),
    ((), (2, 3), None), ((2, 1), (4, 3), None), ((2, 1), (4, 3), (2, 4)), ((), (1, 3), 5),
    ((), (2, 3), (3, 2)), ((2,), (3,), (2, 1)), ((3,), (3,), 3), ((), (3,), 0),
]


@pytest.mark.parametrize("ns,ps,size", MULTINOMIAL_SHAPES, ids=str)
def test_multinomial_shape_is_numpys(ns, ps, size):
    n, p = np.full(ns, 5), np.full(ps, 1.0 / ps[-1])
    vector = len(ns) > 0 or len(ps) > 1
    try:
        want = np.random.default_rng(0).multinomial(n, p, size=size).shape
    except ValueError as e:
        with pytest.raises(ValueError) as got:
            _more.multinomial_shape(ns, ps, size, vector)
        assert str(got.value) == str(e)
        return
    assert _more.multinomial_shape(ns, ps, size, vector) == want


@pytest.fixture
def recorded(monkeypatch):
    """Draws without a GPU: allocations are fake arrays, uploads fake arrays remembered with
    their host values, and kernel launches are recorded as (kind, what, shape, dtype,
    parameters as host values or floats, extra arguments)."""
    from gpunb.core.kernels.random import run
    from gpunb.core.ndarray import ndarray
    hosts, calls = {}, []

    def empty(shape, dtype):
        return fake(shape, dtype)

    def asarray(a):
        h = np.asarray(a)
        x = fake(h.shape, h.dtype)
        hosts[id(x)] = h
        return x

    def value(p):
        return hosts.get(id(p), "gpu") if isinstance(p, ndarray) else p

    monkeypatch.setattr(ndarray, "_empty", staticmethod(empty))
    monkeypatch.setattr(gp, "asarray", asarray)
    monkeypatch.setattr(run, "fill_per_element", lambda state, out, what, params: calls.append(
        ("element", what, out.shape, out.dtype, [value(p) for p in params], None)))
    monkeypatch.setattr(run, "fill_rows", lambda state, out, what, arrays, d, **kw: calls.append(
        ("rows", what, out.shape, out.dtype, [value(p) for p in arrays], dict(kw, d=d))))
    return calls


def test_draws_without_gpu(recorded):
    g = gp.random.default_rng(0)
    g.vonmises(0.5, 2.0, size=(3, 4))
    g.zipf([[2.0, 3.0]] * 5, size=(5, 2))     # (a GPU parameter of another shape is broadcast
    g.logseries(0.25)                          # on the GPU: not here)
    g.hypergeometric(7.9, [3, 4], 6)
    gp.random.RandomState(1).hypergeometric(2 * 10 ** 9, 5, 3, size=7)
    g.multinomial(10, [0.2, 0.3, 0.5], size=4)
    gp.random.RandomState(1).multinomial(10.7, (0.5, 0.5))
    g.multivariate_hypergeometric([16, 8, 4], 6, size=(2, 5), method="count")
    (k0, w0, s0, d0, p0, _), (k1, w1, s1, d1, p1, _), (k2, w2, s2, d2, p2, _) = recorded[:3]
    assert (k0, w0, s0, d0, p0) == ("element", "vonmises", (3, 4), np.float64, [0.5, 2.0])
    assert (w1, s1, d1) == ("zipf", (5, 2), np.int64)
    np.testing.assert_array_equal(p1[0], [[2.0, 3.0]] * 5)
    assert p1[0].dtype == np.float64
    assert (w2, s2, d2, p2) == ("logseries", (), np.int64, [0.25])
    _, w, s, d, p, _ = recorded[3]
    assert (w, s, d, p[0], p[2]) == ("hypergeometric", (2,), np.int64, 7.0, 6.0)
    np.testing.assert_array_equal(p[1], [3.0, 4.0])
    _, w, s, d, p, _ = recorded[4]
    assert (s, p) == ((7,), [2e9, 5.0, 3.0])
    _, w, s, d, p, kw = recorded[5]
    assert (w, s, d, p[0], kw) == ("multinomial", (4, 3), np.int64, None,
                                   {"d": 3, "off": 0, "f": (10.0, 0.0, 0.0, 0.0)})
    np.testing.assert_array_equal(p[1], [0.2, 0.3, 0.5])
    _, w, s, d, p, kw = recorded[6]
    assert (s, kw["f"][0]) == ((2,), 10.0)
    _, w, s, d, p, kw = recorded[7]
    assert (w, s, d, kw) == ("mvhg", (2, 5, 3), np.int64, {"d": 3, "off": 28, "rng": 6})
    np.testing.assert_array_equal(p[0], [16, 8, 4])
    assert p[0].dtype == np.int64
    assert len(recorded) == 8
    g.multivariate_hypergeometric([], 0)          # nothing to draw: no launch
    g.multinomial(3, [1.0], size=0)
    assert len(recorded) == 8


# -- GPU: statistics, against exact pmfs and NumPy's draws (p-values computed here) -----------------

def _chi2_sf(stat, dof):
    """P(chi-square with ``dof`` degrees of freedom > ``stat``): the regularized upper
    incomplete gamma function (series below ``a + 1``, Lentz's continued fraction above)."""
    a, x = dof / 2.0, stat / 2.0
    if x <= 0:
        return 1.0
    front = math.exp(-x + a * math.log(x) - math.lgamma(a))
    if x < a + 1:
        term = total = 1.0 / a
        ap = a
        while abs(term) > abs(total) * 1e-16:
            ap += 1
            term *= x / ap
            total += term
        return max(0.0, 1.0 - front * total)
    b, c, d = x + 1 - a, 1e300, 1.0 / (x + 1 - a)
    h = d
    for i in range(1, 100_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
        c = b + an / c
        c = c if abs(c) > 1e-300 else 1e-300
        h *= d * c
        if abs(d * c - 1) < 1e-16:
            break
    return front * h


def _chisquare(x, pmf, lo, hi):
    """Pearson's test of integer samples ``x`` against ``pmf(k)`` over ``lo <= k < hi``: the
    values expected 20 times or more are cells, everything else (out of range included) one
    more cell, merged into the last one when expected fewer than 5 times. The p-value."""
    x = np.asarray(x).ravel()
    n = x.size
    ks = np.arange(lo, hi)
    exp = np.array([pmf(int(k)) for k in ks]) * n
    inside = (x >= lo) & (x < hi)
    obs = np.bincount(x[inside] - lo, minlength=hi - lo)[:hi - lo]
    keep = exp >= 20
    o, e = list(obs[keep].astype(float)), list(exp[keep])
    assert len(o) >= 2
    rest_o, rest_e = n - sum(o), n - sum(e)
    if rest_e >= 5:
        o.append(rest_o)
        e.append(rest_e)
    else:
        o[-1] += rest_o
        e[-1] += rest_e
    o, e = np.array(o), np.array(e)
    return _chi2_sf(float(((o - e) ** 2 / e).sum()), len(o) - 1)


def _ks2(x, y):
    """The two-sample Kolmogorov-Smirnov test's p-value (the asymptotic distribution)."""
    x, y = np.sort(np.ravel(x)), np.sort(np.ravel(y))
    both = np.concatenate([x, y])
    d = np.abs(np.searchsorted(x, both, "right") / x.size
               - np.searchsorted(y, both, "right") / y.size).max()
    en = math.sqrt(x.size * y.size / (x.size + y.size))
    lam = (en + 0.12 + 0.11 / en) * d
    p = 2 * sum((-1) ** (k - 1) * math.exp(-2 * k * k * lam * lam) for k in range(1, 101))
    return min(1.0, max(0.0, p))


def test_p_values_are_right():
    # the helpers the GPU tests rely on, against known values and NumPy draws
    assert abs(_chi2_sf(3.841458820694124, 1) - 0.05) < 1e-9
    assert abs(_chi2_sf(124.34211340400407, 100) - 0.05) < 1e-9
    assert abs(_chi2_sf(0.5, 10) - 0.999993388289439) < 1e-12
    assert abs(_chi2_sf(30.0, 3) / 1.3800570312932553e-06 - 1) < 1e-9
    rng = np.random.default_rng(0)
    x = rng.binomial(30, 0.4, 100_000)
    pmf = lambda k: math.comb(30, k) * 0.4 ** k * 0.6 ** (30 - k)  # noqa: E731
    assert _chisquare(x, pmf, 0, 31) > 1e-3
    assert _chisquare(x, lambda k: math.comb(30, k) * 0.41 ** k * 0.59 ** (30 - k), 0, 31) < 1e-6
    assert _chisquare(np.minimum(x, 18), pmf, 0, 31) < 1e-6     # a cut tail is caught
    assert _ks2(rng.normal(size=50_000), rng.normal(size=60_000)) > 1e-3
    assert _ks2(rng.normal(size=50_000), rng.normal(0.05, size=60_000)) < 1e-6


def _hyper_pmf(good, bad, n):
    lc = lambda a, k: math.lgamma(a + 1) - math.lgamma(k + 1) - math.lgamma(a - k + 1)  # noqa: E731
    return lambda k: (math.exp(lc(good, k) + lc(bad, n - k) - lc(good + bad, n))
                      if 0 <= k <= good and 0 <= n - k <= bad else 0.0)


def _zeta(a, K=20_000):
    """Riemann's zeta by Euler-Maclaurin after ``K`` terms."""
    return (math.fsum(np.arange(1, K, dtype=np.float64) ** -a) + K ** (1 - a) / (a - 1)
            + 0.5 * K ** -a + a * K ** (-a - 1) / 12)


def test_exact_pmf_helpers():
    assert abs(_zeta(2.0) - math.pi ** 2 / 6) < 1e-12
    assert abs(_zeta(4.0) - math.pi ** 4 / 90) < 1e-12
    f = _hyper_pmf(7, 5, 6)
    assert abs(sum(f(k) for k in range(7)) - 1) < 1e-12
    assert abs(f(3) - math.comb(7, 3) * math.comb(5, 3) / math.comb(12, 6)) < 1e-12


VONMISES = [(0.0, 1e-9), (1.0, 3e-6), (0.5, 0.5), (-2.0, 4.0), (3.0, 50.0), (3.1, 2e6), (-3.0, 1.0)]


@gpu
@pytest.mark.parametrize("mu,kappa", VONMISES, ids=str)
def test_vonmises(mu, kappa):
    x = gp.random.default_rng(41).vonmises(mu, kappa, N)
    assert x.shape == (N,) and x.dtype == np.float64
    h = x.get()
    assert (np.abs(h) <= np.pi).all()
    assert _ks2(h, np.random.default_rng(41).vonmises(mu, kappa, N)) > 1e-4


@gpu
def test_vonmises_array_parameters():
    g = gp.random.default_rng(42)
    mu, kappa = np.array([-1.0, 0.0, 2.5]), np.array([[0.3], [8.0]])
    x = g.vonmises(gp.asarray(mu), gp.asarray(kappa), (N // 6, 2, 3)).get()
    assert x.shape == (N // 6, 2, 3)
    ref = np.random.default_rng(0).vonmises(mu, kappa, (N // 6, 2, 3))
    for i in range(2):
        for j in range(3):
            assert _ks2(x[:, i, j], ref[:, i, j]) > 1e-4
    assert np.isnan(g.vonmises(0.0, np.nan, 4).get()).all()


@gpu
@pytest.mark.parametrize("a", [1.3, 2.0, 3.5, 10.0])
def test_zipf(a):
    x = gp.random.default_rng(43).zipf(a, N)
    assert x.dtype == np.int64 and x.shape == (N,)
    h = x.get()
    assert h.min() >= 1
    z = _zeta(a)
    assert _chisquare(h, lambda k: k ** -a / z, 1, 2000) > 1e-4
    assert (gp.random.default_rng(1).zipf(2000.0, 1000).get() == 1).all()


@gpu
@pytest.mark.parametrize("p", [1e-3, 0.3, 0.9, 0.999])
def test_logseries(p):
    x = gp.random.default_rng(44).logseries(p, N)
    assert x.dtype == np.int64
    h = x.get()
    assert h.min() >= 1
    assert _chisquare(h, lambda k: -p ** k / (k * math.log1p(-p)), 1, 5000) > 1e-4
    assert (gp.random.default_rng(1).logseries(0.0, 1000).get() == 1).all()


HYPER = [(5, 5, 3), (10, 5, 7), (15, 15, 15), (200, 800, 300), (800, 200, 300), (50, 30, 70),
         (30, 50, 70), (3, 1000, 500), (40, 60, 99), (10 ** 6, 2 * 10 ** 6, 10 ** 5),
         (10 ** 8, 3 * 10 ** 8, 10 ** 6)]


@gpu
@pytest.mark.parametrize("good,bad,n", HYPER, ids=str)
def test_hypergeometric(good, bad, n):
    x = gp.random.default_rng(45).hypergeometric(good, bad, n, N)
    assert x.dtype == np.int64 and x.shape == (N,)
    h = x.get()
    t = good + bad
    m, sd = n * good / t, math.sqrt(n * good / t * bad / t * (t - n) / (t - 1))
    lo, hi = max(0, n - bad, int(m - 10 * sd)), min(n, good, int(m + 10 * sd)) + 1
    assert h.min() >= max(0, n - bad) and h.max() <= min(n, good)
    assert _chisquare(h, _hyper_pmf(good, bad, n), lo, hi) > 1e-4


@gpu
def test_hypergeometric_edges_and_large():
    g = gp.random.default_rng(46)
    for args, want in (((0, 20, 12), 0), ((20, 0, 12), 12), ((40, 60, 100), 40), ((5, 5, 0), 0)):
        assert (g.hypergeometric(*args, size=1000).get() == want).all(), args
    # RandomState has no 10**9 bound; the kernel's log-factorial differences stay exact
    good, bad, n = 2 * 10 ** 12, 3 * 10 ** 12, 10 ** 10
    x = gp.random.RandomState(3).hypergeometric(good, bad, n, N // 4).get()
    t = good + bad
    m, v = n * good / t, n * good / t * bad / t * (t - n) / (t - 1)
    assert abs(x.mean() - m) < 6 * math.sqrt(v / x.size)
    assert abs(x.var() / v - 1) < 6 * math.sqrt(2 / x.size)
    z = np.sort((x - m) / math.sqrt(v))
    assert _ks2(z, np.random.default_rng(0).standard_normal(N // 4)) > 1e-4
    # array parameters broadcast
    good = gp.asarray(np.array([10, 50, 500]))
    y = g.hypergeometric(good, 100, gp.asarray(np.array([[5], [60]])), (N // 8, 2, 3)).get()
    assert y.shape == (N // 8, 2, 3) and y.dtype == np.int64
    for i, n in enumerate((5, 60)):
        for j, gd in enumerate((10, 50, 500)):
            mean = n * gd / (gd + 100)
            assert abs(y[:, i, j].mean() - mean) < 6 * math.sqrt(mean + 1) / math.sqrt(N // 8)


def _multinomial_pmf(n, p, counts):
    out = math.factorial(n)
    for pi, c in zip(p, counts):
        out = out / math.factorial(c) * pi ** c
    return out


@gpu
def test_multinomial_joint_distribution():
    n, p = 5, [0.2, 0.3, 0.5]
    x = gp.random.default_rng(47).multinomial(n, p, N)
    assert x.shape == (N, 3) and x.dtype == np.int64
    h = x.get()
    assert (h.sum(axis=1) == n).all() and (h >= 0).all()
    cells = [(a, b) for a in range(n + 1) for b in range(n + 1 - a)]
    code = h[:, 0] * (n + 1) + h[:, 1]
    index = {a * (n + 1) + b: i for i, (a, b) in enumerate(cells)}
    y = np.array([index[c] for c in code.tolist()])
    pmf = lambda i: _multinomial_pmf(n, p, (*cells[i], n - sum(cells[i])))  # noqa: E731
    assert _chisquare(y, pmf, 0, len(cells)) > 1e-4


@gpu
def test_multinomial_moments_and_broadcasting():
    g = gp.random.default_rng(48)
    n, p = 10 ** 6, np.array([0.1, 0.2, 0.3, 0.4])
    rows = 1 << 16
    h = g.multinomial(n, list(p), rows).get()
    assert (h.sum(axis=1) == n).all()
    sd = np.sqrt(n * p * (1 - p))
    assert (np.abs(h.mean(axis=0) - n * p) < 6 * sd / np.sqrt(rows)).all()
    np.testing.assert_allclose(h.var(axis=0) / sd ** 2, 1, atol=6 * np.sqrt(2 / rows))
    np.testing.assert_allclose(np.cov(h[:, 0], h[:, 1])[0, 1] / (-n * p[0] * p[1]), 1, atol=0.05)
    # NumPy's: the last probability is what is left over, whatever pvals[-1] says
    h = g.multinomial(10, [0.2, 0.3, 0.9], N).get()
    np.testing.assert_allclose(h.mean(axis=0), [2, 3, 5], atol=0.02)
    assert (g.multinomial(20, [0.5, 0.0, 0.5], 10_000).get()[:, 1] == 0).all()
    # array n and 2-d pvals broadcast into the batch axes
    pv = gp.asarray(np.array([[0.5, 0.5], [0.1, 0.9], [1.0, 0.0]]))
    h = g.multinomial(gp.asarray(np.array([[3], [100]])), pv).get()
    assert h.shape == (2, 3, 2) and (h.sum(axis=2) == [[3], [100]]).all()
    assert (h[:, 2] == [[3, 0], [100, 0]]).all()
    h = g.multinomial(gp.asarray(np.array([10, 1000])), [0.3, 0.7], (N // 8, 2)).get()
    assert h.shape == (N // 8, 2, 2)
    np.testing.assert_allclose(h[:, :, 0].mean(axis=0), [3, 300], rtol=0.01)
    h = gp.random.RandomState(5).multinomial(20, [1 / 6.0] * 6, size=100_000).get()
    assert h.shape == (100_000, 6) and (h.sum(axis=1) == 20).all()
    np.testing.assert_allclose(h.mean(axis=0), 20 / 6, rtol=0.01)


@gpu
def test_multinomial_float32_message():
    p = gp.asarray(np.array([0.5, 0.50001, 0.0], np.float32))
    for g, ng in ((gp.random.default_rng(0), np.random.default_rng(0)),
                  (gp.random.RandomState(0), np.random.RandomState(0))):
        _same_error(lambda: ng.multinomial(5, p.get()), lambda: g.multinomial(5, p))


def _mvhg_support(colors, n):
    if len(colors) == 1:
        if n <= colors[0]:
            yield (n,)
        return
    for v in range(min(colors[0], n) + 1):
        for rest in _mvhg_support(colors[1:], n - v):
            yield (v,) + rest


@gpu
@pytest.mark.parametrize("method", ["marginals", "count"])
@pytest.mark.parametrize("colors,n", [([16, 8, 4], 6), ([5, 10, 15], 25), ([20, 30, 40, 10], 50)],
                         ids=["16.8.4-6", "5.10.15-25", "20.30.40.10-50"])
def test_multivariate_hypergeometric(colors, n, method):
    x = gp.random.default_rng(49).multivariate_hypergeometric(colors, n, N // 2, method=method)
    assert x.shape == (N // 2, len(colors)) and x.dtype == np.int64
    h = x.get()
    assert (h.sum(axis=1) == n).all() and (h >= 0).all() and (h <= colors).all()
    support = list(_mvhg_support(colors, n))
    index = {s: i for i, s in enumerate(support)}
    y = np.array([index[tuple(r)] for r in h.tolist()])
    total = math.comb(sum(colors), n)
    pmf = lambda i: math.prod(math.comb(c, k) for c, k in zip(colors, support[i])) / total  # noqa: E731
    assert _chisquare(y, pmf, 0, len(support)) > 1e-4


@gpu
def test_multivariate_hypergeometric_large_and_edges():
    g = gp.random.default_rng(50)
    for colors, method in (([10 ** 6, 2 * 10 ** 6, 3 * 10 ** 6], "marginals"),
                           ([2 * 10 ** 12, 3 * 10 ** 12, 10 ** 12], "count")):
        c = np.array(colors, np.float64)
        n = int(c.sum() // 60)
        h = g.multivariate_hypergeometric(colors, n, 1 << 16, method=method).get()
        t, p = c.sum(), c / c.sum()
        v = n * p * (1 - p) * (t - n) / (t - 1)
        assert (h.sum(axis=1) == n).all()
        assert (np.abs(h.mean(axis=0) - n * p) < 6 * np.sqrt(v / h.shape[0])).all()
        np.testing.assert_allclose(h.var(axis=0) / v, 1, atol=6 * np.sqrt(2 / h.shape[0]))
    assert (g.multivariate_hypergeometric([3, 0, 4], 7, 100).get() == [3, 0, 4]).all()
    assert (g.multivariate_hypergeometric([4], 2, 10).get() == 2).all()
    assert (g.multivariate_hypergeometric([4, 5], 0, 10).get() == 0).all()
    assert g.multivariate_hypergeometric([], 0).shape == (0,)
    assert g.multivariate_hypergeometric([2, 3], 1, (2, 3)).shape == (2, 3, 2)


@gpu
def test_permuted():
    g = gp.random.default_rng(51)
    x = np.arange(4000).reshape(1000, 4)
    a = gp.asarray(x)
    y = g.permuted(a, axis=1).get()
    np.testing.assert_array_equal(a.get(), x)              # a new array; x untouched
    np.testing.assert_array_equal(np.sort(y, axis=1), x)
    assert len({tuple(r - r.min()) for r in y}) > 20      # rows shuffled independently
    # uniform over the 24 orders of a row
    rows = g.permuted(gp.asarray(np.tile(np.arange(4), (N // 8, 1))), axis=1).get()
    code = rows @ np.array([64, 16, 4, 1])
    orders = sorted({int(c) for c in code})
    assert len(orders) == 24
    y24 = np.searchsorted(orders, code)
    assert _chisquare(y24, lambda k: 1 / 24, 0, 24) > 1e-4
    z = g.permuted(a, axis=0).get()
    np.testing.assert_array_equal(np.sort(z, axis=0), x)
    assert not (z[:, 0] - z[:, 1] == -1).all()
    f = g.permuted(a).get()
    assert f.shape == x.shape
    np.testing.assert_array_equal(np.sort(f.ravel()), x.ravel())
    t = gp.asarray(x.T.copy()).T                           # a non-contiguous view
    np.testing.assert_array_equal(np.sort(g.permuted(t, axis=1).get(), axis=1), x)
    b = gp.asarray(x)
    assert g.permuted(b, axis=1, out=b) is b               # in place
    np.testing.assert_array_equal(np.sort(b.get(), axis=1), x)
    o = gp.zeros((1000, 4), np.float64)
    assert g.permuted(a, axis=1, out=o) is o
    np.testing.assert_array_equal(np.sort(o.get(), axis=1), x)
    assert g.permuted(gp.zeros((0, 3)), axis=1).shape == (0, 3)


@gpu
def test_reproducible_independent_and_stream_advance():
    draws = {
        "vonmises": lambda g, k: g.vonmises(0.5, 2.0, k),
        "zipf": lambda g, k: g.zipf(2.5, k),
        "logseries": lambda g, k: g.logseries(0.7, k),
        "hypergeometric": lambda g, k: g.hypergeometric(30, 40, 20, k),
        "multinomial": lambda g, k: g.multinomial(50, [0.2, 0.3, 0.5], k),
        "mvhg": lambda g, k: g.multivariate_hypergeometric([30, 40, 50], 60, k),
        "permuted": lambda g, k: g.permuted(gp.asarray(np.tile(np.arange(10), (k, 1))), axis=1),
    }
    blocks = {"multinomial": 3, "mvhg": 3}
    k = 100_000
    for name, draw in draws.items():
        a = draw(gp.random.default_rng(7), k).get()
        np.testing.assert_array_equal(draw(gp.random.default_rng(7), k).get(), a)
        g = gp.random.default_rng(7)
        first, second = draw(g, k).get(), draw(g, k).get()
        c1, c2 = draw(gp.random.default_rng(7).spawn(2)[0], k).get(), draw(gp.random.default_rng(8), k).get()
        for other in (second, c1, c2):
            r = np.corrcoef(first.reshape(k, -1)[:, 0], other.reshape(k, -1)[:, 0])[0, 1]
            assert abs(r) < 6 / math.sqrt(k), name
        if name != "permuted":    # a draw of k elements advances the stream by k blocks
            g = gp.random.Generator(gp.random.Philox(9))     # (NumPy's values to compare)
            draw(g, k)
            bg = np.random.Philox(np.random.SeedSequence(9))
            bg.advance(k * blocks.get(name, 1))
            np.testing.assert_array_equal(g.random(8).get(), np.random.Generator(bg).random(8))


@gpu
def test_legacy_api():
    for name, a in (("vonmises", (0.0, 1.0)), ("zipf", (2.0,)), ("logseries", (0.5,)),
                    ("hypergeometric", (10, 20, 5))):
        gp.random.seed(3)
        x = getattr(gp.random, name)(*a, size=(20, 3))
        assert x.shape == (20, 3) and x.dtype == (np.float64 if name == "vonmises" else np.int64)
        gp.random.seed(3)
        np.testing.assert_array_equal(getattr(gp.random, name)(*a, size=(20, 3)).get(), x.get())
    m = gp.random.multinomial(20, [0.25] * 4, size=7)
    assert m.shape == (7, 4) and (m.get().sum(axis=1) == 20).all()
    assert gp.random.multinomial(3, [], size=2).shape == (2, 0)
