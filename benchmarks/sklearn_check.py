"""Which entries of scikit-learn's array-API support run on gpunb: writes tools/sklearn_support.md.

Run on the GPU machine (scikit-learn's checks compare every result with NumPy's)::

    python benchmarks/sklearn_check.py [--out tools/sklearn_support.md] [-n 8]

It tries, with ``sklearn.set_config(array_api_dispatch=True)`` and gpunb inputs:

1. every estimator whose tags declare array API support (``all_estimators()``), plus the
   solver variants scikit-learn's own tests try: ``check_array_api_input`` with
   ``check_values=True`` in float64 and float32 (fitted attributes and outputs in gpunb, on the
   GPU, equal to NumPy's), and ``check_array_api_mixed_inputs`` (X on the GPU, y in NumPy);
2. every metric of scikit-learn's ``array_api_metric_checkers`` with each of its checkers;
3. scikit-learn's own array-API tests (the ones parametrized over array namespaces), with the
   namespace list replaced by gpunb's: this file is also that pytest plugin (``-p
   sklearn_check``); it covers the functions of the support table (pairwise kernels and
   distances, label and multiclass utilities, ...).

``--json FILE`` keeps the raw results; ``--from-json FILE`` rewrites the report from them
without running anything. ``--namespace gpunb_probe`` runs the same checks on the CPU with the probe of
tests/test_sklearn.py: arrays that compute in NumPy and try each call on gpunb first.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import inspect
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

os.environ.setdefault("SCIPY_ARRAY_API", "1")      # scikit-learn refuses dispatch without it

NAMESPACE = os.environ.get("SKLEARN_CHECK_NAMESPACE", "gpunb")
ROOT = Path(__file__).resolve().parent.parent

# scikit-learn's own test modules with array-API tests (parametrized over namespaces)
TEST_MODULES = [
    "sklearn.decomposition.tests.test_pca",
    "sklearn.metrics.tests.test_classification",
    "sklearn.metrics.tests.test_pairwise",
    "sklearn.metrics.cluster.tests.test_supervised",
    "sklearn.metrics.cluster.tests.test_common",
    "sklearn.preprocessing.tests.test_data",
    "sklearn.preprocessing.tests.test_label",
    "sklearn.preprocessing.tests.test_polynomial",
    "sklearn.tests.test_kernel_approximation",
    "sklearn.tests.test_naive_bayes",
    "sklearn.tests.test_pipeline",
    "sklearn.tests.test_calibration",
    "sklearn.mixture.tests.test_gaussian_mixture",
    "sklearn.linear_model.tests.test_ridge",
    "sklearn.linear_model.tests.test_logistic",
    "sklearn.linear_model._glm.tests.test_glm",
    "sklearn.model_selection.tests.test_split",
    "sklearn.model_selection.tests.test_search",
    "sklearn.model_selection.tests.test_validation",
    "sklearn.utils.tests.test_array_api",
    "sklearn.utils.tests.test_validation",
    "sklearn.utils.tests.test_multiclass",
    "sklearn.utils.tests.test_indexing",
    "sklearn.utils.tests.test_extmath",
    "sklearn.utils.tests.test_stats",
    "sklearn.utils.tests.test_optimize",
    "sklearn._loss.tests.test_loss",
    "sklearn._loss.tests.test_link",
]


def _why(exc: BaseException) -> str:
    """One line: the error, and where it was raised (the innermost gpunb frame, else the
    innermost scikit-learn one)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    # assert_allclose's message: its first line, the element counts and the largest difference
    keep = lines[:2] + [ln for ln in lines[2:] if ln.startswith(("Mismatched", "Max absolute"))]
    msg = f"{type(exc).__name__}: {'; '.join(keep)}" if keep else type(exc).__name__
    frames = traceback.extract_tb(exc.__traceback__)
    at = ([f for f in frames if "/gpunb/" in f.filename]
          or [f for f in frames if "sklearn" in f.filename] or frames[-1:])
    where = ""
    if at:
        f = at[-1]
        where = f" (at {f.filename.split('site-packages/')[-1].split('/main/')[-1]}:{f.lineno})"
    return (msg[:220] + where).replace("|", "\\|").replace("\n", " ")


def _try(fn) -> tuple[str, str]:
    """('pass', '') or ('FAIL', why) or ('skip', why)."""
    from unittest import SkipTest

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
        return "pass", ""
    except SkipTest as e:
        return "skip", str(e)[:200]
    except BaseException as e:      # noqa: BLE001 - the report says what failed, and why
        if type(e).__name__ == "Skipped":
            return "skip", str(e)[:200]
        if isinstance(e, KeyboardInterrupt):
            raise
        return "FAIL", _why(e)


# gpunb refuses to mix host arrays into GPU functions (and NumPy functions it has no GPU
# implementation of): the error of a check's dispatch-off part that gives NumPy functions gpunb
# arrays next to NumPy ones
_HOST_MIX = ("in host memory", "is not supported on gpunb arrays")


@contextlib.contextmanager
def _as_cupy_would():
    """gpunb arrays refuse ``numpy.asarray`` while array-API dispatch is off, as CuPy's do:
    scikit-learn's checks then skip their dispatch-off part (they test that only for arrays
    NumPy can take)."""
    import sklearn

    from gpunb.core.ndarray import ndarray

    orig = ndarray.__array__

    def __array__(self, dtype=None, copy=None):
        if not sklearn.get_config()["array_api_dispatch"]:
            raise TypeError("no implicit conversion to NumPy (sklearn_check: as CuPy)")
        return orig(self, dtype, copy)

    ndarray.__array__ = __array__
    try:
        yield
    finally:
        ndarray.__array__ = orig


def _check(fn, namespace) -> tuple[str, str]:
    """``_try(fn)``; a failure of the dispatch-off part only (NumPy functions given gpunb and
    NumPy arrays together) is tried again without that part: 'pass*' if the rest passes."""
    res = _try(fn)
    if res[0] == "FAIL" and namespace == "gpunb" and any(m in res[1] for m in _HOST_MIX):
        with _as_cupy_would():
            again = _try(fn)
        if again[0] == "pass":
            return "pass*", f"dispatch off: {res[1]}"
        return again
    return res


def estimators():
    """(label, instance) of every estimator scikit-learn tags as array-API compatible, plus
    the solver variants its own tests check."""
    from sklearn.decomposition import PCA
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.linear_model import Ridge
    from sklearn.utils import all_estimators
    from sklearn.utils._test_common.instance_generator import _construct_instances

    out, seen = [], set()
    for name, cls in all_estimators():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                instances = list(_construct_instances(cls))
        except Exception:       # noqa: BLE001 - an estimator its generator cannot build
            continue
        for est in instances:
            if est.__sklearn_tags__().array_api_support:
                label = repr(est).replace("\n", " ")
                label = " ".join(label.split())
                if label not in seen:
                    seen.add(label)
                    out.append((label, est))
    extra = [PCA(n_components=2, svd_solver="full"),
             PCA(n_components=2, svd_solver="randomized", power_iteration_normalizer="QR",
                 random_state=0),
             PCA(n_components=2, svd_solver="covariance_eigh"),
             PCA(n_components=0.1, svd_solver="full", whiten=True),
             PCA(n_components="mle", svd_solver="full"),
             LinearDiscriminantAnalysis(solver="svd"),
             Ridge(solver="svd"), Ridge(solver="auto")]
    for est in extra:
        label = " ".join(repr(est).split())
        if label not in seen:
            seen.add(label)
            out.append((label, est))
    return out


def check_estimators(namespace: str) -> list[dict]:
    from sklearn.utils.estimator_checks import check_array_api_input

    try:        # (scikit-learn 1.9's; older versions lack the mixed-input check)
        from sklearn.utils._array_api import NamespaceAndDevice
        from sklearn.utils._test_common.instance_generator import _get_expected_failed_checks
        from sklearn.utils.estimator_checks import check_array_api_mixed_inputs
    except ImportError:
        check_array_api_mixed_inputs = None
        _get_expected_failed_checks = lambda est: {}        # noqa: E731

    rows = []
    for label, est in estimators():
        row = {"entry": label}
        if next(iter(inspect.signature(est.fit).parameters)) == "y":      # LabelEncoder.fit(y)
            why = "fit(y) takes no X: scikit-learn's own tests of it are in part 3"
            row.update({k: ("n/a", why) for k in ("float64", "float32", "values", "mixed")})
            rows.append(row)
            continue
        xfail = _get_expected_failed_checks(est)
        # (the checks set array_api_dispatch themselves: parts run without it on purpose)
        for dt in ("float64", "float32"):
            t = time.perf_counter()
            row[dt] = _check(lambda: check_array_api_input(label, est, namespace, None, dt),
                             namespace)
            row[dt + "_s"] = time.perf_counter() - t
        row["values"] = _check(lambda: check_array_api_input(label, est, namespace, None,
                                                             "float64", check_values=True),
                               namespace)
        row["mixed"] = ("n/a", "") if check_array_api_mixed_inputs is None else _check(
            lambda: check_array_api_mixed_inputs(label, est, NamespaceAndDevice(namespace, None),
                                                 NamespaceAndDevice("numpy", None)), namespace)
        for key, check in (("float64", "check_array_api_input"),
                           ("float32", "check_array_api_input"),
                           ("mixed", "check_array_api_mixed_inputs")):
            if row[key][0] == "FAIL" and check in xfail:
                row[key] = ("xfail", f"scikit-learn expects this to fail: {xfail[check]}")
        rows.append(row)
        print(f"[estimator] {label}: {row['float64'][0]} {row['float32'][0]} {row['values'][0]} "
              f"{row['mixed'][0]}", _first_why(row), flush=True)
    return rows


def _first_why(row) -> str:
    for key in ("float64", "float32", "values", "mixed"):
        if row[key][1]:
            return f"{key}: {row[key][1]}"
    return ""


def check_metrics(namespace: str) -> list[dict]:
    from sklearn.metrics.tests.test_common import array_api_metric_checkers

    rows = []
    for metric, checkers in array_api_metric_checkers.items():
        kw = ", ".join(f"{k}={v!r}" for k, v in getattr(metric, "keywords", {}).items())
        name = getattr(metric, "__name__", None) or f"{metric.func.__name__}({kw})"
        for checker in checkers:
            row = {"entry": name, "check": checker.__name__.replace("check_array_api_", "")}
            for dt in ("float64", "float32"):
                row[dt] = _check(lambda: checker(metric, namespace, None, dt), namespace)
            rows.append(row)
            print(f"[metric] {name} {row['check']}: {row['float64'][0]} {row['float32'][0]}",
                  row["float64"][1] or row["float32"][1], flush=True)
    return rows


def run_sklearn_tests(namespace: str, workers: int, timeout: float) -> dict:
    """scikit-learn's own array-API tests on ``namespace``: {test id: (outcome, why)}."""
    out = Path(tempfile.mkdtemp()) / "reports.json"
    env = dict(os.environ, SKLEARN_CHECK_NAMESPACE=namespace, SKLEARN_CHECK_REPORTS=str(out),
               PYTHONPATH=os.pathsep.join([str(Path(__file__).parent), str(ROOT),
                                           *filter(None, [os.environ.get("PYTHONPATH")])]))
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "sklearn_check",
           "--pyargs", *TEST_MODULES, "-k", namespace, "-o", "addopts=", "--tb=no", "-W", "ignore"]
    if workers > 1 and importlib.util.find_spec("xdist") is not None:
        cmd += ["-n", str(workers)]
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        tail = proc.stdout[-1500:] + proc.stderr[-1500:]
    except subprocess.TimeoutExpired as e:
        tail = f"timed out after {timeout} s\n" + (e.stdout or b"")[-1000:].decode(errors="replace")
    print(tail, flush=True)
    probe = Path(str(out) + ".probe")
    if probe.exists():
        problems = {}
        for line in probe.read_text().splitlines():
            problems.update(json.loads(line))
        print("what gpunb refused (probe):", json.dumps(problems, indent=1), flush=True)
    results = {}
    if out.exists():
        for line in out.read_text().splitlines():
            r = json.loads(line)
            results[r["id"]] = (r["outcome"], r["why"])
    return results


def _import_namespace(ns: str) -> None:
    """Import the namespace module (``gpunb_probe`` lives in tests/test_sklearn.py)."""
    if ns == "gpunb_probe":
        sys.path.insert(0, str(ROOT))
        importlib.import_module("tests.test_sklearn")
    else:
        importlib.import_module(ns)


# -- the pytest plugin (-p sklearn_check): scikit-learn's namespace list replaced ------------------

def pytest_configure(config):
    import sklearn.utils._array_api as aa

    ns = os.environ.get("SKLEARN_CHECK_NAMESPACE", "gpunb")
    _import_namespace(ns)

    def yield_namespaces(include_numpy_namespaces=True):
        yield ns

    def yield_namespace_device_dtype_combinations(include_numpy_namespaces=True):
        yield ns, None, "float64"
        yield ns, None, "float32"

    aa.yield_namespaces = yield_namespaces
    aa.yield_namespace_device_dtype_combinations = yield_namespace_device_dtype_combinations


def pytest_runtest_logreport(report):
    path = os.environ.get("SKLEARN_CHECK_REPORTS")
    if not path or (report.when != "call" and report.outcome == "passed"):
        return
    if report.when == "teardown":
        return
    why = ""
    if report.outcome == "failed":
        crash = getattr(report.longrepr, "reprcrash", None)
        why = (f"{crash.message.splitlines()[0][:220]} (at {Path(crash.path).name}:{crash.lineno})"
               if crash else str(report.longrepr).splitlines()[-1][:220])
    elif report.outcome == "skipped":
        rep = report.longrepr
        why = str(rep[-1] if isinstance(rep, tuple) else rep)[:160]
    with open(path, "a") as f:
        where = str(report.fspath).split("site-packages/")[-1]
        test = report.nodeid.split("::", 1)[-1]
        f.write(json.dumps({"id": f"{where}::{test}", "outcome": report.outcome,
                            "why": why.replace("|", "\\|")}) + "\n")


def pytest_sessionfinish(session):
    """With the CPU probe: what gpunb refused, for the caller to print."""
    probe = sys.modules.get("tests.test_sklearn")
    path = os.environ.get("SKLEARN_CHECK_REPORTS")
    if probe is not None and path:
        with open(path + ".probe", "a") as f:
            json.dump(probe.PROBE.problems, f)
            f.write("\n")


# -- the report ----------------------------------------------------------------------------------

def _cell(res):
    return res[0].replace("*", "\\*")


def _ok(res) -> bool:
    return res[0] in ("pass", "pass*", "n/a", "xfail")


def _test_module(test_id: str) -> str:
    """``module.py::test`` for a report id; ids of tests run with --pyargs from site-packages
    may lack the module (``::test``): found by the test's name in TEST_MODULES."""
    where, _, test = test_id.partition("::")
    if where:
        return test_id
    name = test.split("[")[0]
    for mod in TEST_MODULES:
        spec = importlib.util.find_spec(mod)
        if spec and spec.origin and f"def {name}(" in Path(spec.origin).read_text():
            return f"{mod.replace('.', '/')}.py::{test}"
    return test_id


# (a pattern seen in the report, what it means): the notes under the tables
NOTES = [
    ("dispatch off:", "**pass\\*** (dispatch off): scikit-learn's checkers also call the "
     "function with array-API dispatch *off* when `numpy.asarray(x)` works, which it does for a "
     "gpunb array (an explicit copy to the host). scikit-learn then gives NumPy functions gpunb "
     "arrays next to NumPy arrays (`np.average(gpu, weights=host)`, `gpu == host`), and gpunb "
     "refuses to mix host arrays into GPU functions rather than copy behind the user's back. "
     "Re-run with `numpy.asarray` refused while dispatch is off (as CuPy and PyTorch-on-GPU "
     "arrays refuse it, which makes the checkers skip that part), the check passes."),
    ("CUDA_ERROR_INVALID_CONTEXT", "`CUDA_ERROR_INVALID_CONTEXT` (`n_jobs=2`): joblib's "
     "threading backend computes chunks in worker threads, and gpunb's CUDA context is not "
     "current in a thread other than the one that first used the GPU (a runtime issue: "
     "gpunb/core/runtime)."),
    ("components_ not the same", "`values` of `PCA()` (`components_`): with every component "
     "kept, the last two belong to zero singular values (the check's data, "
     "`make_classification(n_samples=30, n_features=10)`, has two redundant features), where "
     "any orthonormal basis of that plane is right; cuSOLVER and LAPACK pick different ones. "
     "The components of nonzero variance agree (the PCA rows above with `n_components=2`)."),
    ("estimator_checks.py:1241", "`values` of `PCA(n_components='mle')` (line 1241: `score()` "
     "within 1000 eps, absolute): the log-likelihood depends on the rounding of the near-zero "
     "trailing variances; the check fails the same way with NumPy itself through "
     "array-api-compat's namespace (the CPU probe of tests/test_sklearn.py), so this is not a "
     "gpunb difference."),
    ("scalings_ not the same", "`values` of `LinearDiscriminantAnalysis` (`scalings_`): its SVD "
     "solver keeps the singular vectors' signs as the SVD returns them, and cuSOLVER's differ "
     "from LAPACK's, so `scalings_` and `transform` agree up to the sign of each column; "
     "`coef_`, `intercept_`, `predict`, `predict_proba` and `decision_function` are equal "
     "(tests/test_sklearn.py::test_lda checks all of these)."),
    ("fit(y) takes no X", "`fit(y)` estimators (LabelEncoder) do not fit "
     "`check_array_api_input`; scikit-learn tests them in its own tests (part 3)."),
]


def write_report(path: Path, namespace, est_rows, metric_rows, tests, header) -> None:
    import sklearn

    lines = [
        "# scikit-learn's array-API support on gpunb",
        "",
        f"Generated by `python benchmarks/sklearn_check.py` ({header}; scikit-learn "
        f"{sklearn.__version__}, namespace `{namespace}`). With `array_api_dispatch=True` and "
        "gpunb inputs on the GPU: **pass** means scikit-learn's own check passed (fitted "
        "attributes and outputs are gpunb arrays on the input's device, of the right dtype and "
        "shape, and equal to the all-NumPy run within scikit-learn's tolerance). **pass\\***: "
        "passes with dispatch on; only the check's dispatch-off part failed (see the notes).",
        "",
    ]
    n_pass = sum(_ok(r["float64"]) and _ok(r["float32"]) for r in est_rows)
    n_all = sum(all(_ok(r[k]) for k in ("float64", "float32", "values", "mixed")) for r in est_rows)
    lines += [f"## Estimators ({n_pass} of {len(est_rows)} pass in float64 and float32; {n_all} "
              "pass every column)", "",
              "Every estimator whose tags declare array API support, plus solver variants. "
              "`float64`, `float32`: scikit-learn's `check_array_api_input` (namespace, device, "
              "dtype and shape of every fitted attribute and output); `values`: the same with "
              "`check_values=True` in float64 (values equal to NumPy's within 1000 eps, score "
              "too); `mixed`: X in gpunb, y and sample_weight in NumPy (moved to X's namespace). "
              "`xfail`: a failure scikit-learn lists as expected for every namespace.", "",
              "| estimator | float64 | float32 | values | mixed | why (first failure) |",
              "|---|---|---|---|---|---|"]
    for r in est_rows:
        lines.append(f"| `{r['entry']}` | {_cell(r['float64'])} | {_cell(r['float32'])} | "
                     f"{_cell(r['values'])} | {_cell(r['mixed'])} | {_first_why(r)} |")
    n_pass = sum(_ok(r["float64"]) and _ok(r["float32"]) for r in metric_rows)
    lines += ["", f"## Metrics ({n_pass} of {len(metric_rows)} checks pass in both dtypes)", "",
              "scikit-learn's `array_api_metric_checkers` (sklearn/metrics/tests/test_common.py).",
              "", "| metric | check | float64 | float32 | why (first failure) |",
              "|---|---|---|---|---|"]
    for r in metric_rows:
        lines.append(f"| `{r['entry']}` | {r['check']} | {_cell(r['float64'])} | "
                     f"{_cell(r['float32'])} | {r['float64'][1] or r['float32'][1]} |")
    if tests:
        by_fn: dict = {}
        for tid, (outcome, why) in tests.items():
            fn = _test_module(tid).split("[")[0]
            d = by_fn.setdefault(fn, {"passed": 0, "failed": 0, "skipped": 0, "why": ""})
            d[outcome] = d.get(outcome, 0) + 1
            if outcome == "failed" and not d["why"]:
                d["why"] = why
            if outcome == "skipped" and not d["why"] and not d["failed"]:
                d["why"] = "skipped: " + why
        tot = {k: sum(d.get(k, 0) for d in by_fn.values()) for k in ("passed", "failed", "skipped")}
        lines += ["", f"## scikit-learn's own array-API tests on gpunb ({tot['passed']} passed, "
                  f"{tot['failed']} failed, {tot['skipped']} skipped)", "",
                  "Its tests parametrized over array namespaces, run with the namespace list "
                  "replaced by gpunb (float64 and float32); one row per test function.", "",
                  "| test | passed | failed | skipped | why (first failure) |",
                  "|---|---|---|---|---|"]
        for fn in sorted(by_fn):
            d = by_fn[fn]
            lines.append(f"| `{fn}` | {d['passed']} | {d['failed']} | {d['skipped']} | "
                         f"{d['why']} |")
    text = "\n".join(lines)
    notes = [note for pattern, note in NOTES if pattern in text]
    if notes:
        lines += ["", "## Notes: the causes of what fails", ""] + [f"- {n}" for n in notes]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--namespace", default=NAMESPACE)
    p.add_argument("--out", default=str(ROOT / "tools" / "sklearn_support.md"))
    p.add_argument("--json", default=None, help="also write the raw results here")
    p.add_argument("-n", type=int, default=8, help="pytest-xdist workers for part 3")
    p.add_argument("--tests-timeout", type=float, default=240.0)
    p.add_argument("--parts", default="estimators,metrics,tests")
    p.add_argument("--from-json", default=None,
                   help="rewrite the report from a --json file of an earlier run (no checks)")
    args = p.parse_args(argv)
    if args.from_json:
        raw = json.loads(Path(args.from_json).read_text())
        tests = {k: tuple(v) for k, v in raw["tests"].items()}
        write_report(Path(args.out), args.namespace, raw["estimators"], raw["metrics"], tests,
                     raw.get("header", "on the GPU"))
        return 0
    os.environ["SKLEARN_CHECK_NAMESPACE"] = args.namespace
    _import_namespace(args.namespace)
    parts = args.parts.split(",")
    t0 = time.perf_counter()
    est_rows = check_estimators(args.namespace) if "estimators" in parts else []
    metric_rows = check_metrics(args.namespace) if "metrics" in parts else []
    tests = (run_sklearn_tests(args.namespace, args.n, args.tests_timeout)
             if "tests" in parts else {})
    header = "on the CPU probe" if args.namespace != "gpunb" else _device()
    write_report(Path(args.out), args.namespace, est_rows, metric_rows, tests, header)
    if args.json:
        Path(args.json).write_text(json.dumps({"estimators": est_rows, "metrics": metric_rows,
                                               "tests": tests, "header": header}, indent=1,
                                              default=str))
    print(f"wrote {args.out} in {time.perf_counter() - t0:.0f} s", flush=True)
    return 0


def _device() -> str:
    try:
        import gpunb

        return f"on {gpunb.device_info().name}"
    except Exception:       # noqa: BLE001 - the header only names the GPU
        return "on the GPU"


if __name__ == "__main__":
    sys.exit(main())
