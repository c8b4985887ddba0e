"""The op table's newer ufuncs (deg2rad, rad2deg, fabs, fmod, float_power, heaviside, gcd,
lcm, ldexp, bitwise_count, divmod, modf, frexp) checked on the CPU: each loop's CUDA C++
expression, exactly as the kernels render it over the prelude, compiled for the host by the
host C++ compiler (``__device__`` defined away, as tests/test_complex_math.py does) and run
against NumPy's ufunc on edge values (zeros of both signs, infinities, NaN, the integer
extremes, a zero divisor). The GPU runs the same text (tests/test_gpu.py's table checks)."""

import ctypes

import numpy as np
import pytest

from gpunb.core.dtypes import SUPPORTED, compute_type
from gpunb.core.kernels.elementwise.ops import OPS
from gpunb.core.kernels.prelude import prelude
from tests.data import HOST_PRELUDE, host_library

NEW = ["deg2rad", "rad2deg", "fabs", "fmod", "float_power", "heaviside", "gcd", "lcm", "ldexp",
       "bitwise_count", "divmod", "modf", "frexp", "spacing"]
_SUP = {np.dtype(d).char: np.dtype(d) for d in SUPPORTED}


def _loops(name):
    """The op's loops whose dtypes gpunb supports, as dtype tuples (inputs then outputs);
    spacing's float16 loop steps half bits through PTX conversions (the GPU test has it)."""
    op = OPS[name]
    out = []
    for t in op.ufunc.types:
        ins, outs = t.split("->")
        chars = ins + outs
        if all(c in _SUP for c in chars) and not (name == "spacing" and "e" in chars):
            out.append(tuple(_SUP[c] for c in chars))
    return out


def _compute(dt: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dt == np.float16 else dt


def _source():
    lines = [*HOST_PRELUDE, "#define __popcll __builtin_popcountll", prelude()]
    for name in NEW:
        op = OPS[name]
        for i, loop in enumerate(_loops(name)):
            ins, outs = loop[:op.nin], loop[op.nin:]
            params = [f"const {compute_type(d)}* a{k}" for k, d in enumerate(ins)]
            params += [f"{compute_type(d)}* o{j}" for j, d in enumerate(outs)]
            args = [f"a{k}[n]" for k in range(op.nin)]
            body = []
            for j, d in enumerate(outs):
                expr = op.render(loop, args, j) if op.nout > 1 else op.render(loop, args)
                body.append(f"o{j}[n] = ({compute_type(d)})({expr});")
            lines.append(f'extern "C" void {name}_{i}({", ".join(params)}, long count) '
                         f'{{ for (long n = 0; n < count; ++n) {{ {" ".join(body)} }} }}')
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    return host_library(tmp_path_factory, "ops_host", _source(), ("-O1", "-ffp-contract=off", "-fwrapv"))


def _values(dt: np.dtype, rng, n=600, exponent=False):
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if exponent:
            edge = [0, 1, -1, 5, -5, 1100, -1100, info.max, info.min] if dt.kind == "i" else [0, 1]
            r = rng.integers(max(info.min, -1100), min(info.max, 1100), n - len(edge), endpoint=True)
        else:
            edge = [0, 1, info.max, info.min, info.max - 1, 2, 3, 6, 12] + ([-1, -2, -6] if dt.kind == "i" else [])
            r = rng.integers(info.min, info.max, n - len(edge), endpoint=True, dtype=dt)
            small = rng.integers(max(info.min, -60), min(info.max, 60), n // 2, dtype=dt)
            r[: n // 2] = small[: len(r[: n // 2])]
        return np.concatenate([np.array(edge, dt), r.astype(dt)])
    edge = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, np.inf, -np.inf, np.nan, 3.0, 180.0, 1e-40, -1e-310,
            np.finfo(dt).max, np.finfo(dt).tiny, 7.25, -7.25]
    r = rng.standard_normal(n - len(edge)) * rng.choice([1, 10, 1000, 1e-3], n - len(edge))
    with np.errstate(all="ignore"):
        return np.concatenate([np.array(edge), r]).astype(dt)


def _same(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype.kind == "f":
        both_nan = np.isnan(got) & np.isnan(want)
        ok = both_nan | ((got == want) & (np.signbit(got) == np.signbit(want)))
        bad = np.flatnonzero(~ok)
        assert not bad.size, (bad[:5], got[bad[:5]], want[bad[:5]])
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", NEW)
def test_loops_match_numpy(lib, name):
    op = OPS[name]
    rng = np.random.default_rng(abs(hash(name)) % (1 << 32))
    loops = _loops(name)
    assert loops, name
    for i, loop in enumerate(loops):
        ins, outs = loop[:op.nin], loop[op.nin:]
        args = [_values(d, rng, exponent=(name == "ldexp" and k == 1)) for k, d in enumerate(ins)]
        if op.nin == 2:       # every pair of edge values, then the random ones
            a, b = args
            m = 17
            args = [np.concatenate([np.repeat(a[:m], m), a]), np.concatenate([np.tile(b[:m], m), b])]
        with np.errstate(all="ignore"):
            want = op.ufunc(*args, signature=tuple(ins) + tuple(outs))
        want = want if isinstance(want, tuple) else (want,)
        bufs = [np.ascontiguousarray(x.astype(_compute(d))) for x, d in zip(args, ins)]
        res = [np.empty(bufs[0].shape, _compute(d)) for d in outs]
        ptrs = [b.ctypes.data_as(ctypes.c_void_p) for b in bufs + res]
        getattr(lib, f"{name}_{i}")(*ptrs, ctypes.c_long(bufs[0].size))
        for r, d, w in zip(res, outs, want):
            with np.errstate(all="ignore"):
                r = r.astype(d)
            if d.kind == "c":   # complex powers: the prelude's pow_ (as power's), not bit-exact
                np.testing.assert_allclose(r, w, rtol=1e-12 if d == np.complex128 else 1e-5,
                                           equal_nan=True)
            else:
                _same(r, w)


_NULL_GPU_OPERATORS = r"""
import sys
sys.path.insert(0, "benchmarks")
import host_null_gpu
host_null_gpu.install()
import numpy as np
import gpunb as gp
from gpunb.core import ufunc
from gpunb.core.runtime import fastcall
launches, general = [], []
record = fastcall._cu_launch
fastcall._cu_launch = lambda *a: (launches.append(a[1]), record(*a))[1]
slow = ufunc._fast_call
ufunc._fast_call = lambda f, args: (general.append(f.name), slow(f, args))[1]
a, b = gp.empty(1000, "float32"), gp.empty(1000, "float32")
d = gp.empty(1000, "float64")
out = []
for _ in range(3):
    out.append(((a + b).dtype.name, (2.0 + a).dtype.name, (a - 1).dtype.name, (a + d).dtype.name))
print(repr((out[-1], len(launches), general)))
"""


def test_operators_replay_the_ufuncs_prepared_call():
    """Without a GPU (the driver's calls made no-ops): a repeated a + b, 2.0 + a or a - 1
    launches through the ufunc's last prepared call straight from the operator (no general
    path), with NumPy's result types; a call of another signature (float32 + float64) misses
    it and takes the ufunc's own path, every time it alternates."""
    import ast
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    r = subprocess.run([sys.executable, "-c", _NULL_GPU_OPERATORS], cwd=root, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    kinds, launches, general = ast.literal_eval(r.stdout.strip().splitlines()[-1])
    assert kinds == ("float32", "float32", "float32", "float64")
    assert launches == 12
    # a + b, 2.0 + a and a - 1 take the general path on their first call only; add alternates
    # between two signatures, so a + d always misses the last prepared call
    assert general.count("subtract") == 1 and general.count("add") >= 4
