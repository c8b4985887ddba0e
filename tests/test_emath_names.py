"""``gpunb.emath`` (numpy.emath) and NumPy's remaining small names: ``typecodes``,
``ScalarType``, ``sctypeDict``, ``little_endian``, ``True_``, ``False_``,
``format_float_positional``, ``format_float_scientific``, ``fromregex``, ``show_runtime``.

CPU: the registry and NumPy's dispatch (over fake arrays); emath's steps (gpunb/_math/emath.py
is written against an array namespace and a flag reader) run with NumPy standing in, which
must give numpy.emath's dtypes and values exactly, reading a flag only for the kinds where the
answer can be yes; the device's flag is one fused reduction; NumPy's own objects are NumPy's;
the float formats' read back of a 0-d GPU array; fromregex's parse, its errors (NumPy's) and
its structured-to-plain step; show_runtime's two reports. GPU: every emath function against
numpy.emath over dtypes, out-of-domain values, NaN and infinities, 0-d, empty and strided
inputs; the formats and fromregex with real GPU arrays."""

import io
import re
import warnings

import numpy as np
import pytest

import gpunb as gp
from gpunb import _registry as R
from gpunb._math import emath as em
from gpunb._utility import floatformat
from gpunb._utility import io as gio
from gpunb.core.ndarray import ndarray
from tests.data import fake, same

gpu = pytest.mark.gpu
rng = np.random.default_rng(1729)

UNARY = ("sqrt", "log", "log2", "log10", "arccos", "arcsin", "arctanh")
EMATH = UNARY + ("logn", "power")
DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128")
VALUES = ("typecodes", "ScalarType", "sctypeDict", "little_endian", "True_", "False_")


def cases(dt) -> dict:
    """Named inputs of dtype ``dt``: inside every domain, negative, beyond +-1, NaN and
    infinities with and without negatives, 0-d, empty, 2-d random."""
    dt = np.dtype(dt)
    if dt.kind == "b":
        raw = {"inside": [False, True, False], "0-d": True}
    elif dt.kind == "u":
        raw = {"inside": [0, 1, 1, 0], "beyond": [0, 2, 5, 1], "0-d": 3, "0-d inside": 1}
    elif dt.kind == "i":
        raw = {"inside": [0, 1, 1, 0], "negative": [-3, 0, 1, 2, -1], "beyond": [0, 2, 5, 1],
               "0-d": -2, "0-d inside": 1}
    else:
        raw = {"inside": [0.0, 0.25, 0.5, 0.75], "negative": [-0.5, 0.25, -3.0, 4.0],
               "beyond": [0.5, 2.0, 7.0, -0.25], "special": [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0],
               "special, no negative": [np.nan, np.inf, 0.5, 0.0, 1.0], "0-d": -2.5,
               "0-d inside": 0.5, "-0.0 only": [-0.0, 0.5]}
    out = {k: np.asarray(v, dtype=dt) for k, v in raw.items()}
    if dt.kind == "c":
        out["complex parts"] = np.array([1 + 2j, -3 - 0.5j, 0.25 + 0j, 2 - 1j, complex(np.nan, 1)], dt)
    out["empty"] = np.zeros(0, dt)
    out["empty 2-d"] = np.zeros((2, 0), dt)
    if dt.kind != "b":
        r = rng.standard_normal((3, 5)) * 2
        if dt.kind in "iu":
            r = np.round(np.abs(r) if dt.kind == "u" else r)
        out["2-d random"] = r.astype(dt)
    return out


def host(f):
    """``f``'s result and warnings silenced (NumPy warns on log(0), arctanh(1)...)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return f()


def identical(got, want):
    """NumPy standing in: the very same operations, so the very same bits."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


def counting_flag(calls):
    def flag(which, x):
        calls.append((which, x.dtype.kind))
        return em.host_flag(which, x)
    return flag


# -- the registry and NumPy's dispatch --------------------------------------------------------

def test_emath_is_a_subpackage_with_numpys_names():
    assert gp.emath.__name__ == "gpunb.emath" and R.ENTRIES["emath"].kind == "module"
    assert sorted(gp.emath.__all__) == sorted(np.emath.__all__) == sorted(EMATH)
    assert "emath" in gp.__all__ and set(EMATH) <= set(dir(gp.emath))
    for name in EMATH:
        e = R.SUBMEMBERS[f"emath.{name}"]
        assert getattr(gp.emath, name) is getattr(em, name) and e.numpy == f"emath.{name}"
        assert R.numpy_function(getattr(np.emath, name)) is e
        assert R.numpy_function(getattr(np.lib.scimath, name)) is e     # the same objects
    with pytest.raises(AttributeError, match="module 'gpunb.emath' has no attribute 'exp'"):
        gp.emath.exp      # noqa: B018


def test_numpy_emath_on_gpu_arrays_runs_gpunbs(monkeypatch):
    calls = []
    monkeypatch.setattr(em, "_unary", lambda xp, flag, name, x: calls.append((xp, flag, name, x)) or "u")
    monkeypatch.setattr(em, "_logn", lambda xp, flag, n, x: calls.append((xp, flag, "logn", n, x)) or "n")
    monkeypatch.setattr(em, "_power", lambda xp, flag, x, p: calls.append((xp, flag, "power", x, p)) or "p")
    a, b = fake((4,)), fake((4,), "int32")
    for name in UNARY:
        assert getattr(np.emath, name)(a) == "u"
        assert calls.pop() == (gp, em.device_flag, name, a)
    assert np.emath.logn(b, a) == "n" and calls.pop() == (gp, em.device_flag, "logn", b, a)
    assert np.emath.power(a, b) == "p" and calls.pop() == (gp, em.device_flag, "power", a, b)
    assert np.lib.scimath.power(a, 2) == "p" and calls.pop()[3:] == (a, 2)


@pytest.mark.parametrize("name", VALUES)
def test_small_values_are_numpys_own_objects(name):
    e = R.ENTRIES[name]
    assert e.kind == "value" and e.numpy is None and name in gp.__all__
    assert getattr(gp, name) is getattr(np, name)
    assert gp.True_ and not gp.False_ and type(gp.True_) is np.bool_
    assert gp.sctypeDict["float32"] is np.float32 and "e" in gp.typecodes["Float"]


@pytest.mark.parametrize("name", ["format_float_positional", "format_float_scientific", "fromregex",
                                  "show_runtime"])
def test_small_functions_stand_for_numpys(name):
    e = R.ENTRIES[name]
    assert e.kind == "function" and e.numpy == name
    assert R.numpy_function(getattr(np, name)) is e and getattr(gp, name).__doc__


@pytest.mark.parametrize("name", ["bytes_", "str_", "object_", "void", "character", "flexible",
                                  "longdouble", "clongdouble"])
def test_host_only_types_are_numpys_and_arrays_of_them_raise(name):
    """NumPy's types with no GPU dtype are there for host code (issubdtype, isinstance), and
    an array of one is refused before anything touches a GPU, naming what the GPU has."""
    t = getattr(gp, name)
    assert t is getattr(np, name) and R.ENTRIES[name].kind == "type"
    if name not in ("character", "flexible"):            # the abstract ones make no dtype
        with pytest.raises(TypeError, match="not supported on the GPU"):     # UnsupportedDTypeError
            gp.zeros(3, t)


def test_host_helpers_are_numpys():
    assert gp.exceptions is np.exceptions and gp.dtypes is np.dtypes
    assert gp.getbufsize() == np.getbufsize() and gp.info is np.info
    old = gp.setbufsize(16384)
    try:
        assert np.getbufsize() == 16384
    finally:
        gp.setbufsize(old)


# -- emath's steps with NumPy standing in ---------------------------------------------------------

@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("name", UNARY)
def test_unary_steps_give_numpys_dtypes_and_values(name, dt):
    for label, x in cases(dt).items():
        calls = []
        got = host(lambda: em._unary(np, counting_flag(calls), name, x))
        want = host(lambda: getattr(np.emath, name)(x))
        identical(got, want)
        # a flag is read only where it can be set: never for booleans and complex numbers,
        # never 'negative' for unsigned integers
        which = em._DOMAIN[name]
        expected = [(which, x.dtype.kind)] if x.dtype.kind in ("if" if which == "negative" else "iuf") else []
        assert calls == expected, (label, calls)


@pytest.mark.parametrize("name", UNARY)
def test_unary_steps_on_python_and_numpy_scalars(name):
    for x in (-4, 4, 0.5, -0.5, 2.5, True, np.float32(-3), np.float16(0.5), np.int8(-2), np.uint8(2),
              complex(-1, 0), [-1.0, 2.0], [[0.5], [3.0]]):
        identical(host(lambda: em._unary(np, em.host_flag, name, x)),
                  host(lambda: getattr(np.emath, name)(x)))


def test_complex_promotion_follows_numpys_tocomplex():
    """complex64 for float32 and the integers up to 16 bits, complex128 for the rest (float16
    and the 32- and 64-bit integers included), as numpy.emath gives."""
    for dt in DTYPES[1:]:       # (a boolean is never outside a domain)
        x = np.array([2, 0], dt)
        want = host(lambda: np.emath.arcsin(x)).dtype
        assert want.kind == "c" and em._tocomplex(x).dtype == want, dt
    assert em._tocomplex(np.ones(2, np.float16)).dtype == np.complex128
    assert em._tocomplex(np.ones(2, np.float32)).dtype == np.complex64
    assert em._tocomplex(np.ones(2, np.uint16)).dtype == np.complex64
    assert em._tocomplex(np.ones(2, np.int32)).dtype == np.complex128


NS = (2, 10, -2, 0.5, np.float32(3), np.array([2.0, 3.0, 10.0, 4.0], np.float32), np.array([2, -3, 4, 5]),
      np.array(-2.0, np.float16))
XS_LOGN = {"positive": [4.0, 8.0, 0.5, 1.0], "negative": [4.0, -8.0, 0.5, 1.0]}


@pytest.mark.parametrize("dt", ["int8", "int64", "uint16", "float16", "float32", "float64", "complex64"])
def test_logn_steps(dt):
    for label, values in XS_LOGN.items():
        with np.errstate(all="ignore"):
            x = np.asarray(values).astype(dt)
        for n in NS:
            calls = []
            identical(host(lambda: em._logn(np, counting_flag(calls), n, x)),
                      host(lambda: np.emath.logn(n, x)))
            assert len(calls) == (x.dtype.kind in "if") + (np.asarray(n).dtype.kind in "if")


PS = (2, -2, 0.5, -1.5, np.float32(0.5), np.int8(3), np.int8(-1), np.array([2, 3, 1, 2], np.int32),
      np.array([2, -1, 3, 0]), np.array([0.5, -2.0, 1.0, 3.0], np.float16), np.array(-2),
      np.uint8(2), np.array([1 + 1j, 2, -1, 0.5], np.complex64))
XS_POWER = {"positive": [0.5, 1.0, 2.0, 3.0], "negative": [-2.0, 0.5, 3.0, -1.5],
            "integers": [1, 2, 3, 4], "negative integers": [-2, 1, 3, -1]}


@pytest.mark.parametrize("dt", ["int8", "int32", "int64", "uint8", "float16", "float32", "float64",
                                "complex64", "complex128"])
def test_power_steps(dt):
    for label, values in XS_POWER.items():
        with np.errstate(all="ignore"):
            x = np.asarray(values).astype(dt)
        for p in PS:
            calls = []
            identical(host(lambda: em._power(np, counting_flag(calls), x, p)),
                      host(lambda: np.emath.power(x, p)))
            # the base's flag for real signed kinds, the exponent's for signed integers only
            assert len(calls) == (x.dtype.kind in "if") + (np.asarray(p).dtype.kind == "i"), (label, p)


def test_device_flag_is_one_fused_reduction_and_skips_empty_arrays():
    for which in em.PREDICATES:
        for dt in ("int8", "uint32", "int64", "float16", "float32", "float64"):
            i = em._fused[which].inspect(np.ones((3, 4), dt), arch="sm_90")
            assert i.kind == "reduction" and i.kernel.reducer == "any", (which, dt)
            assert f"emath_any_{which}" in i.source
        assert len(i.compile()) > 0         # real NVRTC (the float64 kernel)
        # an empty array launches nothing (here, without a GPU, a launch would raise)
        assert em.device_flag(which, fake((0,), "float32")) is False
        assert em.device_flag(which, fake((3, 0), "int8")) is False


def test_predicates_are_numpys_tests():
    x = np.array([-2.0, -1.0, -0.0, 0.0, 0.5, 1.0, 1.5, np.nan, -np.inf, np.inf])
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(em.PREDICATES["negative"](x), np.isreal(x) & (x < 0))
        np.testing.assert_array_equal(em.PREDICATES["outside_unit"](x), np.isreal(x) & (abs(x) > 1))
    assert not em.host_flag("negative", np.array([np.nan, -0.0, 1.0]))
    assert em.host_flag("outside_unit", np.array([0.0, -np.inf]))


# -- float formats ----------------------------------------------------------------------------

@pytest.mark.parametrize("value", [np.float32(0.1), np.float16(0.3), np.float64(1 / 3), 2.5, np.int64(7),
                                   np.float32(-1e-8), np.float64(np.inf)])
def test_float_formats_of_host_scalars_are_numpys(value):
    for kw in ({}, dict(precision=4, unique=False), dict(sign=True, min_digits=3, trim="-")):
        assert gp.format_float_positional(value, **kw) == np.format_float_positional(value, **kw)
        assert gp.format_float_scientific(value, **kw) == np.format_float_scientific(value, **kw)
    assert gp.format_float_positional(value, pad_left=5, pad_right=4) == \
        np.format_float_positional(value, pad_left=5, pad_right=4)
    assert gp.format_float_scientific(value, exp_digits=4) == np.format_float_scientific(value, exp_digits=4)


def test_float_formats_read_a_0d_gpu_array_back_as_its_numpy_scalar(monkeypatch):
    read = []
    monkeypatch.setattr(floatformat, "_host", lambda a: read.append(a) or np.asarray(np.float32(0.1)))
    a = fake((), "float32")
    assert gp.format_float_positional(a) == np.format_float_positional(np.float32(0.1)) == "0.1"
    assert gp.format_float_scientific(a, precision=3) == np.format_float_scientific(np.float32(0.1), precision=3)
    assert len(read) == 2 and all(r is a for r in read)

    class Foreign:          # another library's 0-d GPU array
        __cuda_array_interface__ = {"shape": (), "typestr": "<f4", "data": (0x10000, False), "version": 3}
        shape = ()

    f = Foreign()
    assert gp.format_float_positional(f, sign=True) == "+0.1" and read[-1] is f


def test_float_formats_refuse_other_gpu_arrays_as_numpy_does_without_reading(monkeypatch):
    def no_read(a):
        raise AssertionError("read back")
    monkeypatch.setattr(floatformat, "_host", no_read)
    with pytest.raises(TypeError) as want:
        np.format_float_positional(np.ones(1))
    for shape in ((1,), (2, 3), (0,)):
        for f in (gp.format_float_positional, gp.format_float_scientific):
            with pytest.raises(TypeError, match=re.escape(str(want.value))):
                f(fake(shape))
    with pytest.raises(ValueError, match="precision must be greater than 0"):   # NumPy's own checks
        gp.format_float_positional(1.5, precision=0, fractional=False)


# -- fromregex ----------------------------------------------------------------------------------

TEXT = "1 2.5 7\n3 -4.25 8\n10 0.125 9\n"


@pytest.fixture
def uploads(monkeypatch):
    """fromregex's upload replaced by the host array itself (and recorded)."""
    done = []
    monkeypatch.setattr(gio, "_upload", lambda h: done.append(h) or h)
    return done


@pytest.mark.parametrize("regexp, dtype", [
    (r"(\d+) ", [("a", np.int64)]),
    (r"(-?[\d.]+) (-?[\d.]+)", [("a", np.float64), ("b", np.float64)]),
    (r"(\d+) (-?[\d.]+) (\w)", [("a", np.float32), ("b", np.float32), ("c", np.float32)]),
    (r"(\d+) -?[\d.]+ (\d+)", np.dtype([("a", np.int32), ("b", np.int32)])),
    (r"(\d+)\s(-?[\d.]+)", [("a", np.float64), ("b", np.float64)]),
])
def test_fromregex_parses_with_numpy_and_uploads_plain_data_once(tmp_path, uploads, regexp, dtype):
    path = tmp_path / "t.txt"
    path.write_text(TEXT)
    want = host(lambda: np.fromregex(path, regexp, dtype))
    got = gp.fromregex(path, regexp, dtype)
    assert len(uploads) == 1 and got is uploads[0]
    names = want.dtype.names
    if len(names) == 1:
        identical(got, want[names[0]])
    else:
        assert got.shape == (len(want), len(names))
        for j, n in enumerate(names):
            identical(got[:, j], want[n])
    # a file object and a compiled pattern, as NumPy takes them
    identical(gp.fromregex(io.StringIO(path.read_text()), re.compile(regexp), dtype), got)


def test_fromregex_without_matches_gives_empty_plain_arrays(uploads):
    assert gp.fromregex(io.StringIO("none"), r"(\d+) ", [("a", np.int64)]).shape == (0,)
    assert gp.fromregex(io.StringIO("none"), r"(\d+) (\d+)", [("a", np.int64), ("b", np.int64)]).shape == (0, 2)


@pytest.mark.parametrize("regexp, dtype", [
    (r"(\d+", [("a", np.int64)]),                                   # NumPy's re.error
    (r"(\d+)", np.int64),                                          # not structured
    (r"(\d+) (-?[\d.]+)", [("a", np.int64)]),                      # two groups, one field
    (r"(\d+) (-?[\d.]+)", "i8,f8,i8"),
])
def test_fromregex_errors_are_numpys(regexp, dtype, uploads):
    with pytest.raises(Exception) as want:
        np.fromregex(io.StringIO(TEXT), regexp, dtype)
    with pytest.raises(type(want.value), match=re.escape(str(want.value))):
        gp.fromregex(io.StringIO(TEXT), regexp, dtype)
    assert not uploads


@pytest.mark.parametrize("dtype", [[("a", np.int64), ("b", np.float64)], [("a", np.int32), ("b", np.int16)],
                                   [("a", np.float64, (2,))], [("a", [("x", np.int64)])]])
def test_structured_results_that_are_no_columns_raise(dtype):
    from gpunb.core.dtypes import UnsupportedDTypeError

    with pytest.raises(UnsupportedDTypeError, match="structured arrays are not GPU data"):
        gio._unstructured(np.zeros(2, np.dtype(dtype)))


def test_fromregex_of_no_gpu_data_raises_before_uploading():
    """Mixed fields, and one field of a dtype the GPU has not (the upload checks the dtype
    before it allocates: no GPU needed to see the error)."""
    with pytest.raises(TypeError, match="structured arrays are not GPU data"):
        gp.fromregex(io.StringIO("1 2\n"), r"(\d) (\d)", [("a", np.int64), ("b", np.float64)])
    with pytest.raises(TypeError, match="dtype <U4 is not supported on the GPU"):
        gp.fromregex(io.StringIO("ab cd "), r"(\w+) ", [("s", "U4")])


# -- show_runtime -------------------------------------------------------------------------------

def test_show_runtime_prints_numpys_report_then_gpunbs(capsys):
    np.show_runtime()
    numpy_part = capsys.readouterr().out
    gp.show_runtime()
    text = capsys.readouterr().out
    assert text.startswith(numpy_part) and "numpy_version" in numpy_part
    gpunb_part = text[len(numpy_part):]
    assert gpunb_part.startswith("gpunb:\n")
    assert "NVRTC:" in gpunb_part and gp.__version__ in gpunb_part
    assert str(gp.kernel_cache().directory) in gpunb_part


# -- on the GPU -----------------------------------------------------------------------------------

RTOL = {"e": 2e-3, "f": 1e-5, "F": 1e-5, "d": 1e-12, "D": 1e-12}


def close(got, want):
    """The GPU result equals numpy.emath's: dtype and shape exactly, values within a few ulp
    of the result's precision (CUDA's math functions against glibc's); NaNs and infinities
    where NumPy has them."""
    assert isinstance(got, ndarray)
    got, want = gp.asnumpy(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    tol = RTOL.get(want.dtype.char)
    if tol is None:         # integers and booleans: exact
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def on_gpu(v):
    return gp.asarray(v) if isinstance(v, np.ndarray) else v


@gpu
@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("name", UNARY)
def test_gpu_unary_matches_numpy_emath(name, dt):
    for label, x in cases(dt).items():
        got = getattr(gp.emath, name)(gp.asarray(x))
        close(got, host(lambda: getattr(np.emath, name)(x)))
        # NumPy's own function on the GPU array runs gpunb's (__array_function__)
        close(getattr(np.emath, name)(gp.asarray(x)), host(lambda: getattr(np.emath, name)(x)))


@gpu
@pytest.mark.parametrize("name", UNARY)
def test_gpu_unary_of_scalars_gives_0d_arrays(name):
    for x in (-4, 4, 0.5, -2.5, np.float32(-3), np.float16(0.5), np.int8(-2), np.uint8(2)):
        close(getattr(gp.emath, name)(x), host(lambda: getattr(np.emath, name)(x)))


@gpu
@pytest.mark.parametrize("name", ["sqrt", "log10", "arcsin"])
def test_gpu_flag_sees_every_element_and_only_the_views(name):
    """The fused any() covers a large array (its last element decides) and reads a strided
    view's own elements only."""
    f, want_of = getattr(gp.emath, name), getattr(np.emath, name)
    for dt in ("float32", "float64", "int32"):
        n = 300_001
        x = rng.uniform(0, 1, n).astype(dt) if dt != "int32" else rng.integers(0, 2, n).astype(dt)
        x[-1] = -3                      # out of every domain
        want = host(lambda: want_of(x))
        assert want.dtype.kind == "c"
        close(f(gp.asarray(x)), want)
        y = x.copy()
        y[-1] = 0
        y[1::2] = -3                    # out of the domain only where the view skips
        want = host(lambda: want_of(y[::2]))
        assert want.dtype.kind != "c"
        close(f(gp.asarray(y)[::2]), want)
        h2 = y[:-1].reshape(500, 600)   # 2-d, transposed, strided
        close(f(gp.asarray(h2).T[:, ::2]), host(lambda: want_of(h2.T[:, ::2])))
        close(f(gp.asarray(h2).T[::2, :]), host(lambda: want_of(h2.T[::2, :])))


@gpu
@pytest.mark.parametrize("dt", ["int8", "int64", "uint16", "float16", "float32", "float64", "complex64",
                                "complex128"])
def test_gpu_logn_matches_numpy_emath(dt):
    for label, values in XS_LOGN.items():
        with np.errstate(all="ignore"):
            x = np.asarray(values).astype(dt)
        for n in NS:
            close(gp.emath.logn(on_gpu(n), gp.asarray(x)), host(lambda: np.emath.logn(n, x)))
    close(np.emath.logn(gp.asarray(np.array([2.0, -2.0])), gp.asarray(np.array([8.0, 4.0]))),
          host(lambda: np.emath.logn(np.array([2.0, -2.0]), np.array([8.0, 4.0]))))


@gpu
@pytest.mark.parametrize("dt", ["int8", "int32", "int64", "uint8", "float16", "float32", "float64",
                                "complex64", "complex128"])
def test_gpu_power_matches_numpy_emath(dt):
    for label, values in XS_POWER.items():
        with np.errstate(all="ignore"):
            x = np.asarray(values).astype(dt)
        for p in PS:
            close(gp.emath.power(gp.asarray(x), on_gpu(p)), host(lambda: np.emath.power(x, p)))
            close(np.emath.power(gp.asarray(x), on_gpu(p)), host(lambda: np.emath.power(x, p)))
    close(gp.emath.power(-8, 1 / 3), host(lambda: np.emath.power(-8, 1 / 3)))
    e = np.zeros(0, dt)
    close(gp.emath.power(gp.asarray(e), 2), host(lambda: np.emath.power(e, 2)))


@gpu
def test_gpu_float_formats_of_0d_arrays():
    h = np.array([0.1, 0.7, 0.3], np.float32)
    g = gp.asarray(h)
    assert gp.format_float_positional(g.max()) == np.format_float_positional(h.max()) == "0.7"
    assert gp.format_float_scientific(g[0], precision=2) == np.format_float_scientific(h[0], precision=2)
    x16 = np.float16(0.3)
    assert gp.format_float_positional(gp.asarray(x16), unique=False, precision=10) == \
        np.format_float_positional(x16, unique=False, precision=10) == "0.3000488281"
    with pytest.raises(TypeError, match="only 0-dimensional arrays"):
        gp.format_float_positional(g[:1])


@gpu
def test_gpu_fromregex_values(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("1 2.5\n3 -4.25\n10 0.125\n")
    got = gp.fromregex(path, r"(\d+) (-?[\d.]+)", [("a", np.float64), ("b", np.float64)])
    want = np.fromregex(path, r"(\d+) (-?[\d.]+)", [("a", np.float64), ("b", np.float64)])
    assert isinstance(got, ndarray)
    same(got, np.stack([want["a"], want["b"]], axis=1))
    one = gp.fromregex(path, r"(\d+) ", [("n", np.int32)])
    same(one, np.fromregex(path, r"(\d+) ", [("n", np.int32)])["n"])
    same(gp.fromregex(io.StringIO("x"), r"(\d+) ", [("n", np.int32)]), np.zeros(0, np.int32))
