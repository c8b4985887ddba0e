"""gpunb.random: Philox4x64-10 in generated CUDA, Generator / default_rng, the legacy API.

CPU: Random123's known-answer vectors on the pure-Python Philox; NumPy's stream replayed by
an emulator of the kernels' index arithmetic (:mod:`gpunb.core.kernels.random.plan` with the
reference), value for value and state for state against NumPy's own Philox; NVRTC compiles
every kernel kind; NumPy's errors for bad arguments. GPU: NumPy bit equality of ``random``
(float64, float32), ``integers`` (every dtype, many ranges, ranges that reject often,
endpoint), ``uniform``, ``bytes``; consecutive calls; statistics (moments, KS tests) of the
other distributions; reproducibility, independent streams, permutations.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gpunb as gp
from gpunb.core.build.compiler import compile_program
from gpunb.core.kernels.random import codegen as cg
from gpunb.core.kernels.random import plan as pl
from gpunb.core.kernels.random.reference import (M0_32, M1_32, MASK64, W0_32, W1_32, counter_words,
                                                 dist_counter, key32, philox4x32, philox4x64,
                                                 round_keys32)

gpu = pytest.mark.gpu
INT_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")

# Random123's kat_vectors for Philox4x64 (rounds, counter[4], key[2], expected[4]).
KAT = [
    (7, [0] * 4, [0] * 2, "5dc8ee6268ec62cd 139bc570b6c125a0 84d6deb4fb65f49e aff7583376d378c2"),
    (7, [MASK64] * 4, [MASK64] * 2,
     "071dd84367903154 48e2bbdc722b37d1 6afa9890bb89f76c 9194c8d8ada56ac7"),
    (7, [0x243f6a8885a308d3, 0x13198a2e03707344, 0xa4093822299f31d0, 0x082efa98ec4e6c89],
     [0x452821e638d01377, 0xbe5466cf34e90c6c],
     "513a366704edf755 f05d9924c07044d3 bef2cb9cbea74c6c 8db948de4caa1f8a"),
    (10, [0] * 4, [0] * 2, "16554d9eca36314c db20fe9d672d0fdc d7e772cee186176b 7e68b68aec7ba23b"),
    (10, [MASK64] * 4, [MASK64] * 2,
     "87b092c3013fe90b 438c3c67be8d0224 9cc7d7c69cd777b6 a09caebf594f0ba0"),
    (10, [0x243f6a8885a308d3, 0x13198a2e03707344, 0xa4093822299f31d0, 0x082efa98ec4e6c89],
     [0x452821e638d01377, 0xbe5466cf34e90c6c],
     "a528f45403e61d95 38c72dbd566e9788 a5a1610e72fd18b5 57bd43b5e52b7fe6"),
]


@pytest.mark.parametrize("rounds,counter,key,want", KAT)
def test_kat_reference(rounds, counter, key, want):
    assert philox4x64(counter, key, rounds) == tuple(int(w, 16) for w in want.split())


# Random123's kat_vectors for Philox4x32-10 (the continuous distributions' generator).
KAT32 = [([0] * 4, [0] * 2, "6627e8d5 e169c58d bc57ac4c 9b00dbd8"),
         ([0xFFFFFFFF] * 4, [0xFFFFFFFF] * 2, "408f276d 41c83b0e a20bc7c6 6d5451fd"),
         ([0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344], [0xa4093822, 0x299f31d0],
          "d16cfe09 94fdcceb 5001e420 24126ea1")]


@pytest.mark.parametrize("counter,key,want", KAT32)
def test_kat32_reference(counter, key, want):
    assert philox4x32(counter, key) == tuple(int(w, 16) for w in want.split())


# -- CPU: the kernels' index arithmetic replays NumPy's stream ----------------------------------

def _u64(S, o, p, key):
    a = o + p
    return philox4x64(counter_words(S + a // 4), key)[a % 4]


def _candidates(state, width, count):
    """The words the kernels see, in candidate order (as codegen's fill/write index them)."""
    S, o = state.start()
    if width == 64:
        return [_u64(S, o, p, state.key) for p in range(count)]
    per = max(1, 32 // width)
    words, p = ([state.uinteger] if state.has_uint32 else []), 0
    while len(words) * per < count:
        x = _u64(S, o, p, state.key)
        words += [x & 0xFFFFFFFF, x >> 32]
        p += 1
    mask = (1 << width) - 1
    return [(w >> (width * part)) & mask for w in words for part in range(per)][:count]


def emulate_integers(state, off, rng, n, dtype):
    width, full, threshold = pl.integer_plan(rng, np.dtype(dtype))
    if width == 0 or n == 0:
        return [off] * n
    limit = n if full or threshold == 0 else pl.candidate_limit(n, width, threshold)
    out, consumed = [], 0
    for e, x in enumerate(_candidates(state, width, limit)):
        if full:
            v = x
        elif (x * (rng + 1)) & ((1 << width) - 1) < threshold:
            continue
        else:
            v = (x * (rng + 1)) >> width
        out.append((off + v) & MASK64)
        if len(out) == n:
            consumed = e + 1
            break
    assert len(out) == n
    pl.consume(state, width, consumed)
    return out


def emulate_random(state, n, dtype):
    if np.dtype(dtype) == np.float64:
        vals = [(x >> 11) * 2.0 ** -53 for x in _candidates(state, 64, n)]
        state.advance64(n)
    else:
        vals = [np.float32((x >> 8) * 2.0 ** -24) for x in _candidates(state, 32, n)]
        state.advance32(n)
    return np.array(vals, dtype)


def _same_state(state, bitgen):
    want = bitgen.state
    assert pl.counter_words(state.counter) == tuple(int(v) for v in want["state"]["counter"])
    assert state.buffer_pos == want["buffer_pos"]
    assert state.has_uint32 == bool(want["has_uint32"])
    if state.has_uint32:
        assert state.uinteger == want["uinteger"]
    if state.buffer_pos < 4:
        assert state.buffer() == tuple(int(v) for v in want["buffer"])


def _int_bounds(dtype):
    if dtype == "bool":
        return 0, 1
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


call = st.one_of(
    st.tuples(st.just("random"), st.sampled_from(["float64", "float32"]), st.integers(0, 9)),
    st.tuples(st.just("int"), st.sampled_from(INT_DTYPES), st.integers(0, 9), st.integers(0, 2 ** 64)),
)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2 ** 32), calls=st.lists(call, min_size=1, max_size=6))
def test_emulated_stream_equals_numpy(seed, calls):
    """Sequences of random/integers calls of every width, with 32-bit halves left pending
    between calls, ranges that reject often: values and the final state equal NumPy's."""
    bg = np.random.Philox(seed)
    g = np.random.Generator(bg)
    key = bg.state["state"]["key"]
    state = pl.StreamState(0, key)
    for c in calls:
        if c[0] == "random":
            want = g.random(c[2], dtype=c[1])
            np.testing.assert_array_equal(emulate_random(state, c[2], c[1]), want)
        else:
            dtype, n, r = c[1], c[2], c[3]
            lo, hi = _int_bounds(dtype)
            span = r % (hi - lo + 1)
            low = lo + (r * 7919) % (hi - lo + 1 - span)
            want = g.integers(low, low + span, n, dtype=dtype, endpoint=True)
            got = emulate_integers(state, low, span, n, dtype)
            assert [int(v) & MASK64 for v in want.astype(np.uint64 if dtype != "bool" else np.uint8)] \
                == [v & (MASK64 if dtype != "bool" else 1) for v in got]
        _same_state(state, bg)


def test_state_round_trip_and_jumps():
    a = gp.random.Philox(5)
    b = np.random.Philox(5)
    assert a.state["state"]["key"].tolist() == b.state["state"]["key"].tolist()
    b.random_raw(3)
    a.state = b.state
    _same_state(a._state, b)
    for f in (lambda x: x.jumped(2), lambda x: x.advance(7)):
        _same_state(f(gp.random.Philox(9))._state, f(np.random.Philox(9)))
    for kw in (dict(counter=[5, 1, 0, 2], key=[3, 4]), dict(counter=2 ** 70, key=5)):
        _same_state(gp.random.Philox(**kw)._state, np.random.Philox(**kw))
    for kw in (dict(counter=2 ** 300), dict(key=2 ** 129), dict(key=[1, 2, 3]), dict(seed=1, key=1)):
        with pytest.raises(ValueError) as want:
            np.random.Philox(**kw)
        with pytest.raises(ValueError, match=str(want.value).replace("*", "[*]")):
            gp.random.Philox(**kw)


# -- CPU: kernels compile ----------------------------------------------------------------------

KERNELS = ([cg.RandomKernel("fill", "random", d) for d in ("float32", "float64")]
           + [cg.RandomKernel(kind, "int", d, w, full) for d in INT_DTYPES
              for w in {1: (1,), 8: (8,), 16: (16,), 32: (32,), 64: (32, 64)}[
                  1 if d == "bool" else np.dtype(d).itemsize * 8]
              for kind, full in (("fill", True), ("fill", False), ("try", False), ("count", False),
                                 ("write", False))
              if not (d == "bool" and not full)]
           + [cg.RandomKernel("scan")]
           + [cg.RandomKernel("dist", w, d) for w in ("normal", "exponential", "uniform", "gamma", "beta")
              for d in ("float32", "float64")]
           + [cg.RandomKernel("dist", w, "int64") for w in ("poisson", "binomial")]
           + [cg.RandomKernel("dist", "int", d, w, full) for d in INT_DTYPES
              for w, full in ((32, False), (64, False), (64, True))])


@pytest.mark.parametrize("k", KERNELS, ids=lambda k: k.name)
def test_kernels_compile(k):
    prog = compile_program(cg.render(k), (), "sm_90")
    assert k.name.encode() in prog.cubin


def test_round_keys32_replace_the_key_schedule():
    """The host's ten round keys, used as the kernels use them (round r: k[2r] and k[2r+1]),
    give the reference Philox4x32-10."""
    rng = np.random.default_rng(5)
    for _ in range(50):
        counter = [int(v) for v in rng.integers(0, 1 << 32, 4, dtype=np.uint64)]
        key = tuple(int(v) for v in rng.integers(0, 1 << 32, 2, dtype=np.uint64))
        rk = round_keys32(*key)
        c = list(counter)
        for r in range(10):
            p0, p1 = M0_32 * c[0], M1_32 * c[2]
            c = [(p1 >> 32) ^ c[1] ^ rk[2 * r], p1 & 0xFFFFFFFF, (p0 >> 32) ^ c[3] ^ rk[2 * r + 1],
                 p0 & 0xFFFFFFFF]
        assert tuple(c) == philox4x32(counter, key)


@pytest.mark.parametrize("what", ["normal", "exponential", "uniform"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dist_kernel_parameters_are_where_the_host_packs_them(what, dtype):
    """The offsets and sizes of a continuous draw's parameters in its cubin (the compiler's
    layout of ``(T* out, rng_args a, philox32_keys rk)``) are the host's packing."""
    import struct

    from gpunb.core.build.cubin import read_kernels
    from gpunb.core.kernels.random import run

    k = cg.RandomKernel("dist", what, dtype)
    info = read_kernels(compile_program(cg.render(k), (), "sm_90").cubin)[k.name]
    codes = run.param_codes(1, len(round_keys32(1, 2)))
    sizes = tuple(struct.calcsize("@" + c) for c in codes)
    offsets = tuple(struct.calcsize("@" + "".join(codes[:i + 1])) - sizes[i] for i in range(len(codes)))
    assert (info.param_offsets, info.param_sizes) == (offsets, sizes)


class _Out:
    """What the fill functions read of an ndarray (CPU tests: no memory behind it)."""

    def __init__(self, n, dtype, ptr=0x7F0000000000):
        self._size, self._dtype = n, np.dtype(dtype)
        self._data = type("P", (), {"ptr": ptr})()


@pytest.mark.parametrize("what", ["normal", "exponential", "uniform"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n, offset, loc, scale", [(1000, 0, 0.0, 1.0), (1, 1, 2.5, 0.5),
                                                   (4097, 3, 0.0, 2.0), (0, 0, 0.0, 1.0)])
def test_dist_draw_packs_the_state_s_fields(monkeypatch, what, dtype, n, offset, loc, scale):
    """A continuous draw's launch (CPU: the launch recorded, not made) packs the state's
    argument fields (:meth:`StreamState.values`) with the 4x32 key in place of the 4x64 one,
    the ten round keys, and a grid over the blocks; the state then moves past them."""
    from gpunb.core.kernels.random import continuous, run
    from gpunb.core.kernels.random.reference import key32

    seen = []
    monkeypatch.setattr(run, "_fn", lambda *a: a)
    monkeypatch.setattr(run, "_launch", lambda *a: seen.append(a))

    st = pl.StreamState(123456789 << 100, (0x0123456789ABCDEF, 0xFEDCBA9876543210), 2)
    before = st.copy()
    run.fill_dist(st, _Out(n, dtype, 0x7F0000000000 + 4 * offset), what, loc, scale)
    if n == 0:
        assert seen == [] and st.counter == before.counter
        return
    nb = -(-n // cg.DIST_PER_BLOCK[what][np.dtype(dtype).itemsize])
    S = before.counter + 1
    affine = 0.0 if (loc, scale) == (0.0, 1.0) else 1.0
    want = before.values(S, 0 if offset % 4 == 0 else 1, n, nb, f=(loc, scale, affine, 0.0))
    k32 = key32(before.key)
    want = want[:4] + k32 + want[6:]
    fn, blocks, ptrs, values, keys, per_thread = seen[0]
    assert fn == ("dist", what, np.dtype(dtype)) and blocks == nb and ptrs == (0x7F0000000000 + 4 * offset,)
    assert values == want and keys == round_keys32(*k32)
    # (float64 normals and exponentials: the ziggurat's thread blocks draw several tiles)
    tiles = 8 if dtype == "float64" and what != "uniform" else 1
    assert per_thread == continuous.BLOCKS_PER_THREAD[np.dtype(dtype).itemsize] * tiles
    before.advance_blocks(-(-nb // 2))
    assert (st.counter, st.buffer_pos) == (before.counter, before.buffer_pos)


def test_random_draws_pack_what_the_plan_says(monkeypatch):
    """``random`` (NumPy's exact stream; CPU: the launches recorded, not made) over a
    sequence of sizes and both widths, which leaves the state at a block's start or not and
    with a pending half or not: each launch packs ``StreamState.values`` of
    ``start``/``lead``/``blocks_for`` and the state then is ``consume``'s."""
    from gpunb.core.kernels.random import run

    seen = []
    monkeypatch.setattr(run, "_fn", lambda *a: a)
    monkeypatch.setattr(run, "_launch", lambda fn, nb, ptrs, values: seen.append((nb, values)))

    st = pl.StreamState(987654321 << 70, (0x0123456789ABCDEF, 0xFEDCBA9876543210))
    for n, dt, low in [(1000, "float32", None), (1000, "float64", None), (7, "float32", None),
                       (8, "float32", None), (3, "float64", None), (1000, "float64", 2.0),
                       (1, "float32", None), (1, "float32", None), (16, "float32", None),
                       (4, "float64", None), (1000, "float32", None)]:
        ref = st.copy()
        width = 64 if dt == "float64" else 32
        S, o = ref.start()
        lead = ref.lead() if width == 32 else (-1, 0)
        nb = pl.blocks_for(o, lead[0] != -1, n, width)
        f = (0.0,) * 4 if low is None else (low, 3.0, 1.0, 0.0)
        want = (nb, ref.values(S, o, n, nb, lead, f=f))
        pl.consume(ref, width, n)
        seen.clear()
        run.fill_random(st, _Out(n, dt), low, 3.0 if low is not None else 0.0)
        assert seen == [want], (n, dt)
        assert (st.counter, st.buffer_pos, st.has_uint32, st.uinteger) == \
               (ref.counter, ref.buffer_pos, ref.has_uint32, ref.uinteger), (n, dt)


def _ln_u_float32(w: np.ndarray, rcp_ulps: int = 0) -> np.ndarray:
    """The kernels' ln_u evaluated step by step in float32 (an fma rounded once, from float64,
    where every product of two floats is exact), its reciprocal ``rcp_ulps`` ulp off (the
    hardware's rcp.approx is within 1)."""
    from gpunb.core.kernels.random.continuous import LN_U_POLY, LN_U_SPLIT

    f32 = np.float32

    def fma(a, b, c):
        return (np.float64(a) * np.float64(b) + np.float64(c)).astype(f32)

    u = fma(w.astype(f32), f32(2.0 ** -32), f32(2.0 ** -33))
    bits = u.view(np.int32)
    ebits = (bits - np.int32(LN_U_SPLIT)) & np.int32(-(1 << 23))      # & 0xff800000
    m = (bits - ebits).view(f32)
    e = ebits >> 23
    r = (1.0 / (m + f32(1)).astype(np.float64)).astype(f32)
    if rcp_ulps:
        r = np.nextafter(r, f32(np.inf if rcp_ulps > 0 else 0))
    s = (m - f32(1)) * r
    s2 = s * s
    p = fma(fma(f32(LN_U_POLY[0]), s2, f32(LN_U_POLY[1])), s2, f32(LN_U_POLY[2]))
    t = fma(s * s2, p, s)
    return fma(e.astype(f32), f32(0.6931471805599453), t + t), u


def test_ln_u_is_within_6_ulp_and_never_positive():
    """float32 normals' radii and exponentials: ln u of u = (w + 1/2) 2**-32 with no branch,
    against float64's log of the same u: random words, every word near 0 and 2**32 (u near 0
    and 1: huge and tiny results), and the words around each split point sqrt(1/2) 2**k."""
    rng = np.random.default_rng(11)
    parts = [rng.integers(0, 1 << 32, 1 << 22, dtype=np.uint64),
             np.arange(1 << 16, dtype=np.uint64), (1 << 32) - 1 - np.arange(1 << 20, dtype=np.uint64)]
    for k in range(32):
        c = int(np.sqrt(0.5) * 2.0 ** (32 - k))
        parts.append(np.arange(max(c - 3000, 0), min(c + 3000, 1 << 32), dtype=np.uint64))
    w = np.concatenate(parts)
    for rcp in (0, 1, -1):
        got, u = _ln_u_float32(w, rcp)
        want = np.log(u.astype(np.float64))
        one = want == 0
        assert one.sum() > 0 and (got[one] == 0).all()         # u rounded to 1: ln u is 0
        assert (got <= 0).all() and np.isfinite(got).all()
        rel = np.abs(got[~one] - want[~one]) / -want[~one]
        assert rel.max() < 6 * 2.0 ** -24, (rcp, rel.max() / 2.0 ** -24)


# -- CPU: NumPy's errors ------------------------------------------------------------------------

ERRORS = [
    ("integers", (5, 5), {}), ("integers", (5, 4), {"endpoint": True}),
    ("integers", (-1, 5), {"dtype": np.uint8}), ("integers", (0, 300), {"dtype": np.uint8}),
    ("integers", (0, 5), {"dtype": np.float64}), ("integers", (0, 5), {"dtype": "c8"}),
    ("uniform", (0, np.inf), {}), ("normal", (0, -1), {}), ("exponential", (-1,), {}),
    ("gamma", (-1,), {}), ("standard_gamma", (-1,), {}), ("beta", (0, 1), {}), ("beta", (1, -1), {}),
    ("poisson", (-1,), {}), ("poisson", (1e20,), {}), ("random", (3,), {"dtype": np.int32}),
    ("standard_normal", (3,), {"dtype": np.int32}), ("random", (-1,), {}),
    ("standard_exponential", (3,), {"dtype": np.float16}), ("choice", (0, 3), {}),
    ("choice", (5, 6), {"replace": False}), ("choice", (5, 3), {"p": [0.5, 0.5]}),
    ("choice", (5, 3), {"p": [0.5, 0.6, 0, 0, -0.1]}), ("choice", (3, 2), {"p": [0.5, 0.6, 0]}),
    ("standard_exponential", (3,), {"method": "x"}),
    ("wald", (0, 1), {}), ("wald", (1, -1), {}), ("noncentral_chisquare", (0, 1), {}),
    ("noncentral_chisquare", (1, -1), {}), ("noncentral_f", (1, 0, 1), {}),
    ("noncentral_f", (1, 1, -1), {}), ("multivariate_normal", ([0.0, 1.0], [[1.0, 0.0]]), {}),
    ("multivariate_normal", ([[0.0]], [[1.0]]), {}), ("multivariate_normal", ([0.0], [[1.0]]), {"method": "x"}),
    ("multivariate_normal", ([0.0, 1.0], np.eye(3)), {}),
]


@pytest.mark.parametrize("name,a,kw", ERRORS, ids=lambda v: str(v))
def test_errors_match_numpy(name, a, kw):
    want = None
    try:
        getattr(np.random.Generator(np.random.Philox(0)), name)(*a, **kw)
    except Exception as e:  # noqa: BLE001 - any NumPy error is the reference
        want = e
    if want is None:        # NumPy accepts it (standard_exponential's method): so must we,
        return              # but that needs a GPU; the GPU tests draw it
    with pytest.raises(type(want)) as got:
        getattr(gp.random.default_rng(0), name)(*a, **kw)
    assert str(got.value) == str(want)


def test_out_errors():
    g = gp.random.default_rng(0)
    from tests.data import fake
    with pytest.raises(TypeError, match="Expected float64, got float32"):
        g.random(out=fake((4,), "float32"))
    with pytest.raises(ValueError, match="size must match out.shape"):
        g.random(3, out=fake((4,), "float64"))


def test_generators_pickle_and_copy_without_their_prepared_draws():
    """A generator holding prepared draws (generated code, ctypes buffers of a device) pickles
    and deep-copies as its stream alone: the copy's state is the original's, and it prepares
    its own draws."""
    import copy
    import ctypes
    import pickle

    g = gp.random.default_rng(5)
    g.bit_generator.advance(12345)
    g._prepared["random"] = (1000, np.float32, object(), lambda state: ctypes.c_void_p(1))
    for h in (pickle.loads(pickle.dumps(g)), copy.deepcopy(g)):
        a, b = h._state, g._state
        assert h._prepared == {} and (a.counter, a.key, a.buffer_pos) == (b.counter, b.key, b.buffer_pos)
    assert "random" in g._prepared


def test_seed_sequence_is_numpys():
    assert gp.random.SeedSequence is np.random.SeedSequence
    a, b = gp.random.Philox(3).spawn(2)
    na, nb = np.random.Philox(3).spawn(2)
    assert a.state["state"]["key"].tolist() == na.state["state"]["key"].tolist()
    assert b.state["state"]["key"].tolist() == nb.state["state"]["key"].tolist()


# -- GPU: NumPy bit equality ---------------------------------------------------------------------

def _pair(seed):
    return gp.random.Generator(gp.random.Philox(seed)), np.random.Generator(np.random.Philox(seed))


@gpu
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("n", [0, 1, 3, 1000, 100_003])
def test_random_equals_numpy(dtype, n):
    g, ng = _pair(n + 17)
    for _ in range(3):          # consecutive calls continue the stream (odd float32 counts too)
        np.testing.assert_array_equal(g.random(n, dtype=dtype).get(), ng.random(n, dtype=dtype))
    np.testing.assert_array_equal(g.random((5, 7)).get(), ng.random((5, 7)))
    _same_state(g._state, ng.bit_generator)


@gpu
@pytest.mark.parametrize("bitgen", ["Philox", "Philox4x3210"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("n", [1, 999, 4096])
def test_prepared_draws_equal_the_general_path(dtype, n, bitgen):
    """Repeated draws of one size (the prepared draws from the third call) give the values
    and state of a generator taking the general path every time."""
    make = getattr(gp.random, bitgen)
    fast, slow = gp.random.Generator(make(n)), gp.random.Generator(make(n))
    for name, args, kw in [("standard_normal", (n,), {"dtype": dtype})] * 4 + [
            ("normal", (1.5, 2.0, n), {})] * 3 + [
            ("standard_exponential", (n,), {"dtype": dtype})] * 3 + [
            ("uniform", (-1, 2.5, n), {})] * 3 + [
            ("random", (n,), {"dtype": dtype})] * 4:
        x = getattr(fast, name)(*args, **kw)
        slow._prepared.clear()
        np.testing.assert_array_equal(x.get(), getattr(slow, name)(*args, **kw).get(), err_msg=name)
        assert fast._state.counter == slow._state.counter
        assert fast._state.buffer_pos == slow._state.buffer_pos


@gpu
@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integers_equals_numpy(dtype):
    g, ng = _pair(42)
    lo, hi = _int_bounds(dtype)
    spans = {0, 1, 2, 3, 5, 6, 100, 255, 256, 1000, 65535, 65536, 2 ** 31 + 1, 2 ** 32 - 1,
             2 ** 32, 2 ** 32 + 1, 2 ** 33 + 3, 2 ** 63 + 1, 2 ** 64 - 1}
    for span in sorted(s for s in spans if s <= hi - lo):
        for n in (1, 7, 20_001):
            for endpoint in (False, True):
                high = lo + span + (0 if endpoint else 1)
                if not endpoint and high > hi + 1:
                    continue
                got = g.integers(lo, high, n, dtype=dtype, endpoint=endpoint).get()
                want = ng.integers(lo, high, n, dtype=dtype, endpoint=endpoint)
                np.testing.assert_array_equal(got, want, err_msg=f"{dtype} span {span} n {n}")
                _same_state(g._state, ng.bit_generator)


@gpu
def test_integers_rare_rejection_falls_back():
    """A range that rejects rarely is drawn in one pass, checked for rejections: [0, 255) as
    uint8 rejects a zero byte only, so 7 draws from seeds whose first 7 bytes hold a zero take
    the checked path's fallback (count, scan, write), the others the single pass; both as
    NumPy's, and the stream continues as NumPy's."""
    kinds = set()
    for seed in range(400):
        first = int(np.random.Philox(seed).random_raw())
        rejects = any(((first >> (8 * i)) & 0xFF) == 0 for i in range(7))
        if rejects in kinds and len(kinds) == 2 and seed > 40:
            continue
        kinds.add(rejects)
        g, ng = _pair(seed)
        np.testing.assert_array_equal(g.integers(0, 255, 7, dtype=np.uint8).get(),
                                      ng.integers(0, 255, 7, dtype=np.uint8), err_msg=str(seed))
        np.testing.assert_array_equal(g.integers(0, 1000, 9).get(), ng.integers(0, 1000, 9))
        _same_state(g._state, ng.bit_generator)
    assert kinds == {True, False}


@gpu
def test_integers_reject_often():
    """Ranges just above a power of two reject about half the words: every rejection shifts
    the later elements, as NumPy's loop does."""
    g, ng = _pair(7)
    for dtype, high in (("int64", 2 ** 31 + 1), ("uint32", 2 ** 31 + 1), ("int64", 2 ** 62 + 1),
                        ("uint64", 2 ** 63 + 1), ("uint16", 2 ** 15 + 1), ("uint8", 129)):
        for n in (1, 1000, 300_001):
            np.testing.assert_array_equal(g.integers(0, high, n, dtype=dtype).get(),
                                          ng.integers(0, high, n, dtype=dtype))
            np.testing.assert_array_equal(g.random(5, dtype=np.float32).get(),
                                          ng.random(5, dtype=np.float32))
    _same_state(g._state, ng.bit_generator)


@gpu
def test_uniform_bytes_raw_equal_numpy():
    g, ng = _pair(99)
    np.testing.assert_array_equal(g.uniform(-3.5, 2.25, 10_001).get(), ng.uniform(-3.5, 2.25, 10_001))
    assert g.bytes(13) == ng.bytes(13)
    np.testing.assert_array_equal(g.bit_generator.random_raw(9).get(), ng.bit_generator.random_raw(9))
    np.testing.assert_array_equal(g.integers(10).get(), ng.integers(10))
    _same_state(g._state, ng.bit_generator)


@gpu
def test_kat_kernels():
    """The kernels' Philox4x64 (raw values at the KAT counters and keys) and Philox4x32 (a
    float64 normal draw, the ziggurat on the reference's words)."""
    for rounds, counter, key, want in KAT:
        if rounds != 10:
            continue
        bg = gp.random.Philox(counter=(pl.counter_int(counter) - 1) % (1 << 256),
                              key=np.array(key, np.uint64))
        got = bg.random_raw(4).get()
        assert tuple(int(v) for v in got) == tuple(int(w, 16) for w in want.split())
    g = gp.random.default_rng(77)
    S, key = g._state.counter + 1, g._state.key
    z = g.standard_normal(7).get()
    np.testing.assert_allclose(z, _zig_reference("normal", S, key, 7)[0], rtol=1e-15, atol=0)
    # float32: four normals a block, the angle 2 pi a - 3 pi in [-pi, pi) for a in [1, 2) made
    # of the word's top 23 bits (__sincosf: within 2**-21.4)
    g = gp.random.default_rng(78)
    S, key = g._state.counter + 1, g._state.key
    z = g.standard_normal(11, dtype=np.float32).get()
    want = []
    for b in range(3):
        w = philox4x32(dist_counter(b, S), key32(key))
        for q in (0, 1):
            r = np.sqrt(-2 * np.log(w[2 * q] * 2.0 ** -32 + 2.0 ** -33))
            t = 2 * np.pi * (1 + (w[2 * q + 1] >> 9) * 2.0 ** -23) - 3 * np.pi
            want += [r * np.cos(t), r * np.sin(t)]
    np.testing.assert_allclose(z, want[:11], rtol=2e-6, atol=4e-6)


def _philox32_words(blocks: int, first: int, key) -> np.ndarray:
    """The Philox4x32-10 words of a continuous draw's blocks 0 .. blocks - 1 (vectorized
    reference.philox4x32 over dist_counter), shape (blocks, 4), uint64."""
    m = np.uint64(0xFFFFFFFF)
    b = np.arange(blocks, dtype=np.uint64)
    c = [b & m, b >> np.uint64(32), np.full(blocks, first & 0xFFFFFFFF, np.uint64),
         np.full(blocks, (first >> 32) & 0xFFFFFFFF, np.uint64)]
    k0, k1 = key32(key)
    for r in range(10):
        if r:
            k0, k1 = (k0 + W0_32) & 0xFFFFFFFF, (k1 + W1_32) & 0xFFFFFFFF
        p0, p1 = np.uint64(M0_32) * c[0], np.uint64(M1_32) * c[2]
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ np.uint64(k0), p1 & m,
             (p0 >> np.uint64(32)) ^ c[3] ^ np.uint64(k1), p0 & m]
    return np.stack(c, axis=1)


def _ln_u32(w: np.ndarray) -> np.ndarray:
    """ln u (float64) of the float32 u = (w + 1/2) 2**-32 the kernels make (float(w), then one
    fused multiply-add: exact in float64, then rounded once)."""
    wf = w.astype(np.float32).astype(np.float64)
    return np.log((wf * 2.0 ** -32 + 2.0 ** -33).astype(np.float32).astype(np.float64))


def test_vectorized_philox32_reference():
    key = (0x0123456789ABCDEF, 0xFEDCBA9876543210)
    got = _philox32_words(5, 3 << 40, key)
    for b in range(5):
        assert tuple(int(v) for v in got[b]) == philox4x32(dist_counter(b, 3 << 40), key32(key))


@gpu
@pytest.mark.parametrize("what", ["normal", "exponential"])
def test_float32_draws_are_within_a_few_ulp(what):
    """float32 normals and exponentials against their transforms of the same Philox words in
    float64, over 2**20 draws: ln u within a few ulp everywhere, u near 1 (small exponentials
    and radii) included, where the hardware's __logf alone is off by up to 2**-21.4 absolute,
    and never NaN. A normal pair's radius is also off by __sincosf's 2**-21.4 in each factor."""
    g = gp.random.default_rng(79)
    S, key = g._state.counter + 1, g._state.key
    n = 1 << 20
    draw = g.standard_normal if what == "normal" else g.standard_exponential
    z = draw(n, dtype=np.float32).get().astype(np.float64).reshape(-1, 4)
    w = _philox32_words(n // 4, S, key)
    assert np.isfinite(z).all()
    if what == "exponential":
        want = -_ln_u32(w)
        np.testing.assert_allclose(z, want, rtol=8 * 2.0 ** -24, atol=0)
    else:
        got_r = np.hypot(z[:, 0::2], z[:, 1::2])
        want_r = np.sqrt(-2 * _ln_u32(w[:, 0::2]))
        np.testing.assert_allclose(got_r, want_r, rtol=2.0 ** -20, atol=0)
    small = want < 1e-4 if what == "exponential" else want_r < 1e-2
    assert small.sum() > 10          # the region __logf alone gets wrong is in the sample


def _zig_reference(kind: str, S: int, key, n: int, loc: float = 0.0, scale: float = 1.0):
    """(values, slow) of the float64 ziggurat kernels in Python: element e's word is word pair
    e % 2 of block e // 2; NumPy's algorithm from that word on, further words from element
    e's own blocks (:mod:`gpunb.core.kernels.random.ziggurat`); ``slow``: the elements that
    left the fast path."""
    import math

    from gpunb.core.kernels.random import ziggurat as zg
    k, w, f = zg.tables(kind)
    words = _philox32_words(-(-n // 2), S, key)
    first = (words[:, 0::2] | (words[:, 1::2] << np.uint64(32))).reshape(-1)[:n]
    out, slow = np.empty(n), []
    for e, r in enumerate(int(v) for v in first):
        more = (v for j in range(1, 1 << 20) for v in _pairs(philox4x32(
            (e & 0xFFFFFFFF, 0x80000000 | (j << 8) | (e >> 32), S & 0xFFFFFFFF, (S >> 32) & 0xFFFFFFFF),
            key32(key))))
        u53 = lambda: (next(more) >> 11) * 2.0 ** -53      # noqa: E731
        fast = True
        while True:
            if kind == "normal":
                idx, r = r & 0xFF, r >> 8
                rabs = (r >> 1) & 0x000FFFFFFFFFFFFF
                x = rabs * w[idx] * (-1.0 if r & 1 else 1.0)
                if rabs < k[idx]:
                    break
                fast = False
                if idx == 0:
                    while True:
                        xx = -(1.0 / zg.NORMAL_R) * math.log1p(-u53())
                        yy = -math.log1p(-u53())
                        if yy + yy > xx * xx:
                            x = -(zg.NORMAL_R + xx) if (rabs >> 8) & 1 else zg.NORMAL_R + xx
                            break
                    break
                if (f[idx - 1] - f[idx]) * u53() + f[idx] < math.exp(-0.5 * x * x):
                    break
            else:
                r >>= 3
                idx, r = r & 0xFF, r >> 8
                x = r * w[idx]
                if r < k[idx]:
                    break
                fast = False
                if idx == 0:
                    x = zg.EXP_R - math.log1p(-u53())
                    break
                if (f[idx - 1] - f[idx]) * u53() + f[idx] < math.exp(-x):
                    break
            r = next(more)
        out[e] = (loc + scale * x) if kind == "normal" else scale * x
        if not fast:
            slow.append(e)
    return out, np.array(slow, int)


def _pairs(block):
    return (block[0] | (block[1] << 32), block[2] | (block[3] << 32))


def test_ziggurat_tables_close_their_layers():
    """The 256 layers of each ziggurat: equal areas v (the base layer's rectangle and tail
    too), the top layer closing at x = 0, the fast path's integer bounds below the word's
    range, and the layers' edges increasing (within float64 of the 50-digit solve)."""
    import math

    from scipy import stats

    from gpunb.core.kernels.random import ziggurat as zg
    for kind, r, v, m, f, tail in (
            ("normal", zg.NORMAL_R, zg.NORMAL_V, 2.0 ** 52, lambda x: math.exp(-0.5 * x * x),
             math.sqrt(2 * math.pi) * stats.norm.sf(zg.NORMAL_R)),
            ("exponential", zg.EXP_R, zg.EXP_V, 2.0 ** 53, lambda x: math.exp(-x), math.exp(-zg.EXP_R))):
        k, w, fs = zg.tables(kind)
        x = [wi * m for wi in w]            # the layers' right edges (x[0]: the base's width)
        assert abs(r * f(r) + tail - v) < 1e-15
        assert all(x[i] < x[i + 1] for i in range(1, 255)) and x[255] == r
        for i in range(2, 256):             # layer i: x[i] * (f(x[i-1]) - f(x[i])) = v
            assert abs(x[i] * (fs[i - 1] - fs[i]) - v) < 1e-12, (kind, i)
        assert abs(x[1] * (1.0 - fs[1]) - v) < 1e-12         # the top layer closes at x = 0
        assert all(0 <= ki < m for ki in k) and k[1] == 0


@gpu
@pytest.mark.parametrize("what", ["normal", "exponential"])
def test_float64_ziggurat_draws_equal_the_reference(what):
    """float64 normals and exponentials against the ziggurat in Python on the same Philox
    words, 2**16 draws (a few hundred leave the fast path: wedges and the tail), and with
    loc and scale: the fast path's values bit for bit, the slow path's within an ulp or two
    (CUDA's exp and log1p against the host's)."""
    g = gp.random.default_rng(80)
    n = 1 << 16
    for loc, scale in ((0.0, 1.0), (2.5, 3.0)):
        S, key = g._state.counter + 1, g._state.key
        if what == "normal":
            z = g.normal(loc, scale, n).get() if scale != 1.0 else g.standard_normal(n).get()
        else:
            z = g.exponential(scale, n).get() if scale != 1.0 else g.standard_exponential(n).get()
        want, slow = _zig_reference(what, S, key, n, loc, scale)
        assert 0.005 * n < len(slow) < 0.03 * n     # (1.5% of normals, 2.2% of exponentials)
        fast = np.setdiff1d(np.arange(n), slow)
        if what == "normal" and scale != 1.0:   # loc + scale x: one rounding on the GPU (an FMA)
            np.testing.assert_allclose(z, want, rtol=4 * 2.0 ** -52, atol=4 * 2.0 ** -52)
            continue
        np.testing.assert_array_equal(z[fast], want[fast])
        np.testing.assert_allclose(z[slow], want[slow], rtol=4 * 2.0 ** -52, atol=0)


@gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("what", ["standard_normal", "standard_exponential"])
def test_continuous_draws_are_prefixes_of_longer_ones(what, dtype):
    """Element i of a continuous draw comes from Philox block S + i / per whatever the size:
    draws of sizes around the kernels' thread and launch-block boundaries (a thread makes
    several blocks) equal the start of a longer draw, as does one into an ``out=`` one
    element past an aligned address (scalar stores), leaving its neighbour alone."""
    m = 3 * 4 * 256 * 4 + 37
    full = getattr(gp.random.default_rng(11), what)(m, dtype=dtype).get()
    assert np.isfinite(full).all() and len(np.unique(full)) > 0.99 * m   # (float32 ties happen)
    for n in (1, 3, 4, 5, 255, 1023, 1024, 1025, 2049, 4095, 4096, 4097, 4 * 256 * 4 + 1, m - 1):
        got = getattr(gp.random.default_rng(11), what)(n, dtype=dtype).get()
        np.testing.assert_array_equal(got, full[:n], err_msg=f"size {n}")
    buf = gp.zeros(m + 1, dtype)
    getattr(gp.random.default_rng(11), what)(dtype=dtype, out=buf[1:])
    host = buf.get()
    assert host[0] == 0
    np.testing.assert_array_equal(host[1:], full)


# -- GPU: statistics ----------------------------------------------------------------------------

N = 1 << 20


def _ks(x, dist, *args):
    from scipy import stats
    return stats.kstest(np.asarray(x, np.float64), getattr(stats, dist)(*args).cdf).pvalue


@gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normal_exponential_statistics(dtype):
    g = gp.random.default_rng(2024)
    z = g.standard_normal(N, dtype=dtype).get()
    assert z.dtype == dtype
    assert abs(z.mean()) < 5 / np.sqrt(N) and abs(z.var() - 1) < 6 * np.sqrt(2 / N)
    assert _ks(z, "norm") > 1e-4
    e = g.standard_exponential(N, dtype=dtype).get()
    assert e.min() > 0 and abs(e.mean() - 1) < 6 / np.sqrt(N)
    assert _ks(e, "expon") > 1e-4
    x = g.normal(3.0, 2.0, (N // 4, 4)).get()
    assert x.shape == (N // 4, 4) and abs(x.mean() - 3) < 12 / np.sqrt(N)
    assert _ks(x.ravel(), "norm", 3.0, 2.0) > 1e-4
    assert _ks(g.exponential(0.5, N).get(), "expon", 0, 0.5) > 1e-4
    loc = gp.asarray(np.array([-5.0, 0.0, 5.0]))
    y = g.normal(loc, 1.0, (N // 3, 3)).get()
    np.testing.assert_allclose(y.mean(axis=0), [-5, 0, 5], atol=0.02)


@gpu
@pytest.mark.parametrize("shape", [0.3, 1.0, 2.5, 40.0])
def test_gamma_beta_statistics(shape):
    g = gp.random.default_rng(5)
    x = g.standard_gamma(shape, N).get()
    assert _ks(x, "gamma", shape) > 1e-4
    assert _ks(g.gamma(shape, 2.0, N).get(), "gamma", shape, 0, 2.0) > 1e-4
    b = g.beta(shape, 1.5, N).get()
    assert _ks(b, "beta", shape, 1.5) > 1e-4


@gpu
@pytest.mark.parametrize("lam", [0.5, 4.0, 30.0, 1000.0])
def test_poisson_statistics(lam):
    g = gp.random.default_rng(11)
    x = g.poisson(lam, N).get()
    assert x.dtype == np.int64
    assert abs(x.mean() - lam) < 6 * np.sqrt(lam / N)
    assert abs(x.var() - lam) < 10 * lam * np.sqrt(2 / N) + 0.01
    from scipy import stats
    k = np.arange(x.max() + 1)
    obs = np.bincount(x, minlength=k.size)
    exp = stats.poisson.pmf(k, lam) * N
    keep = exp > 20
    assert stats.chisquare(obs[keep], exp[keep] * obs[keep].sum() / exp[keep].sum()).pvalue > 1e-4


@gpu
def test_uniform_random_ks():
    g = gp.random.default_rng(3)
    assert _ks(g.random(N).get(), "uniform") > 1e-4
    assert _ks(g.random(N, dtype=np.float32).get(), "uniform") > 1e-4
    x = g.integers(0, 1000, N).get()
    from scipy import stats
    assert stats.chisquare(np.bincount(x, minlength=1000)).pvalue > 1e-4


# -- GPU: reproducibility, independence, permutations ----------------------------------------------

@gpu
def test_reproducible_and_independent():
    a = gp.random.default_rng(123).standard_normal(N).get()
    b = gp.random.default_rng(123).standard_normal(N).get()
    np.testing.assert_array_equal(a, b)
    c = gp.random.default_rng(124).standard_normal(N).get()
    kids = gp.random.default_rng(123).spawn(2)
    d, e = (k.standard_normal(N).get() for k in kids)
    for x, y in ((a, c), (d, e), (a, d)):
        assert abs(np.corrcoef(x, y)[0, 1]) < 6 / np.sqrt(N)
    g = gp.random.default_rng(1)
    f, h = g.random(N).get(), g.random(N).get()     # consecutive draws: no overlap
    assert abs(np.corrcoef(f, h)[0, 1]) < 6 / np.sqrt(N) and not np.intersect1d(f, h).size > 5


@gpu
def test_permutation_shuffle_choice():
    g = gp.random.default_rng(8)
    p = g.permutation(10_000).get()
    np.testing.assert_array_equal(np.sort(p), np.arange(10_000))
    x = np.arange(60.0).reshape(20, 3)
    y = g.permutation(gp.asarray(x)).get()
    np.testing.assert_array_equal(np.sort(y[:, 0]), x[:, 0])
    np.testing.assert_array_equal(y[:, 1] - y[:, 0], 1.0)
    z = gp.asarray(x.copy())
    g.shuffle(z, axis=1)
    np.testing.assert_array_equal(np.sort(z.get(), axis=1), x)
    s = g.choice(50, 50, replace=False).get()
    np.testing.assert_array_equal(np.sort(s), np.arange(50))
    c = g.choice(gp.asarray(np.array([1.0, 2.0, 3.0])), (N,), p=[0.2, 0.3, 0.5]).get()
    np.testing.assert_allclose(np.bincount(c.astype(int))[1:] / N, [0.2, 0.3, 0.5], atol=0.005)
    w = g.choice(5, 3, replace=False, p=[0.1, 0, 0.3, 0.6, 0]).get()
    assert len(set(w.tolist())) == 3 and set(w.tolist()) <= {0, 2, 3}


@gpu
def test_integers_array_bounds():
    g = gp.random.default_rng(4)
    hi = gp.asarray(np.array([1, 10, 1000]))
    x = g.integers(0, hi, (N // 3, 3)).get()
    assert x.dtype == np.int64 and (x >= 0).all() and (x < [1, 10, 1000]).all()
    assert x[:, 1].min() == 0 and x[:, 1].max() == 9


DERIVED = [  # (method, args, scipy distribution, its parameters)
    ("lognormal", (0.5, 0.75), "lognorm", (0.75, 0, np.exp(0.5))),
    ("laplace", (1.0, 2.0), "laplace", (1.0, 2.0)),
    ("logistic", (-1.0, 0.5), "logistic", (-1.0, 0.5)),
    ("gumbel", (2.0, 3.0), "gumbel_r", (2.0, 3.0)),
    ("weibull", (1.7,), "weibull_min", (1.7,)),
    ("rayleigh", (2.0,), "rayleigh", (0, 2.0)),
    ("pareto", (3.0,), "lomax", (3.0,)),
    ("power", (2.5,), "powerlaw", (2.5,)),
    ("chisquare", (3.0,), "chi2", (3.0,)),
    ("standard_t", (4.0,), "t", (4.0,)),
    ("f", (5.0, 7.0), "f", (5.0, 7.0)),
    ("triangular", (1.0, 2.0, 4.0), "triang", (1 / 3, 1.0, 3.0)),
    ("standard_cauchy", (), "cauchy", ()),
    ("wald", (1.5, 2.0), "invgauss", (0.75, 0, 2.0)),
    ("noncentral_chisquare", (3.0, 2.0), "ncx2", (3.0, 2.0)),
    ("noncentral_chisquare", (0.5, 1.5), "ncx2", (0.5, 1.5)),
    ("noncentral_f", (4.0, 9.0, 1.5), "ncf", (4.0, 9.0, 1.5)),
]


@gpu
@pytest.mark.parametrize("name,a,dist,params", DERIVED, ids=[f"{d[0]}{d[1]}" for d in DERIVED])
def test_derived_distributions(name, a, dist, params):
    g = gp.random.default_rng(31)
    x = getattr(g, name)(*a, size=N // 4).get()
    assert x.shape == (N // 4,) and x.dtype == np.float64
    assert _ks(x, dist, *params) > 1e-4


@gpu
@pytest.mark.parametrize("name,a,dist,params", [
    ("binomial", (20, 0.3), "binom", (20, 0.3)), ("binomial", (1000, 0.6), "binom", (1000, 0.6)),
    ("binomial", (10 ** 6, 0.01), "binom", (10 ** 6, 0.01)),
    ("geometric", (0.2,), "geom", (0.2,)), ("negative_binomial", (3, 0.4), "nbinom", (3, 0.4))])
def test_discrete_distributions(name, a, dist, params):
    from scipy import stats
    g = gp.random.default_rng(17)
    x = getattr(g, name)(*a, size=N // 4).get()
    assert x.dtype == np.int64
    d = getattr(stats, dist)(*params)
    assert abs(x.mean() - d.mean()) < 6 * d.std() / np.sqrt(x.size)
    k = np.arange(x.min(), x.max() + 1)
    obs = np.bincount(x - x.min())
    exp = d.pmf(k) * x.size
    keep = exp > 20
    assert stats.chisquare(obs[keep], exp[keep] * obs[keep].sum() / exp[keep].sum()).pvalue > 1e-4


@gpu
@pytest.mark.parametrize("method", ["svd", "eigh", "cholesky"])
def test_multivariate_normal(method):
    g = gp.random.default_rng(8)
    mean = np.array([1.0, -2.0, 0.5])
    a = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.4], [0.1, -0.4, 0.7]])
    x = g.multivariate_normal(mean, a, (200_000,), method=method)
    assert x.shape == (200_000, 3) and x.dtype == np.float64
    h = x.get()
    np.testing.assert_allclose(h.mean(axis=0), mean, atol=0.02)
    np.testing.assert_allclose(np.cov(h.T), a, atol=0.03)
    assert g.multivariate_normal(gp.asarray(mean), gp.asarray(a)).shape == (3,)
    if method != "cholesky":
        with pytest.warns(RuntimeWarning, match="positive-semidefinite"):
            g.multivariate_normal(mean, -a, method=method)
        with pytest.raises(ValueError, match="positive-semidefinite"):
            g.multivariate_normal(mean, -a, check_valid="raise", method=method)


@gpu
def test_dirichlet_and_array_parameters():
    g = gp.random.default_rng(2)
    d = g.dirichlet([1.0, 2.0, 3.0], 100_000).get()
    assert d.shape == (100_000, 3)
    np.testing.assert_allclose(d.sum(axis=1), 1.0)
    np.testing.assert_allclose(d.mean(axis=0), [1 / 6, 2 / 6, 3 / 6], atol=0.003)
    lam = gp.asarray(np.array([1.0, 10.0, 100.0]))
    p = g.poisson(lam, (100_000, 3)).get()
    np.testing.assert_allclose(p.mean(axis=0), [1, 10, 100], rtol=0.01)
    k = g.standard_gamma(gp.asarray(np.array([0.5, 5.0])), (100_000, 2)).get()
    np.testing.assert_allclose(k.mean(axis=0), [0.5, 5.0], rtol=0.02)


@gpu
def test_legacy_api():
    gp.random.seed(5)
    a = gp.random.rand(3, 4).get()
    gp.random.seed(5)
    np.testing.assert_array_equal(gp.random.rand(3, 4).get(), a)
    assert a.shape == (3, 4) and ((a >= 0) & (a < 1)).all()
    st_ = gp.random.get_state()
    b = gp.random.randn(1000).get()
    gp.random.set_state(st_)
    np.testing.assert_array_equal(gp.random.randn(1000).get(), b)
    r = gp.random.randint(3, 9, size=10_000).get()
    assert r.min() == 3 and r.max() == 8 and r.dtype == np.int64
    rs = gp.random.RandomState(11)
    np.testing.assert_array_equal(rs.random_sample(50).get(),
                                  gp.random.Generator(gp.random.Philox4x3210(11)).random(50).get())
    with pytest.warns(DeprecationWarning):
        x = rs.random_integers(5, size=1000).get()
    assert x.min() >= 1 and x.max() <= 5
    for name in ("uniform", "normal", "standard_normal", "exponential", "standard_exponential",
                 "random", "ranf", "sample", "random_sample"):
        assert getattr(gp.random, name)(size=7).shape == (7,)
    p = gp.random.permutation(100).get()
    np.testing.assert_array_equal(np.sort(p), np.arange(100))
    assert len(gp.random.bytes(10)) == 10


_NULL_GPU_DRAWS = r"""
import ctypes, struct, sys
sys.path.insert(0, "benchmarks")
import host_null_gpu
host_null_gpu.install()
import numpy as np
import gpunb as gp
from gpunb.core.kernels.random import run
from gpunb.core.runtime import fastcall

launches, general = [], []
record = fastcall._cu_launch
def launch(fn, gx, gy, gz, bx, by, bz, smem, stream, params, extra):
    first = ctypes.c_void_p.from_address(params).value      # the out pointer's slot
    second = ctypes.c_void_p.from_address(params + 8).value  # the argument struct's
    size = 8 + struct.calcsize("@" + run._ARG_CODES) + (80 if general_kind[0] != "random" else 0)
    launches.append((gx, bx, ctypes.string_at(second, size - 8)))
    return record(fn, gx, gy, gz, bx, by, bz, smem, stream, params, extra)
fastcall._cu_launch = launch
general_kind = [""]
for name in ("fill_random", "fill_dist"):
    slow = getattr(run, name)
    setattr(run, name, lambda *a, _slow=slow, _name=name: (general.append(_name), _slow(*a))[1])

def state(g):
    s = g.bit_generator._state
    return (s.counter, s.buffer_pos, s.has_uint32, s.uinteger if s.has_uint32 else 0)

calls = [("random", (1001,), {})] * 5 + [
    ("random", (7,), {"dtype": np.float32})] * 4 + [
    ("random", ((10, 100),), {"dtype": "float32"})] * 3 + [
    ("standard_normal", (1000,), {"dtype": np.float32})] * 3 + [
    ("standard_normal", (999,), {})] * 4 + [
    ("normal", (2.0, 3.0, 513), {})] * 3 + [
    ("standard_exponential", (64,), {"dtype": "float32"})] * 3 + [
    ("uniform", (-1, 2.5, 1001), {})] * 3 + [
    ("random", (1001,), {})] * 3
numpy_values = sys.argv[1] == "Philox"     # Generator(Philox(7)), else default_rng(7)
make = getattr(gp.random, sys.argv[1])
fast, slow = gp.random.Generator(make(7)), gp.random.Generator(make(7))
rows = []
for i, (name, args, kw) in enumerate(calls):
    if i == 18:     # a new key between two prepared normals: its round keys packed again
        st = make(99).state
        fast.bit_generator.state = st
        slow.bit_generator.state = st
    general_kind[0] = "random" if name in ("random", "uniform") and numpy_values else "dist"
    pending = fast.bit_generator._state.has_uint32
    launches.clear()
    before = len(general)
    x = getattr(fast, name)(*args, **kw)
    took_general = len(general) - before
    a = list(launches)
    slow._prepared.clear()
    launches.clear()
    y = getattr(slow, name)(*args, **kw)
    rows.append((name, args, kw.get("dtype") is not None, pending, took_general,
                 x.shape == y.shape and x.dtype == y.dtype, a == launches, len(a),
                 state(fast) == state(slow)))
print(repr(rows))
"""


@pytest.mark.parametrize("bitgen", ["Philox", "Philox4x3210"])
def test_prepared_draws_launch_and_advance_as_the_general_path(bitgen):
    """Without a GPU (the driver's calls made no-ops, the parameters read back at each
    launch): repeated ``random``, ``uniform``, ``standard_normal``, ``normal`` and
    ``standard_exponential`` calls of one size take the prepared draw (no general fill after the second call), pack the
    same kernel parameters on the same grid and leave the same stream state as a
    generator taking the general path every time: sizes that leave the state mid-block (1001,
    999), a float32 draw of odd size (NumPy's values: a pending half, which the prepared draw
    leaves to the general path), tuple sizes, a new key between two prepared normals; for
    NumPy's Philox and for default_rng's Philox4x3210 (uniforms from the ``dist`` kernel)."""
    import ast
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    r = subprocess.run([sys.executable, "-c", _NULL_GPU_DRAWS, bitgen], cwd=root, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    rows = ast.literal_eval(r.stdout.strip().splitlines()[-1])
    run_index = 0
    for i, (name, args, f32, pending, took_general, same_array, same_launch, count,
            same_state) in enumerate(rows):
        assert same_array and same_launch and count == 1 and same_state, (i, name)
        run_index = run_index + 1 if i and rows[i - 1][:3] == (name, args, f32) else 0
        # the general path: the first two calls of a (size, dtype) (noted, then prepared),
        # and a float32 random draw after an odd one left a 32-bit half pending
        want = run_index < 2 or (name == "random" and f32 and pending and bitgen == "Philox")
        assert took_general == want, (i, name, args)
    # prepared draws taken (NumPy's float32 uniforms of 7: one of the last two calls only)
    assert sum(not r[4] for r in rows) == (12 if bitgen == "Philox" else 13)


# -- Philox4x3210 (default_rng's): uniforms, integers, raw words and bytes from 4x32 blocks ------

def _words32(S: int, key, blocks: int) -> np.ndarray:
    """The Philox4x3210 words of a draw's blocks 0 .. blocks - 1 (counter ``(B, S)``), uint64."""
    return _philox32_words(blocks, S, key)


def _redraw_words(S: int, key, e: int):
    """Element ``e``'s further words, attempt after attempt (the kernel's ``redraw``)."""
    j = 1
    while True:
        yield from philox4x32((e & 0xFFFFFFFF, 0x80000000 | (j << 8) | (e >> 32), S & 0xFFFFFFFF,
                               (S >> 32) & 0xFFFFFFFF), key32(key))
        j += 1


def _integers32_reference(S: int, key, n: int, off: int, rng: int, itemsize: int) -> tuple[list, int, int]:
    """(values as Python ints mod 2**64, rejected count) of ``fill_integers32`` into elements
    of ``itemsize`` bytes, and the number of the blocks it draws."""
    from gpunb.core.kernels.random.run import integer_words
    width, full, r, t = integer_words(rng)
    per = 4 if width == 32 else 2
    nb = -(-n // per)
    E = min(per, 16 // itemsize)
    if E < per:         # chunks of E elements, THREADS threads apart (continuous.int_chunks)
        nb = -(-nb // cg.THREADS) * cg.THREADS
    w = _words32(S, key, nb)
    if width == 32:
        e = np.arange(n)
        seg, l = e // (cg.THREADS * per), e % (cg.THREADS * per)
        blk = seg * cg.THREADS + (l % (cg.THREADS * E)) // E
        x = w[blk, (l // (cg.THREADS * E)) * E + l % E]
        m = x * np.uint64(r)        # (wraps only for r = 2**32, whose threshold is 0)
        if r == 1 << 32:
            v, ok = x, np.ones(n, bool)
        else:
            v, ok = m >> np.uint64(32), (m & np.uint64(0xFFFFFFFF)) >= np.uint64(t)
    else:
        x = (w[:, 0::2] | (w[:, 1::2] << np.uint64(32))).reshape(-1)[:n]
        if full:
            v, ok = x, np.ones(n, bool)
        else:
            v = np.array([(int(a) * r) >> 64 for a in x], dtype=np.uint64)
            ok = np.array([(int(a) * r) & MASK64 >= t for a in x])
    vals = [int(a) for a in v]
    for e in np.flatnonzero(~ok):
        words = _redraw_words(S, key, int(e))
        while True:
            if width == 32:
                a = next(words)
                if (a * r) & 0xFFFFFFFF >= t:
                    vals[e] = (a * r) >> 32
                    break
            else:
                a = next(words) | (next(words) << 32)
                if (a * r) & MASK64 >= t:
                    vals[e] = (a * r) >> 64
                    break
    return [(off + v) & MASK64 for v in vals], int((~ok).sum()), nb


def test_integer_words_match_lemire():
    """Word width, multiplier and threshold of Philox4x3210's integers: 32-bit words below
    2**16 and for the whole 32-bit range, else 64-bit; the threshold is the count of low
    products to reject so that every value is equally likely (2**width mod (range + 1))."""
    from gpunb.core.kernels.random.run import integer_words
    for rng in (1, 2, 999, 65535, 65536, 0xFFFFFFFF, 1 << 40, MASK64 - 1, MASK64):
        width, full, r, t = integer_words(rng)
        assert width == (32 if rng < 65536 or rng == 0xFFFFFFFF else 64)
        assert full == (rng == MASK64)
        if not full:
            assert r == rng + 1 and t == (1 << width) % r
    # accepted products give each value the same count of words (a small word size, brute force)
    r, t = 6, (1 << 8) % 6
    counts = np.bincount([(x * r) >> 8 for x in range(256) if (x * r) & 255 >= t], minlength=r)
    assert (counts == counts[0]).all()


@gpu
@pytest.mark.parametrize("dtype, lo, hi", [
    ("int64", 0, 999), ("int64", -5, 65174), ("uint8", 0, 255), ("bool", 0, 1),
    ("int16", -300, 300), ("int32", 0, 2**31 - 1), ("uint32", 0, 2**32 - 1),
    ("int64", 7, 7 + 3 * 2**61), ("int64", -2**63, 2**63 - 1), ("uint64", 0, 2**64 - 1),
    ("int8", -128, 127)])
def test_philox4x3210_integers_equal_the_reference(dtype, lo, hi):
    """default_rng's integers against the pure-Python Philox4x32-10 words and Lemire's map,
    rejected words drawn again from their own blocks: 32-bit words with a rare rejection
    (range 65175: some of 2**20 elements), 64-bit words rejected one time in eight (a range of
    3 * 2**61 + 1), the full 32- and 64-bit ranges, int64 from 32-bit words stored as 16-byte
    chunks a thread block apart; the state advances by the blocks drawn."""
    g = gp.random.default_rng(20261127)
    assert isinstance(g.bit_generator, gp.random.Philox4x3210)
    st = g._state.copy()
    n = (1 << 20) + 3 if hi - lo == 65174 else 100_003
    x = g.integers(lo, hi, n, dtype=dtype, endpoint=True).get()
    want, rejected, nb = _integers32_reference(st.counter + 1, st.key, n, lo, hi - lo,
                                               np.dtype(dtype).itemsize)
    np.testing.assert_array_equal(x.astype(np.uint64) if dtype != "bool" else x,
                                  np.array(want, np.uint64).astype(dtype).astype(np.uint64)
                                  if dtype != "bool" else np.array(want).astype(bool))
    assert x.min() >= lo and x.max() <= hi
    if hi - lo in (65174, 3 * 2**61):
        assert rejected > 0         # the redraw path ran
    assert g._state.counter == st.counter + (nb + 1) // 2


@gpu
@pytest.mark.parametrize("n", [1, 7, 1000, 4097, 100_001])
def test_philox4x3210_uniforms_raw_and_bytes_equal_the_reference(n):
    """default_rng's random (float64: (x >> 11) 2**-53 of a 64-bit word of two 32-bit
    words; float32: (w >> 8) 2**-24), random_raw, bytes, and uniform(low, high) as
    low + (high - low) u, against the pure-Python Philox4x32-10 words, at sizes around the
    vector stores' and a draw into an unaligned out= view."""
    g = gp.random.default_rng(5)
    for what in ("f64", "f32", "raw", "bytes", "uniform", "out"):
        st = g._state.copy()
        S, key = st.counter + 1, st.key
        if what in ("f64", "raw", "uniform", "out"):
            w = _words32(S, key, -(-n // 2))
            x = (w[:, 0::2] | (w[:, 1::2] << np.uint64(32))).reshape(-1)[:n]
            u = (x >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
        if what == "f64":
            got, want = g.random(n).get(), u
        elif what == "out":
            buf = gp.zeros(n + 1)
            g.random(out=buf[1:])
            got, want = buf.get(), np.concatenate([[0.0], u])
        elif what == "uniform":
            got, want = g.uniform(-2.0, 3.0, n).get(), -2.0 + 5.0 * u
            np.testing.assert_allclose(got, want, rtol=1e-15, atol=1e-15)
            continue
        elif what == "raw":
            got, want = g.bit_generator.random_raw(n).get(), x
        elif what == "f32":
            w = _words32(S, key, -(-n // 4)).reshape(-1)[:n]
            got = g.random(n, dtype=np.float32).get()
            want = (w >> np.uint64(8)).astype(np.float32) * np.float32(2.0 ** -24)
        else:
            words = -(-n // 4)
            w = _words32(S, key, -(-words // 4)).reshape(-1)[:words].astype(np.uint32)
            got, want = np.frombuffer(g.bytes(n), np.uint8), w.view(np.uint8)[:n]
        np.testing.assert_array_equal(got, want, err_msg=what)
        assert got.min() >= 0 and (what in ("raw", "bytes") or got.max() < 1.0)
