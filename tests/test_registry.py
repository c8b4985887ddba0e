"""The registry of public names (gpunb/_registry.py) and what derives from it: the package
face, ndarray's methods and operators, NumPy's dispatch and what @fuse traces. CPU only:
arrays over a made-up address carry everything that is checked before a kernel runs."""

import inspect

import numpy as np
import pytest

import gpunb as gp
from gpunb import _registry as R
from gpunb.core.fusion.tracer import Proxy, fusable
from gpunb.core.ndarray import ndarray
from gpunb.core.ufunc import ufunc
from tests.data import fake

EAGER = {"__version__", "CacheWarning", "CompileError", "GPUNBError", "GPUUnavailableError",
         "KernelArgumentError", "inf", "nan", "pi", "e", "newaxis"}


def test_face_all_and_dir_agree_with_the_registry():
    assert len(gp.__all__) == len(set(gp.__all__))
    assert set(gp.__all__) == EAGER | set(R.ENTRIES)
    assert set(gp.__all__) <= set(dir(gp))
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        gp.nonexistent      # noqa: B018


@pytest.mark.parametrize("name", sorted(R.ENTRIES))
def test_every_entry_resolves_to_what_it_says(name):
    e = R.ENTRIES[name]
    obj = getattr(gp, name)
    impl = R.implementation(name)
    if e.kind == "ufunc":
        assert isinstance(obj, ufunc) and obj is impl
        assert e.numpy == name and callable(getattr(np, name))
    elif e.kind == "type":         # NumPy's scalar types themselves, as in CuPy
        assert obj is getattr(np, name)
    elif e.kind == "class":
        assert inspect.isclass(obj) and obj.__name__ == name
    elif e.kind == "module":
        assert inspect.ismodule(obj) and obj.__name__ == f"gpunb.{e.target}"
    elif e.kind == "value":        # no function: an object used by indexing (mgrid[...]), a constant
        assert not callable(obj) and (type(obj).__doc__ or "").strip(), f"gpunb.{name}"
    else:
        assert callable(obj)
        assert (obj.__doc__ or "").strip(), f"gpunb.{name} has no docstring"
        if e.fuse != "method":
            assert obj is impl
        else:       # traced values go to their method, everything else to the implementation
            assert obj.__wrapped__ is impl
    if e.numpy is not None and e.kind != "ufunc":
        target = np
        for part in e.numpy.split("."):
            target = getattr(target, part)
        assert R.numpy_function(target) is e


@pytest.mark.parametrize("name", sorted(R.SUBMEMBERS))
def test_every_subpackage_member_resolves_to_what_it_says(name):
    package, _, attr = name.rpartition(".")        # 'lib.stride_tricks.as_strided' nests
    module = gp
    for part in package.split("."):
        module = getattr(module, part)
    e = R.SUBMEMBERS[name]
    assert attr in module.__all__ and attr in dir(module)
    obj = getattr(module, attr)
    assert obj is R.implementation(name)
    if e.kind == "class":
        assert inspect.isclass(obj) and obj.__name__ == attr
    elif e.kind == "module":
        assert inspect.ismodule(obj)
    else:
        assert callable(obj) and (obj.__doc__ or "").strip(), f"gpunb.{name} has no docstring"
    if e.numpy is not None:
        target = np
        for part in e.numpy.split("."):
            target = getattr(target, part)
        assert R.numpy_function(target) is e
    with pytest.raises(AttributeError, match=f"module 'gpunb.{package}' has no attribute 'nonexistent'"):
        module.nonexistent      # noqa: B018


def test_numpy_names_are_unique_and_only_the_tables():
    numpy_names = [e.numpy for e in (*R.ENTRIES.values(), *R.SUBMEMBERS.values()) if e.numpy]
    assert len(numpy_names) == len(set(numpy_names))
    # gpunb's own names never override a NumPy function by accident
    for name in ("compile", "warm", "fuse", "events", "asnumpy", "from_dlpack"):
        assert R.ENTRIES[name].numpy is None


def test_methods_and_operators_come_from_the_registry():
    for name, e in R.METHODS.items():
        got = getattr(ndarray, name)
        target = R._load(e.target)
        if inspect.isfunction(target):
            assert got is target, name
        else:       # a ufunc, bound as a method
            assert got.__name__ == name
    for dunder, ufunc_name, role in R.operators():
        assert callable(getattr(ndarray, dunder)), dunder
        assert callable(getattr(Proxy, dunder)), dunder
    assert {"__add__", "__radd__", "__iadd__", "__eq__", "__neg__", "__pow__", "__rpow__",
            "__ipow__", "__invert__"} <= {d for d, _, _ in R.operators()}
    assert ndarray.__hash__ is None


def test_install_refuses_a_method_the_class_defines():
    class Array:
        def sum(self):
            return 0

    with pytest.raises(TypeError, match="Array.sum is defined both"):
        R.install(Array)


def test_numpy_functions_dispatch_to_gpunb_or_raise_naming_the_function():
    a = fake()
    assert np.shape(a) == (3, 4) and np.ndim(a) == 2 and np.size(a) == 12
    t = np.transpose(a)
    assert isinstance(t, ndarray) and t.shape == (4, 3) and t.data.ptr == a.data.ptr
    m = np.moveaxis(fake((2, 3, 4)), 0, -1)
    assert isinstance(m, ndarray) and m.shape == (3, 4, 2)
    assert isinstance(np.expand_dims(a, 0), ndarray) and np.squeeze(fake((1, 3))).shape == (3,)
    with pytest.raises(TypeError, match="numpy.busday_count is not supported on gpunb arrays"):
        np.busday_count(a[0], a[1])     # (polydiv was the example until gpunb had it)


def test_dtype_routines_read_gpu_arrays_by_their_dtype():
    a = fake(dtype="float32")
    assert gp.result_type(a, 1.0) == np.float32 and np.result_type(a, 1.0) == np.float32
    assert gp.result_type(a, np.float64(1)) == np.float64        # a NumPy scalar is strong
    assert gp.result_type(a, fake(dtype="int32")) == np.float64
    assert gp.can_cast(a, np.float64) and not np.can_cast(a, np.int32)
    assert gp.can_cast(a, "float16", "same_kind") and not gp.can_cast(a, "float16")
    assert gp.issubdtype(a.dtype, gp.floating) and not gp.isscalar(a) and gp.isscalar(1.0)
    assert gp.promote_types("int8", "uint8") == np.int16
    assert gp.finfo(gp.float32).eps == np.finfo(np.float32).eps and gp.iinfo(gp.int8).max == 127
    assert gp.dtype("f4") == gp.float32 and gp.bool is np.bool_ and gp.intp is np.intp
    for name in ("bool_", "int8", "uint64", "float16", "complex128", "half", "double"):
        assert np.dtype(getattr(gp, name)) in gpunb_dtypes()


@pytest.mark.parametrize("t", ["float16", "float32", "float64", "complex64", "complex128"])
def test_finfo_has_numpys_values_as_python_floats(t):
    """The array API's finfo: float fields are Python floats equal to NumPy's, the rest NumPy's;
    a gpunb array, a dtype and a type all give the same object."""
    want, got = np.finfo(t), gp.finfo(fake(dtype=t))
    assert got is gp.finfo(np.dtype(t)) is gp.finfo(getattr(gp, t))
    for name in ("eps", "epsneg", "max", "min", "resolution", "smallest_normal",
                 "smallest_subnormal", "tiny"):
        assert type(getattr(got, name)) is float, name
        assert getattr(got, name) == getattr(want, name), name
    for name in ("bits", "dtype", "iexp", "machep", "maxexp", "minexp", "negep", "nexp", "nmant",
                 "precision"):
        assert getattr(got, name) == getattr(want, name) and type(getattr(got, name)) is \
            type(getattr(want, name)), name
    assert repr(got) == repr(want) and str(got) == str(want)
    with pytest.raises(ValueError, match="not inexact"):
        gp.finfo(np.int32)


def gpunb_dtypes():
    from gpunb.core.dtypes import SUPPORTED

    return SUPPORTED


def test_numpy_ufuncs_dispatch_by_name():
    for name in ("sin", "add", "divide", "logaddexp", "conjugate"):
        assert R.numpy_ufunc(getattr(np, name)) is getattr(gp, name)
    assert R.numpy_ufunc(np.isnat) is None


def test_fusable_names_are_traced():
    """Every fusable entry traces, through gpunb's function and NumPy's: one example each
    (a new fusable entry needs a line here)."""
    examples = {
        "where": lambda x, y: (gp.where(x > 0, x, y), np.where(x > 0, x, y)),
        "clip": lambda x, y: (gp.clip(x, -1, 1), np.clip(x, -1, 1)),
        "sum": lambda x, y: (gp.sum(x * y, axis=1), np.sum(x * y, axis=1)),
        "prod": lambda x, y: (gp.prod(x, axis=0), np.prod(x, axis=0)),
        "amax": lambda x, y: (gp.amax(x + y), np.amax(x + y)),
        "amin": lambda x, y: (gp.amin(x, axis=1), np.amin(x, axis=1)),
        "max": lambda x, y: (gp.max(x, axis=0, keepdims=True), np.max(x, axis=0, keepdims=True)),
        "min": lambda x, y: (gp.min(x - y), np.min(x - y)),
        "mean": lambda x, y: (gp.mean(x, axis=1), np.mean(x, axis=1)),
        "any": lambda x, y: (gp.any(x > y, axis=0), np.any(x > y, axis=0)),
        "all": lambda x, y: (gp.all(x > y), np.all(x > y)),
        "reshape": lambda x, y: (gp.reshape(x, (2, 6)) + 1, np.reshape(x, (2, 6)) + 1),
        "squeeze": lambda x, y: (gp.squeeze(x[None], 0) * y, np.squeeze(x[None], 0) * y),
        "expand_dims": lambda x, y: (gp.expand_dims(x, 0) + 1, np.expand_dims(x, 0) + 1),
        "isclose": lambda x, y: (gp.isclose(x, y) & (x > 0), np.isclose(x, y) & (x > 0)),
    }
    assert set(examples) == set(fusable())
    x, y = np.ones((3, 4), np.float32), np.ones((3, 4), np.float32)
    for name, example in examples.items():
        for which in (0, 1):
            f = gp.fuse(lambda a, b, ex=example, w=which: ex(a, b)[w])
            i = f.inspect(x, y, arch="sm_90")
            assert i.source and i.kind in ("elementwise", "reduction"), name
    with pytest.raises(gp.FusionError, match="numpy.sort"):
        gp.fuse(lambda a: np.sort(a)).inspect(x)


def test_reduction_methods_of_traced_values_follow_ndarrays():
    f = gp.fuse(lambda a: a.max(0, keepdims=True))
    assert f.inspect(np.ones((3, 4), np.float32)).kernel.reducer == "max"
    with pytest.raises(TypeError, match="unexpected keyword argument 'dtype'"):
        gp.fuse(lambda a: a.max(dtype=np.float64)).inspect(np.ones(3, np.float32))
    i = gp.fuse(lambda a: a.sum(0, np.float64)).inspect(np.ones((3, 4), np.float32))
    assert i.kernel.out == np.float64
