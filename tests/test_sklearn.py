"""scikit-learn on gpunb arrays (``sklearn.set_config(array_api_dispatch=True)``).

CPU: scikit-learn and array-api-compat find the gpunb namespace, device and dtypes of a gpunb
array; and a probe runs scikit-learn's array-API code paths (PCA's three solvers, LDA, Ridge,
the scalers, KernelCenterer, metrics) with arrays that compute in NumPy but first send every
namespace call, method and operator to gpunb on arrays over a made-up address: gpunb's argument
checks run (a kernel launch would come next), so a missing name, keyword or standard behaviour
shows up without a GPU. GPU: each estimator and metric on gpunb against the same on NumPy.
(tools/sklearn_support.md, from benchmarks/sklearn_check.py, covers scikit-learn's whole
support table.)"""

import os
import sys
import traceback
import types

os.environ.setdefault("SCIPY_ARRAY_API", "1")   # scikit-learn refuses dispatch without it

import numpy as np
import pytest

import gpunb as gp
from gpunb.core.ndarray import ndarray
from tests.data import fake

sklearn = pytest.importorskip("sklearn")

from sklearn.decomposition import PCA  # noqa: E402
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis  # noqa: E402
from sklearn.externals.array_api_compat import numpy as npx  # noqa: E402
from sklearn.linear_model import Ridge  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import KernelCenterer, MinMaxScaler, StandardScaler  # noqa: E402
from sklearn.utils import _array_api as skxp  # noqa: E402

rng = np.random.default_rng(1818)
gpu = pytest.mark.gpu


def dispatch():
    return sklearn.config_context(array_api_dispatch=True)


# -- CPU: the namespace, device and dtypes scikit-learn sees ------------------------------------

def test_array_api_compat_finds_gpunb():
    x = fake((4, 3))
    import array_api_compat

    from sklearn.externals import array_api_compat as vendored

    for compat in (array_api_compat, vendored):
        assert compat.array_namespace(x) is gp
        assert compat.device(x) == x.device
        assert not compat.is_numpy_array(x) and compat.is_array_api_obj(x)
        assert compat.is_writeable_array(x)


def test_sklearn_get_namespace_and_device():
    x, y = fake((4, 3)), fake((4,), "int64")
    with dispatch():
        xp, is_array_api, dev = skxp.get_namespace_and_device(x, y)
    assert xp is gp and is_array_api and dev == x.device
    assert not skxp._is_numpy_namespace(gp)
    xp, is_array_api = skxp.get_namespace(x)      # without dispatch: NumPy, as for any input
    assert not is_array_api and skxp._is_numpy_namespace(xp)


def test_sklearn_dtypes_of_gpunb():
    dev = fake((1,)).device
    assert skxp.supported_float_dtypes(gp, dev) == (np.float64, np.float32, np.float16)
    assert skxp._max_precision_float_dtype(gp, dev) == gp.float64
    with dispatch():
        assert skxp._matching_numpy_dtype(fake((2,), "float32")) == np.float32
    assert gp.isdtype(np.dtype("float32"), "real floating")
    assert not gp.isdtype(np.dtype("int64"), ("real floating", "complex floating"))


def test_numpy_may_share_memory_answers_without_a_copy():
    """scikit-learn's check_array (dispatch off, copy=True) asks NumPy whether its host copy
    shares the input's memory: gpunb answers from the addresses."""
    x = fake((4, 5))
    assert np.may_share_memory(x, x[1:]) and np.may_share_memory(x[:, 2], x[3])
    assert not np.may_share_memory(x[:2], x[2:])
    assert not np.may_share_memory(np.zeros((4, 5)), x)
    assert not gp.may_share_memory(x, x[:0])


# -- CPU: the probe ----------------------------------------------------------------------------

class Probe:
    """Runs code with probe arrays; ``problems``: every call gpunb refused, with the
    scikit-learn line that made it."""

    def __init__(self):
        self.problems = {}

    def check(self, what, call, args, kwargs):
        try:
            call(*_fakes(tuple(args)), **{k: _fakes(v) for k, v in kwargs.items()})
        except gp.GPUUnavailableError:
            pass                                # the arguments passed: a kernel was next
        except Exception as e:                  # noqa: BLE001 - what the probe is for
            key = f"{what}: {type(e).__name__}: {str(e)[:200]}"
            where = [f"{f.filename.split('site-packages/')[-1]}:{f.lineno}"
                     for f in traceback.extract_stack(limit=10) if "sklearn" in f.filename]
            self.problems.setdefault(key, where[-2:])


PROBE = Probe()


def _fakes(x):
    if isinstance(x, P):
        return fake(x.a.shape, x.a.dtype)
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        return type(x)(_fakes(v) for v in x)
    if isinstance(x, slice):
        return slice(*(_fakes(v) for v in (x.start, x.stop, x.step)))
    return x


def _host(x):
    if isinstance(x, P):
        return x.a
    if isinstance(x, (list, tuple)):
        return type(x)(_host(v) for v in x)
    if isinstance(x, slice):
        return slice(*(_host(v) for v in (x.start, x.stop, x.step)))
    return x


def _wrap(r):
    if isinstance(r, (np.ndarray, np.generic)):
        return P(np.asarray(r))
    if isinstance(r, tuple) and hasattr(r, "_fields"):
        return type(r)(*(_wrap(v) for v in r))
    if isinstance(r, (tuple, list)):
        return type(r)(_wrap(v) for v in r)
    return r


class P:
    """A probe array: NumPy data, each use first tried on a fake gpunb array."""

    __slots__ = ("a",)
    __hash__ = None

    def __init__(self, a):
        self.a = a

    def __array_namespace__(self, *, api_version=None):
        return NAMESPACE

    shape = property(lambda self: self.a.shape)
    dtype = property(lambda self: self.a.dtype)
    ndim = property(lambda self: self.a.ndim)
    size = property(lambda self: self.a.size)
    device = property(lambda self: fake((1,)).device)
    T = property(lambda self: self._view("T", lambda a: a.T))
    mT = property(lambda self: self._view("mT", lambda a: np.swapaxes(a, -1, -2)))

    def _view(self, name, f):
        PROBE.check(f"ndarray.{name}", lambda x: getattr(x, name), (self,), {})
        return P(f(self.a))

    def to_device(self, device, /, *, stream=None):
        PROBE.check("ndarray.to_device", lambda x, d: x.to_device(d), (self, device), {})
        return self

    def __array__(self, dtype=None, copy=None):
        return self.a if dtype is None else self.a.astype(dtype)

    def __getitem__(self, key):
        PROBE.check("ndarray.__getitem__", lambda x, k: x[k], (self, key), {})
        return _wrap(self.a[_host(key)])

    def __setitem__(self, key, value):
        PROBE.check("ndarray.__setitem__", lambda x, k, v: x.__setitem__(k, v),
                    (self, key, value), {})
        self.a[_host(key)] = _host(value)

    def __bool__(self):
        return bool(self.a)

    def __float__(self):
        return float(self.a)

    def __int__(self):
        return int(self.a)

    def __index__(self):
        return self.a.__index__()

    def __len__(self):
        return len(self.a)

    def __iter__(self):
        return (P(np.asarray(v)) for v in self.a)

    def __getattr__(self, name):        # non-standard methods (astype, reshape...), as gpunb's
        if not hasattr(ndarray, name):
            raise AttributeError(name)
        m = getattr(self.a, name)
        if not callable(m):
            return _wrap(m)

        def method(*args, **kwargs):
            PROBE.check(f"ndarray.{name}", lambda x, *a, **k: getattr(x, name)(*a, **k),
                        (self, *args), kwargs)
            return _wrap(m(*_host(args), **_host(kwargs)))
        return method


def _operator(dunder):
    def op(self, *other):
        PROBE.check(f"ndarray.{dunder}", lambda x, *o: getattr(x, dunder)(*o), (self, *other), {})
        r = getattr(self.a, dunder)(*_host(other))
        if r is not NotImplemented and dunder.startswith("__i") and dunder != "__invert__":
            self.a = r
            return self
        return r if r is NotImplemented else _wrap(r)
    return op


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or",
              "xor", "lshift", "rshift"):
    for _d in (f"__{_name}__", f"__r{_name}__", f"__i{_name}__"):
        setattr(P, _d, _operator(_d))
for _d in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__neg__", "__pos__",
           "__abs__", "__invert__"):
    setattr(P, _d, _operator(_d))


_MISSING = object()


class _Namespace(types.ModuleType):
    """gpunb as scikit-learn sees it through the probe: each function checked on fakes, then
    computed by array-api-compat's NumPy."""

    def __init__(self, name, gp_mod, np_mod):
        super().__init__(name)
        self._gp, self._np = gp_mod, np_mod

    def __getattr__(self, name):
        if name.startswith("__") and name != "__array_namespace_info__":
            raise AttributeError(name)
        if name in ("linalg", "fft"):
            return _Namespace(f"gpunb.{name}", getattr(gp, name), getattr(npx, name))
        full = self.__name__ + "." + name
        g = getattr(self._gp, name, _MISSING)
        n = getattr(self._np, name)             # AttributeError: neither has it (hasattr probes)
        if g is _MISSING:
            PROBE.problems.setdefault(f"{full}: missing", [])
        if name == "__array_namespace_info__" or not callable(n) or isinstance(n, type):
            return g if g is not _MISSING else n

        def fn(*args, **kwargs):
            if g is not _MISSING:
                PROBE.check(full, g, args, kwargs)
            kwargs = {k: (None if k == "device" else _host(v)) for k, v in kwargs.items()}
            return _wrap(n(*_host(args), **kwargs))
        return fn


NAMESPACE = _Namespace("gpunb", gp, npx)


def asarray(obj, *, dtype=None, device=None, copy=None):
    """The probe's ``asarray``: ``sys.modules['gpunb_probe']`` makes scikit-learn's own checks
    (``_array_api_for_tests('gpunb_probe')``) run on probe arrays."""
    return P(np.array(_host(obj), dtype=dtype, copy=True))


sys.modules.setdefault("gpunb_probe", sys.modules[__name__])


def _probe(run):
    PROBE.problems.clear()
    with dispatch():
        run()
    return dict(PROBE.problems)


def _data(dtype, n=60, d=6, classes=3):
    X = rng.standard_normal((n, d)).astype(dtype) * np.arange(1, d + 1, dtype=dtype)
    y = (np.arange(n) % classes).astype(np.int64)
    return X, y


PROBED = {
    "PCA full": lambda X, y: PCA(3, svd_solver="full").fit(X).transform(X),
    "PCA randomized": lambda X, y: PCA(3, svd_solver="randomized", random_state=0).fit_transform(X),
    "PCA covariance_eigh": lambda X, y: PCA(3, svd_solver="covariance_eigh").fit(X).score(X),
    "PCA 0.8 whiten": lambda X, y: (lambda e: e.inverse_transform(e.transform(X)))(
        PCA(0.8, whiten=True).fit(X)),
    "LDA": lambda X, y: LinearDiscriminantAnalysis().fit(X, y).predict_proba(X),
    "Ridge svd": lambda X, y: Ridge(solver="svd").fit(X, X[:, 0] + 1).predict(X),
    "StandardScaler": lambda X, y: StandardScaler().fit(X).inverse_transform(X),
    "MinMaxScaler": lambda X, y: MinMaxScaler().fit(X).inverse_transform(X),
    "KernelCenterer": lambda X, y: KernelCenterer().fit_transform(X @ X.T),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(PROBED))
def test_probe_estimator(name, dtype):
    X, y = _data(dtype)
    problems = _probe(lambda: PROBED[name](P(X), P(y)))
    assert not problems, problems


def test_probe_metrics():
    from sklearn import metrics

    a, b = rng.standard_normal((2, 40))
    la, lb = rng.integers(0, 3, (2, 40))
    X = rng.standard_normal((5, 3))
    problems = _probe(lambda: [
        metrics.r2_score(P(a), P(b)), metrics.mean_squared_error(P(a), P(b)),
        metrics.mean_absolute_error(P(a), P(b)), metrics.accuracy_score(P(la), P(lb)),
        metrics.confusion_matrix(P(la), P(lb)), metrics.f1_score(P(la), P(lb), average="macro"),
        metrics.roc_curve(P(la == 1), P(b)),
        *(metrics.pairwise_distances(P(X), metric=m) for m in ("euclidean", "manhattan", "cosine")),
        metrics.pairwise.rbf_kernel(P(X))])
    assert not problems, problems


# -- GPU: against NumPy ---------------------------------------------------------------------------

def _np(x):
    return gp.asnumpy(x) if isinstance(x, ndarray) else np.asarray(x)


def _tol(dtype):
    return dict(rtol=2e-4, atol=2e-4) if dtype == "float32" else dict(rtol=1e-9, atol=1e-9)


def _same(got, want, dtype, what=""):
    if np.ndim(want):       # arrays stay on the GPU (a scalar attribute may be a Python float)
        assert isinstance(got, ndarray), (what, type(got))
    np.testing.assert_allclose(_np(got), want, err_msg=what, **_tol(dtype))


def _fit_both(make, X, y=None, attrs=(), methods=(), dtype="float64"):
    est_np = make().fit(X, y) if y is not None else make().fit(X)
    with dispatch():
        Xg = gp.asarray(X)
        est_gp = make().fit(Xg, gp.asarray(y)) if y is not None else make().fit(Xg)
        for m in methods:
            _same(getattr(est_gp, m)(Xg), getattr(est_np, m)(X), dtype, m)
    for a in attrs:
        _same(getattr(est_gp, a), getattr(est_np, a), dtype, a)
    return est_gp


PCA_ATTRS = ("components_", "explained_variance_", "explained_variance_ratio_",
             "singular_values_", "mean_")


@gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("solver", ["full", "randomized", "covariance_eigh"])
def test_pca(solver, dtype):
    X, _ = _data(dtype, n=300, d=12)
    make = lambda: PCA(4, svd_solver=solver, random_state=0)    # noqa: E731
    est = _fit_both(make, X, attrs=PCA_ATTRS, methods=("transform", "score_samples"), dtype=dtype)
    assert est.components_.device == gp.asarray(X).device
    with dispatch():
        back = est.inverse_transform(est.transform(gp.asarray(X)))
    _same(back, make().fit(X).inverse_transform(make().fit(X).transform(X)), dtype)


@gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lda(dtype):
    X, y = _data(dtype, n=240, d=5)
    X += y[:, None].astype(dtype)
    est = _fit_both(LinearDiscriminantAnalysis, X, y, attrs=("coef_", "intercept_", "means_"),
                    methods=("predict_proba", "decision_function"), dtype=dtype)
    want = LinearDiscriminantAnalysis().fit(X, y)
    with dispatch():
        pred, got = est.predict(gp.asarray(X)), _np(est.transform(gp.asarray(X)))
    np.testing.assert_array_equal(_np(pred), want.predict(X))
    # transform: LDA leaves the signs of its SVD's vectors as the SVD gives them (cuSOLVER's
    # and LAPACK's may differ), so the columns agree up to sign
    want_t = want.transform(X)
    signs = np.sign(np.sum(got * want_t, axis=0))
    np.testing.assert_allclose(got * signs, want_t, **_tol(dtype))


@gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("targets", [1, 3])
def test_ridge_svd(targets, dtype):
    X, _ = _data(dtype, n=100, d=7)
    y = (X @ rng.standard_normal((7, targets)).astype(dtype) + 0.5).squeeze()
    make = lambda: Ridge(alpha=0.7, solver="svd")        # noqa: E731
    _fit_both(make, X, y, attrs=("coef_", "intercept_"), methods=("predict",), dtype=dtype)


@gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("make, attrs", [
    (StandardScaler, ("mean_", "var_", "scale_")),
    (MinMaxScaler, ("min_", "scale_", "data_min_", "data_max_")),
], ids=["StandardScaler", "MinMaxScaler"])
def test_scalers(make, attrs, dtype):
    X, _ = _data(dtype, n=80, d=5)
    _fit_both(make, X, attrs=attrs, methods=("transform", "inverse_transform"), dtype=dtype)


@gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_kernel_centerer(dtype):
    X, _ = _data(dtype, n=30, d=4)
    K = X @ X.T
    _fit_both(KernelCenterer, K, attrs=("K_fit_rows_",), methods=("transform",), dtype=dtype)


@gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_metrics(dtype):
    from sklearn import metrics

    a, b = rng.standard_normal((2, 200)).astype(dtype)
    A, B = rng.standard_normal((2, 50, 3)).astype(dtype)
    la, lb = rng.integers(0, 4, (2, 200))
    cases = [(metrics.r2_score, (a, b)), (metrics.mean_squared_error, (a, b)),
             (metrics.mean_absolute_error, (a, b)), (metrics.r2_score, (A[:, 0], B[:, 0])),
             (lambda p, q: metrics.r2_score(p, q, multioutput="raw_values"), (A, B)),
             (metrics.explained_variance_score, (a, b)), (metrics.accuracy_score, (la, lb)),
             (metrics.zero_one_loss, (la, lb)), (metrics.confusion_matrix, (la, lb)),
             (lambda p, q: metrics.f1_score(p, q, average="macro"), (la, lb))]
    for metric, args in cases:
        want = metric(*args)
        with dispatch():
            got = metric(*(gp.asarray(v) for v in args))
        np.testing.assert_allclose(_np(got), want, **_tol(dtype))


@gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("metric", ["euclidean", "manhattan", "cosine", "rbf", "linear"])
def test_pairwise(metric, dtype):
    from sklearn.metrics import pairwise_distances, pairwise_kernels

    X, Y = rng.standard_normal((40, 5)).astype(dtype), rng.standard_normal((30, 5)).astype(dtype)
    f = pairwise_kernels if metric in ("rbf", "linear") else pairwise_distances
    with dispatch():
        got = f(gp.asarray(X), gp.asarray(Y), metric=metric)
    _same(got, f(X, Y, metric=metric), dtype, metric)


@gpu
def test_pipeline_scaler_pca_ridge():
    X, _ = _data("float64", n=200, d=10)
    y = X @ rng.standard_normal(10) + 1.0
    make = lambda: make_pipeline(StandardScaler(), PCA(5), Ridge(solver="svd"))  # noqa: E731
    want = make().fit(X, y).predict(X)
    with dispatch():
        got = make().fit(gp.asarray(X), gp.asarray(y)).predict(gp.asarray(X))
    _same(got, want, "float64")
