"""The array API standard on gpunb (gpunb/_array_api): the namespace, the inspection API,
devices, the standard's names and keywords, and the conformance suite's runner
(tools/array_api). CPU tests check names, signatures and errors on arrays over a made-up
address; GPU tests compare values with NumPy."""

import importlib
import inspect
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import gpunb as gp
from gpunb._array_api import devices as D
from gpunb._array_api.info import Info
from gpunb.core.ndarray import ndarray
from tests import data
from tests.data import fake, same

ROOT = Path(__file__).resolve().parent.parent
STUBS = ROOT / "tools" / "array_api_tests" / "array-api" / "src"
RUN = ROOT / "tools" / "array_api" / "run.py"
rng = np.random.default_rng(18)
gpu = pytest.mark.gpu


def rand(shape, dtype):
    return data.rand(shape, dtype, rng=rng, scale=3, bound=100)


def _stub_modules():
    """The 2025.12 standard's stub modules (vendored with the suite), by name."""
    sys.path.insert(0, str(STUBS))
    try:
        pkg = importlib.import_module("array_api_stubs._2025_12")
        return {m.name: importlib.import_module(f"{pkg.__name__}.{m.name}")
                for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_")}
    finally:
        sys.path.remove(str(STUBS))


# -- CPU: the namespace, the inspection API, devices ----------------------------------------

def test_namespace_is_gpunb_for_every_supported_version():
    a = fake()
    assert a.__array_namespace__() is gp and gp.__array_api_version__ == "2025.12"
    for v in ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12"):
        assert a.__array_namespace__(api_version=v) is gp
    with pytest.raises(ValueError, match=r"version '2020.10'.*supports 2021.12, 2022.12"):
        a.__array_namespace__(api_version="2020.10")
    with pytest.raises(TypeError):
        a.__array_namespace__("2024.12")        # keyword only, as the standard


def test_device_is_a_gpunb_cuda_device_equal_per_gpu():
    a, b = fake(), fake((2,))
    assert isinstance(a.device, gp.cuda.Device) and a.device.id == 0
    assert a.device == b.device and a.device is b.device and hash(a.device) == hash(b.device)
    assert a.device != D.device_of(1) and repr(a.device) == "<CUDA Device 0>"
    assert "device='cuda:0'" not in repr(a.device)


def test_to_device_same_device_is_the_array_and_cpu_is_refused():
    a = fake()
    assert a.to_device(a.device) is a
    assert a.to_device(a.device, stream=None) is a
    with pytest.raises(ValueError, match=r"device='cpu' is not a gpunb device.*gpunb.asnumpy"):
        a.to_device("cpu")
    with pytest.raises(ValueError, match="device must be None or a gpunb device"):
        a.to_device("cuda:0")
    with pytest.raises(ValueError, match="copies between GPUs"):
        a.to_device(D.device_of(1))
    with pytest.raises(TypeError, match="stream must be None, a gpunb.Stream"):
        a.to_device(a.device, stream="fast")


def test_mT_swaps_the_last_two_axes_as_a_view():
    a = fake((2, 3, 4))
    t = a.mT
    assert t.shape == (2, 4, 3) and t.strides == (a.strides[0], a.strides[2], a.strides[1])
    assert t.data.ptr == a.data.ptr and gp.matrix_transpose(a).shape == (2, 4, 3)
    with pytest.raises(ValueError, match="at least 2 dimensions, got 1"):
        fake((3,)).mT        # noqa: B018


def test_inspection_api():
    info = gp.__array_namespace_info__()
    assert isinstance(info, Info)
    caps = info.capabilities()
    assert caps == {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}
    assert info.default_device() == fake().device
    assert isinstance(info.devices(), tuple)
    assert all(isinstance(d, gp.cuda.Device) for d in info.devices())
    assert info.default_dtypes() == {"real floating": np.float64, "complex floating": np.complex128,
                                     "integral": np.int64, "indexing": np.int64}
    assert info.default_dtypes(device=fake().device)["integral"] == np.int64
    every = info.dtypes()
    assert list(every) == ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                           "uint64", "float32", "float64", "complex64", "complex128"]
    assert all(every[n] == np.dtype(n) for n in every)
    assert list(info.dtypes(kind="real floating")) == ["float32", "float64"]
    assert list(info.dtypes(kind=("bool", "complex floating"))) == ["bool", "complex64", "complex128"]
    assert len(info.dtypes(kind="numeric")) == 12 and len(info.dtypes(kind="integral")) == 8
    with pytest.raises(ValueError, match="unknown dtype kind 'float'"):
        info.dtypes(kind="float")
    with pytest.raises(ValueError, match="not a gpunb device"):
        info.dtypes(device="cpu")


_CREATION = {
    "empty": lambda dev: gp.empty(3, device=dev),
    "zeros": lambda dev: gp.zeros((2, 3), device=dev),
    "ones": lambda dev: gp.ones(3, device=dev),
    "full": lambda dev: gp.full(3, 1.5, device=dev),
    "empty_like": lambda dev: gp.empty_like(fake(), device=dev),
    "zeros_like": lambda dev: gp.zeros_like(fake(), device=dev),
    "ones_like": lambda dev: gp.ones_like(fake(), device=dev),
    "full_like": lambda dev: gp.full_like(fake(), 2, device=dev),
    "arange": lambda dev: gp.arange(5, device=dev),
    "linspace": lambda dev: gp.linspace(0, 1, 5, device=dev),
    "eye": lambda dev: gp.eye(3, device=dev),
    "asarray": lambda dev: gp.asarray([1, 2], device=dev),
    "from_dlpack": lambda dev: gp.from_dlpack(np.ones(2), device=dev),
}


@pytest.mark.parametrize("name", sorted(_CREATION))
def test_creation_functions_take_device_and_refuse_others(name):
    assert "device" in inspect.signature(getattr(gp, name)).parameters
    with pytest.raises(ValueError, match="device"):
        _CREATION[name]("cpu")
    with pytest.raises(ValueError, match="device"):
        _CREATION[name](np.float64(0))


# -- CPU: the standard's names and keywords -------------------------------------------------

def test_every_name_of_the_standard_resolves():
    """The 2025.12 stubs' names: functions and constants in gpunb, the extensions' in
    gpunb.linalg and gpunb.fft, the array object's methods and attributes on ndarray."""
    missing = []
    for mod_name, mod in _stub_modules().items():
        names = getattr(mod, "__all__", [])
        if mod_name in ("linalg", "fft"):
            missing += [f"{mod_name}.{n}" for n in names if not hasattr(getattr(gp, mod_name), n)]
        elif mod_name == "array_object":
            members = [n for n in vars(mod.array) if not n.startswith("_") or n.endswith("__")]
            missing += [f"ndarray.{n}" for n in members
                        if n not in ("__init__", "__dict__", "__module__", "__weakref__", "__doc__")
                        and not hasattr(ndarray, n)]
        elif mod_name == "info":
            missing += [n for n in names if n != "__array_namespace_info__"
                        and not hasattr(Info, n)]
            assert callable(gp.__array_namespace_info__)
        elif mod_name not in ("data_types",):
            missing += [n for n in names if not hasattr(gp, n)]
    for dt in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float32", "float64", "complex64", "complex128"):
        if not hasattr(gp, dt):
            missing.append(dt)
    assert not missing, missing


def test_standard_names_of_numpy_functions_are_the_same_objects():
    pairs = {"concat": "concatenate", "permute_dims": "transpose", "pow": "power",
             "acos": "arccos", "asin": "arcsin", "atan": "arctan", "atan2": "arctan2",
             "acosh": "arccosh", "asinh": "arcsinh", "atanh": "arctanh",
             "bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift",
             "bitwise_invert": "invert", "around": "round"}
    for std, numpy_name in pairs.items():
        assert getattr(gp, std) is getattr(gp, numpy_name), std
    assert isinstance(gp.nextafter, gp.ufunc) and gp.nextafter.nin == 2


@pytest.mark.parametrize("func, keyword", [
    ("sort", "descending"), ("argsort", "descending"), ("sort", "stable"), ("var", "correction"),
    ("std", "correction"), ("reshape", "copy"), ("astype", "copy"), ("astype", "device"),
    ("cumulative_sum", "include_initial"), ("cumulative_prod", "include_initial"),
    ("unstack", "axis"), ("clip", "min"), ("clip", "max"), ("clip", "a_min"),
])
def test_the_standard_keywords_are_there(func, keyword):
    assert keyword in inspect.signature(getattr(gp, func)).parameters


def test_clip_names_its_bounds_as_the_standard_and_numpy_2():
    params = list(inspect.signature(gp.clip).parameters)
    assert params[:3] == ["a", "min", "max"]
    with pytest.raises(TypeError, match="pass min or a_min, not both"):
        gp.clip(fake(), 0, a_min=0)


@pytest.mark.parametrize("call, exc, msg", [
    (lambda: gp.unstack(fake(())), ValueError, "must be at least 1-d"),
    (lambda: gp.unstack(fake((2, 3)), axis=2), np.exceptions.AxisError, "axis 2 is out of bounds"),
    (lambda: gp.cumulative_sum(fake((2, 3))), ValueError, "argument is required"),
    (lambda: gp.cumulative_prod(fake((2, 3)), axis=3), np.exceptions.AxisError, "out of bounds"),
    (lambda: gp.astype(fake(), "float32", device="cpu"), ValueError, "not a gpunb device"),
    (lambda: gp.astype(fake(), "float32", device=D.device_of(1)), ValueError, "between GPUs"),
    (lambda: gp.astype([1], "f4"), TypeError, "astype needs a GPU array"),
    (lambda: gp.var(fake(), ddof=1, correction=1), ValueError, "can't be provided simultaneously"),
    (lambda: gp.reshape(fake((3, 4)).T, -1, copy=False), ValueError, "avoid creating a copy"),
    (lambda: gp.isdtype(np.float32, "floating"), ValueError, "kind argument"),
])
def test_errors(call, exc, msg):
    with pytest.raises(exc, match=msg):
        call()


def test_cpu_results_without_kernels():
    a = fake((2, 3, 4))
    parts = gp.unstack(a, axis=1)
    assert len(parts) == 3 and all(p.shape == (2, 4) for p in parts)
    assert parts[1].data.ptr == a.data.ptr + a.strides[1]
    assert [p.shape for p in gp.unstack(a)] == [(3, 4), (3, 4)]
    assert gp.reshape(fake((3, 4)), (4, 3), copy=False).shape == (4, 3)
    assert gp.permute_dims(a, (2, 0, 1)).shape == (4, 2, 3)
    assert gp.astype(a, "float32", copy=False) is a
    assert gp.isdtype(np.dtype("float32"), "real floating")
    assert gp.isdtype(a.dtype, ("integral", "real floating"))
    assert not gp.isdtype(np.dtype("int8"), "unsigned integer")
    assert gp.isdtype(gp.float64, gp.float64)


def test_an_empty_mask_of_another_shape_stands_for_an_all_false_one():
    """NumPy takes a boolean index with no elements whatever its shape (x of shape (1,),
    mask of shape (0,)): it selects nothing."""
    from gpunb.core.kernels.indexing.resolve import _false_mask

    m = np.zeros((0, 3), bool)
    assert _false_mask(m, (1, 3)).shape == (1, 3) and not _false_mask(m, (1, 3)).any()
    assert _false_mask(m, (0, 3)) is m
    full = np.ones(2, bool)
    assert _false_mask(full, (1,)) is full        # a non-empty mismatch still raises later
    with pytest.raises(IndexError, match="size of axis is 1 but size of corresponding boolean"):
        fake((1,))[np.ones(2, bool)]


# -- CPU: the conformance suite's runner ----------------------------------------------------

def test_the_runner_finds_and_collects_the_vendored_suite():
    r = subprocess.run([sys.executable, str(RUN), "--collect-only"], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "array_api_tests/test_linalg.py::" in r.stdout
    assert "tests collected" in r.stdout
    assert "don't match any collected tests" not in r.stdout + r.stderr     # xfails all match


def test_the_xfails_file_gives_a_reason_for_every_entry():
    lines = (ROOT / "tools" / "array_api" / "xfails.txt").read_text().splitlines()
    ids = [i for i, line in enumerate(lines) if line.startswith("array_api_tests/")]
    assert ids
    for i in ids:       # each entry is in a group that a comment opens
        j = i
        while j > 0 and lines[j - 1].startswith("array_api_tests/"):
            j -= 1
        assert j > 0 and lines[j - 1].startswith("#"), lines[i]
    assert all(not line or line.startswith(("#", "array_api_tests/")) for line in lines)


def test_the_runner_command_and_summary(tmp_path):
    sys.path.insert(0, str(RUN.parent))
    try:
        run = importlib.import_module("run")
    finally:
        sys.path.remove(str(RUN.parent))
    args = run.argparse.Namespace(suite=str(run.SUITE), xfails=str(run.XFAILS), max_examples=7,
                                  deadline=False, collect_only=False, json=str(tmp_path / "r.json"),
                                  n=0, pytest_args=["-k", "sum"])
    cmd, env, cwd = run.command(args)
    assert env["ARRAY_API_TESTS_MODULE"] == "gpunb" and env["ARRAY_API_TESTS_VERSION"] == "2025.12"
    assert "--max-examples=7" in cmd and "--hypothesis-disable-deadline" in cmd
    assert cmd[-2:] == ["-k", "sum"] and cwd == run.SUITE
    assert any(c.startswith("--xfails-file=") and c.endswith("xfails.txt") for c in cmd)
    with pytest.raises(SystemExit, match="not at"):
        run.command(run.argparse.Namespace(**{**vars(args), "suite": str(tmp_path)}))
    report = {"tests": [{"nodeid": "array_api_tests/test_a.py::test_x[1]", "outcome": "passed"},
                        {"nodeid": "array_api_tests/test_a.py::test_x[2]", "outcome": "failed",
                         "call": {"crash": {"message": "AssertionError: out=1"}}},
                        {"nodeid": "array_api_tests/test_b.py::test_y", "outcome": "xfailed"},
                        {"nodeid": "array_api_tests/test_b.py::test_z", "outcome": "skipped"}]}
    (tmp_path / "r.json").write_text(json.dumps(report))
    text = run.summarize(report)
    assert "4 collected, 3 ran" in text and "pass rate: 1/3 = 33.33%" in text
    assert "1 array_api_tests/test_a.py::test_x  failed: AssertionError: out=1" in text


# -- GPU: values against NumPy ----------------------------------------------------------------

@gpu
def test_namespace_through_array_api_compat_and_devices():
    compat = pytest.importorskip("array_api_compat")
    x = gp.arange(6.0).reshape(2, 3)
    assert compat.array_namespace(x) is gp and compat.device(x) == x.device
    info = gp.__array_namespace_info__()
    assert info.default_device() in info.devices() and x.device in info.devices()
    for name, make in _CREATION.items():
        if name != "from_dlpack":       # (its CPU entry passes host data, for the errors)
            assert make(x.device).device == x.device, name
    same(gp.asarray(x, device=x.device), x.get())
    same(x.to_device(x.device), x.get())
    same(x.mT, x.get().mT)
    same(gp.from_dlpack(x, device=x.device), x.get())
    same(gp.ones(3, dtype=None), np.ones(3, dtype=None))


@gpu
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_nextafter(dtype):
    a = rand((50,), dtype)
    b = rand((50,), dtype)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 65504.0, 1e-8, 2.0],
                       dtype)
    towards = np.array([1.0, -1.0, 0.0, 0.0, 1.0, np.nan, -np.inf, np.inf, 0.0, 2.0], dtype)
    for x, y in ((a, b), (special, towards), (a, np.full_like(a, np.inf)), (a, -a)):
        with np.errstate(all="ignore"):
            same(gp.nextafter(gp.asarray(x), gp.asarray(y)), np.nextafter(x, y))


@gpu
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "int32", "uint8", "bool"])
def test_round(dtype):
    x = rand((7, 9), dtype)
    if dtype[0] in "fc":
        x = x * np.array(3.7, dtype)
    g = gp.asarray(x)
    rtol = 1e-6 if dtype in ("float32", "complex64") else 1e-12
    for decimals in (0, 1, 2, -1):
        if dtype == "bool" and decimals:
            continue
        got, want = gp.round(g, decimals), np.round(x, decimals)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got.get(), want, rtol=rtol)


@gpu
@pytest.mark.parametrize("dtype", ["float64", "int8", "uint16", "bool", "complex64"])
def test_cumulative_sum_and_prod(dtype):
    x = rand((4, 5), dtype)
    if dtype in ("int8", "uint16"):
        x = (x % 3).astype(dtype)       # products that do not wrap
    g = gp.asarray(x)
    wide = "complex128" if dtype == "complex64" else "float64"
    for f in ("cumulative_sum", "cumulative_prod"):
        for kw in ({"axis": 0}, {"axis": 1}, {"axis": -1, "include_initial": True},
                   {"axis": 0, "include_initial": True, "dtype": wide}):
            got, want = getattr(gp, f)(g, **kw), getattr(np, f)(x, **kw)
            assert got.dtype == want.dtype and got.shape == want.shape, (f, kw)
            np.testing.assert_allclose(got.get(), want, rtol=1e-5, atol=1e-9)
        np.testing.assert_allclose(getattr(gp, f)(g[0], include_initial=True).get(),
                                   getattr(np, f)(x[0], include_initial=True), rtol=1e-5, atol=1e-9)


@gpu
@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8", "bool"])
def test_sort_and_argsort_descending_are_stable(dtype):
    x = rand((6, 40), dtype)
    if dtype[0] in "iu":
        x = (x % 4).astype(dtype)       # many ties
    g = gp.asarray(x)
    for axis in (-1, 0, None):
        flat = x.ravel() if axis is None else x
        ax = 0 if axis is None else axis
        want_idx = np.flip(np.argsort(np.flip(flat, ax), axis=ax, stable=True), ax)
        want_idx = flat.shape[ax] - 1 - want_idx
        same(gp.argsort(g, axis=axis, descending=True), want_idx)
        same(gp.sort(g, axis=axis, descending=True), np.flip(np.sort(flat, axis=ax), ax))
        same(gp.argsort(g, axis=axis, descending=False), np.argsort(x, axis=axis, stable=True))


@gpu
def test_astype_unstack_concat_permute_reshape_var_clip_meshgrid():
    x = rand((3, 4, 5), "float32")
    g = gp.asarray(x)
    same(gp.astype(g, "int16"), np.astype(x, "int16"))
    same(gp.astype(g, "float64", device=g.device), x.astype("float64"))
    for axis in (0, 1, -1):
        for got, want in zip(gp.unstack(g, axis=axis), np.unstack(x, axis=axis)):
            same(got, want)
    same(gp.concat([g, g], axis=None), np.concat([x, x], axis=None))
    same(gp.permute_dims(g, (1, 2, 0)), np.permute_dims(x, (1, 2, 0)))
    r = gp.reshape(g, (12, 5), copy=True)
    assert r.data.ptr != g.data.ptr
    same(r, x.reshape(12, 5))
    same(gp.reshape(g.mT, -1), x.mT.reshape(-1))
    np.testing.assert_allclose(gp.var(g, axis=1, correction=1).get(), np.var(x, axis=1, ddof=1),
                               rtol=1e-5)
    np.testing.assert_allclose(gp.std(g, correction=2).get(), np.std(x, correction=2), rtol=1e-5)
    same(gp.clip(g, min=-1, max=1), np.clip(x, min=-1, max=1))
    same(gp.clip(g, a_min=-1), np.clip(x, a_min=-1, a_max=None))
    same(gp.clip(g, max=0.5), np.clip(x, max=0.5))
    c = gp.clip(g)
    assert c.data.ptr != g.data.ptr
    same(c, np.clip(x, None, None))
    e = gp.asarray(np.array([], np.uint8))
    for got, want in zip(gp.meshgrid(e, e), np.meshgrid(e.get(), e.get())):
        same(got, want)
    for got, want in zip(gp.meshgrid(e, g[0, 0], indexing="ij"),
                         np.meshgrid(e.get(), x[0, 0], indexing="ij")):
        same(got, want)


@gpu
def test_standard_names_compute_as_numpys():
    x = rand((64,), "float64") / 4
    u = rand((64,), "uint8")
    g, gu = gp.asarray(x), gp.asarray(u)
    with np.errstate(all="ignore"):
        for name in ("acos", "asin", "atan", "acosh", "asinh", "atanh"):
            np.testing.assert_allclose(getattr(gp, name)(g).get(), getattr(np, name)(x), rtol=1e-12)
        np.testing.assert_allclose(gp.atan2(g, g[::-1]).get(), np.atan2(x, x[::-1]), rtol=1e-12)
        np.testing.assert_allclose(gp.pow(g, 3).get(), np.pow(x, 3), rtol=1e-12)
    same(gp.bitwise_left_shift(gu, 2), np.bitwise_left_shift(u, 2))
    same(gp.bitwise_right_shift(gu, 3), np.bitwise_right_shift(u, 3))
    same(gp.bitwise_invert(gu), np.bitwise_invert(u))
    same(gp.sort(gp.unique_values(gu)), np.sort(np.unique_values(u)))    # data-dependent shape
    same(g[g > 0], x[x > 0])                                # boolean indexing
    for shape, mask in (((1,), (0,)), ((1, 3), (0, 3)), ((1, 3), (0,)), ((2, 3), (2, 0))):
        h = np.ones(shape, np.float32)
        for m in (np.zeros(mask, bool), gp.zeros(mask, bool)):
            same(gp.asarray(h)[m], h[np.zeros(mask, bool)])


@gpu
def test_dlpack_no_copy_export_to_the_cpu_is_a_buffer_error():
    x = gp.arange(3.0)
    with pytest.raises(BufferError, match="copy=False"):
        x.__dlpack__(dl_device=(1, 0), copy=False)
    with pytest.raises(ValueError, match="copy=False"):      # gpunb's error before: still one
        x.__dlpack__(dl_device=(1, 0), copy=False)
