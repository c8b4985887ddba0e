"""Generated elementwise kernels for every op and every dtype NumPy has a loop for, compiled
by real NVRTC (all of one op's kernels in one module, so the suite stays quick)."""

import threading

import numpy as np
import pytest

import gpunb
from gpunb.core.kernels import ir
from gpunb.core.kernels.elementwise import codegen as cg
from gpunb.core.dtypes import SUPPORTED, literal
from gpunb.core.kernels.elementwise.ir import ufunc_kernel
from gpunb.core.kernels.elementwise.ops import OPS
from tests import data

ARCH = "sm_90"


def _module(kernels):
    """One source holding many kernels: the prelude once, then each kernel's body."""
    kernels = list({k.name: k for k in kernels}.values())   # e.g. x + 1 and x + 1.0 share one
    head = cg.prelude() + cg.VEC_TYPE + "\n"
    bodies = [cg.render(k)[len(cg.prelude()):].replace(cg.VEC_TYPE, "") for k in kernels]
    return head + "\n".join(bodies)


def _cases(op):
    """Every combination of supported input dtypes NumPy resolves (same dtype for all inputs),
    plus mixed pairs and weak Python scalars for binary ops."""
    cases = []
    for dt in SUPPORTED:
        dtypes = (dt,) * op.nin
        try:
            op.resolve(dtypes)
        except TypeError:
            continue
        cases.append((dtypes, ("array",) * op.nin))
    if op.nin == 2:
        for a, b in [("int8", "uint8"), ("float16", "int64"), ("bool", "float32"), ("int32", "float64")]:
            try:
                op.resolve((np.dtype(a), np.dtype(b)))
            except TypeError:
                continue
            cases.append(((np.dtype(a), np.dtype(b)), ("array", "uniform")))
        for weak in (int, float):
            try:
                op.resolve((np.dtype("float32"), weak))
            except TypeError:
                continue
            cases.append(((np.dtype("float32"), weak), ("array", "scalar")))
    return cases


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_op_and_dtype_compiles(name):
    op = OPS[name]
    kernels = []
    for dtypes, kinds in _cases(op):
        k = ufunc_kernel(name, dtypes, kinds)     # every loop NumPy has renders (complex too)
        cg.render(k)
        kernels.append(k)
    assert kernels, f"no dtype of {name} produced a kernel"
    # NumPy's complex loops are among them ('FF->F', 'DD->D', ...)
    for c in ("F", "D"):
        if any(t.startswith(c * op.nin) for t in op.types):
            assert any(k.outputs[0][0] == np.dtype(c) or np.dtype(c) in [o.dtype for o in k.operands]
                       for k in kernels), f"{name}: no {np.dtype(c)} kernel"
    cubin = gpunb.compile(_module(kernels), (), ARCH)
    from gpunb.core.build.cubin import read_kernels

    names = set(read_kernels(cubin))
    for k in kernels:
        assert set(cg.entry_points(k)) <= names


def test_strided_kernel_compiles_for_every_ndim():
    f32 = np.dtype("float32")
    kernels = [ufunc_kernel("add", (f32, np.dtype("float16")), ("array", "array"),
                            layout="strided", ndim=nd) for nd in range(1, 7)]
    cubin = gpunb.compile(_module(kernels), (), ARCH)
    from gpunb.core.build.cubin import read_kernels

    infos = read_kernels(cubin)
    for nd, k in zip(range(1, 7), kernels):
        wide, narrow, rows = cg.entry_points(k)
        # pointers a0, a1, o0, then n, then the struct of shape and three operands' strides
        assert infos[wide].param_sizes == (8, 8, 8, 8, 8 * nd * 4)
        # 32-bit: n, then shape, magic, shift and three operands' strides, 4 bytes each
        assert infos[narrow].param_sizes == (8, 8, 8, 4, 4 * nd * 6)
        assert infos[rows].param_sizes == (8, 8, 8, 4, 4 * nd * 6, 4)    # + the broadcast mask


def test_vector_width_is_16_bytes_of_the_widest_array():
    f32, f64, b = np.dtype("float32"), np.dtype("float64"), np.dtype("bool")
    assert cg.vector_width(ufunc_kernel("add", (f32, f32), ("array", "array"))) == 4
    assert cg.vector_width(ufunc_kernel("add", (f32, f64), ("array", "array"))) == 2
    assert cg.vector_width(ufunc_kernel("less", (b, b), ("array", "array"))) == 16
    assert cg.vector_width(ufunc_kernel("add", (np.dtype("complex128"),) * 2, ("array",) * 2)) == 1


def test_weak_scalar_takes_the_array_dtype():
    k = ufunc_kernel("add", (np.dtype("int8"), int), ("array", "scalar"))
    assert [o.dtype for o in k.operands] == [np.dtype("int8"), np.dtype("int8")]
    assert k.outputs[0][0] == np.dtype("int8")
    k = ufunc_kernel("multiply", (np.dtype("float16"), float), ("array", "scalar"))
    assert k.outputs[0][0] == np.dtype("float16")
    assert ufunc_kernel("true_divide", (np.dtype("int32"), int), ("array", "scalar")).outputs[0][0] == np.float64


def test_numpy_type_errors_come_through():
    with pytest.raises(TypeError, match="boolean negative"):
        ufunc_kernel("negative", (np.dtype("bool"),), ("array",))
    with pytest.raises(TypeError, match="bitwise_and"):
        ufunc_kernel("bitwise_and", (np.dtype("float32"),) * 2, ("array",) * 2)


def test_out_dtype_casts_the_result():
    f32, f64 = np.dtype("float32"), np.dtype("float64")
    k = ufunc_kernel("add", (f32, f32), ("array", "array"), out_dtypes=(f64,))
    dt, node = k.outputs[0]
    assert dt == f64 and isinstance(node, ir.Cast) and node.arg.dtype == f32


@pytest.mark.parametrize("dtype", [d for d in SUPPORTED])
def test_constants_render_and_compile(dtype):
    values = [0, 1, -1, 2.5, np.inf, -np.inf, np.nan, np.pi, np.e, 1e-40, -0.0, 65504.0]
    lits = []
    for v in values:
        try:
            with np.errstate(all="ignore"):
                dtype.type(v)
        except (OverflowError, ValueError):
            continue
        if dtype.kind in "iub" and (isinstance(v, float) and not float(v).is_integer()):
            continue
        if dtype.kind in "iu" and (np.isinf(v) or np.isnan(v) or v < 0 and dtype.kind == "u"):
            continue
        lits.append(literal(v, dtype))
    from gpunb.core.dtypes import compute_type

    ct = compute_type(dtype)
    body = "\n".join(f"    out[{i}] = ({ct})({lit});" for i, lit in enumerate(lits))
    src = cg.prelude() + f'extern "C" __global__ void k({ct}* out) {{\n{body}\n}}\n'
    assert gpunb.compile(src, (), ARCH)[:4] == b"\x7fELF"


def test_literals_are_exact():
    assert literal(np.pi, "float64") == float(np.pi).hex()
    assert literal(np.float32(np.pi), "float32") == float(np.float32(np.pi)).hex() + "f"
    assert literal(np.nan, "float32") == "__int_as_float(0x7fc00000)"
    assert literal(-np.inf, "float64") == "(-__longlong_as_double(0x7ff0000000000000LL))"
    assert literal(-2**63, "int64") == "(-9223372036854775807LL - 1)"
    assert literal(70000.0, "float16") == "__int_as_float(0x7f800000)"   # overflows half: inf
    assert literal(True, "bool") == "true"


def test_int64_and_float64_arrays_are_not_taken_for_weak_scalars():
    # np.dtype('int64') == int holds in NumPy; the kernel must still read int64 elements.
    k = ufunc_kernel("sqrt", (np.dtype("int64"),), ("array",))
    assert k.operands[0].dtype == np.dtype("int64") and k.outputs[0][0] == np.dtype("float64")
    k = ufunc_kernel("add", (np.dtype("float32"), int), ("array", "scalar"))
    assert k.operands[1].dtype == np.dtype("float32")


def _umulhi(a: int, b: int) -> int:
    return (a * b) >> 32


@pytest.mark.parametrize("d", [1, 2, 3, 4, 5, 7, 10, 255, 256, 641, 1000, 16384, 65535, 65537,
                               2**20 + 7, 2**30 - 1, 2**30, 2**30 + 1, 2**31 - 1])
def test_fast_divisor_divides_every_index(d):
    # the strided32 entry divides 32-bit indices by the shape with these constants: check the
    # identity the kernel relies on at the edges and on random numerators below 2**31
    magic, shift = cg.fast_divisor(d)
    assert 0 < magic < 2**32 and 0 <= shift <= 31
    rng = np.random.default_rng(d)
    ns = {0, 1, d - 1, d, d + 1, 2 * d - 1, 2 * d, 2**31 - 1, 2**31 - 2}
    ns |= {int(v) for v in rng.integers(0, 2**31, 2000)}
    ns |= {int(q) * d + r for q in rng.integers(0, 2**31 // d, 50) for r in (0, d - 1)}
    for n in sorted(v for v in ns if 0 <= v < 2**31):
        assert (_umulhi(n, magic) + n) >> shift == n // d, (n, d)


def test_fast_divisor_rejects_what_it_cannot_divide():
    for d in (0, 2**31, -3):
        with pytest.raises(ValueError):
            cg.fast_divisor(d)


def test_strided_geometry_picks_32_bit_entry_only_when_offsets_fit():
    from gpunb.core.kernels.elementwise.plan import _strided_geometry

    entry, (n, geo) = _strided_geometry(16384 * 16384, (16384, 16384), [(65536, 4), (4, 0), (65536, 4)])
    assert entry == "strided32" and n.value == 2**28
    vals = list(geo)
    assert vals[:2] == [16384, 16384] and vals[2:4] == [cg.fast_divisor(16384)[0]] * 2
    # negative strides travel as two's complement int32
    entry, (_, geo) = _strided_geometry(6, (2, 3), [(-12, 4)])
    assert entry == "strided32" and list(geo)[-2:] == [(-12) & 0xFFFFFFFF, 4]
    # a reach past 2**31 bytes needs 64-bit offsets even with few elements
    entry, (n, geo) = _strided_geometry(4, (2, 2), [(2**31, 4)])
    assert entry == "strided" and list(geo) == [2, 2, 2**31, 4]
    entry, _ = _strided_geometry(2**31, (2**31,), [(1,)])
    assert entry == "strided"


def test_row_vectors_takes_contiguous_or_broadcast_innermost_dims():
    from gpunb.core.kernels.elementwise.plan import _row_vectors

    class A:                       # what _row_vectors reads of an array
        def __init__(self, itemsize, ptr=0):
            self.itemsize, self.data = itemsize, type("D", (), {"ptr": ptr})()

    f4 = A(4)
    # x - m[:, None] -> out, float32: m broadcast along the rows
    assert _row_vectors((16, 64), [(256, 4), (4, 0), (256, 4)], [f4, f4, f4], 1, 4) == 0b10
    # rows not a multiple of E, an unaligned start, an odd row stride, a strided inner dim
    assert _row_vectors((16, 6), [(24, 4), (4, 0), (24, 4)], [f4, f4, f4], 1, 4) is None
    assert _row_vectors((16, 64), [(256, 4), (4, 0), (256, 4)], [A(4, 4), f4, f4], 1, 4) is None
    assert _row_vectors((16, 64), [(260, 4), (4, 0), (256, 4)], [f4, f4, f4], 1, 4) is None
    assert _row_vectors((16, 64), [(512, 8), (4, 0), (256, 4)], [f4, f4, f4], 1, 4) is None
    # an output is never broadcast, and one dim or E == 1 has nothing to gain
    assert _row_vectors((16, 64), [(256, 4), (256, 0)], [f4, f4], 1, 4) is None
    assert _row_vectors((64,), [(4,), (4,)], [f4, f4], 1, 4) is None
    assert _row_vectors((16, 64), [(256, 4), (256, 4)], [f4, f4], 1, 1) is None


def test_elementwise_grid_has_a_block_per_block_of_steps(monkeypatch):
    # one thread per element (or vector) step up to the hardware's grid limit; with
    # GRID_WAVES set, no more than the device's resident blocks times the waves
    from gpunb.core.kernels import loader
    from gpunb.core.kernels.elementwise import plan as launch

    lk = loader.Loaded(kernel=None, functions={}, sm_count=132, vec=4,
                       occupancy={"k_vec": 8})
    assert launch._grid(lk, 0, "k_vec") == (1,)
    assert launch._grid(lk, 1, "k_vec") == (1,)
    assert launch._grid(lk, 256, "k_vec") == (1,)
    assert launch._grid(lk, 257, "k_vec") == (2,)
    assert launch._grid(lk, 1 << 26, "k_vec") == ((1 << 26) // 256,)
    assert launch._grid(lk, 1 << 50, "k_vec") == (2**31 - 1,)
    monkeypatch.setattr(launch, "GRID_WAVES", 2)
    assert launch._grid(lk, 1 << 26, "k_vec") == (132 * 8 * 2,)
    assert launch._grid(lk, 1000, "k_vec") == (4,)


def test_contiguous_calls_over_int32_elements_run_as_vector_pieces():
    """More elements than the vector entry's 32-bit count: vector launches of PIECE elements
    or fewer that cover the call, each counting its own; none for smaller, misaligned or
    strided calls."""
    from types import SimpleNamespace as NS

    from gpunb.core.kernels import loader
    from gpunb.core.kernels.elementwise import plan as launch

    kernel = NS(layout="contiguous", name="k", operands=[NS(kind="array"), NS(kind="scalar"), NS(kind="uniform")])
    lk = loader.Loaded(kernel=kernel, functions={"k_vec": 11, "k_flat": 12}, sm_count=132, vec=4,
                       occupancy={"k_vec": 8, "k_flat": 8})

    def arr(ptr, itemsize=4):
        return NS(data=NS(ptr=ptr), itemsize=itemsize)

    ins, outs = [arr(1 << 20), 2.0, arr(64)], [arr(3 << 20)]
    for n in (2**31, 2**31 + 5, 3 * 2**30 + 1, 2**33):
        parts = launch.pieces(lk, ins, outs, (n,))
        starts = [a for a, _ in parts]
        counts = [st.params[-1].value for _, st in parts]
        assert starts == list(range(0, n, launch.PIECE)) and sum(counts) == n
        assert all(0 < c <= launch.PIECE for c in counts)
        assert all(st.function == 11 and st.params[:-1] == (0, 1, 2, 3) for _, st in parts)
        assert [st.grid for _, st in parts] == [launch._grid(lk, -(-c // 4), "k_vec") for c in counts]
    assert launch.pieces(lk, ins, outs, (2**31 - 1,)) is None
    assert launch.pieces(lk, ins, outs, (2**16, 2**16)) is not None       # any shape: its count
    assert launch.pieces(lk, [arr(1 << 20 | 4), 2.0, arr(64)], outs, (2**31,)) is None    # misaligned
    assert launch.pieces(lk, ins, [arr(8)], (2**31,)) is None
    strided = loader.Loaded(kernel=NS(layout="strided", name="k", operands=kernel.operands),
                            functions={}, sm_count=132, vec=4, occupancy={})
    assert launch.pieces(strided, ins, outs, (2**31,)) is None


@pytest.mark.parametrize("dt", SUPPORTED, ids=str)
def test_scalar_params_hold_the_bytes_the_kernel_reads(dt):
    # by-value scalars: the compute type's bytes (float16 widened to float), set in place
    # through set_scalar for replayed launches exactly as scalar_param builds them
    import ctypes

    from gpunb.core.kernels import execute as launch

    compute = np.dtype(np.float32) if dt == np.float16 else dt
    for value in ([True, False] if dt.kind == "b" else [0, 1, 7] if dt.kind == "u" else [-3, 0, 5]
                  if dt.kind == "i" else [-1.5, 0.0, 3.25, np.inf] if dt.kind == "f" else [1 + 2j, -0.5j]):
        v = dt.type(value)
        want = np.asarray(v.astype(compute) if dt != np.float16 else np.float32(v)).tobytes()
        got = launch.scalar_param(v, dt)
        assert ctypes.string_at(ctypes.addressof(got), ctypes.sizeof(got)) == want
        obj = launch.scalar_object(dt)
        launch.set_scalar(obj, v, dt)
        assert ctypes.string_at(ctypes.addressof(obj), ctypes.sizeof(obj)) == want


def test_prepared_launch_points_at_its_objects():
    import ctypes

    from gpunb.core.runtime import fastcall

    objs = [ctypes.c_void_p(), ctypes.c_float(), (ctypes.c_int64 * 3)(1, 2, 3)]
    p = fastcall.Prepared(7, (5,), 256, objs)
    assert p.grid == (5, 1, 1) and p.block == (256, 1, 1) and p.function == 7
    assert [p._addrs[i] for i in range(3)] == [ctypes.addressof(o) for o in objs]


def test_set_operands_sets_pointers_and_converted_scalars():
    """The prepared launches' operand objects: an array's data pointer, a scalar's value as
    the kernel reads it (float16 widened, complex as two parts); arrays alone take a shorter
    loop with the same result."""
    import ctypes

    from gpunb.core.kernels import execute
    from gpunb.core.ndarray import MemoryPointer, ndarray

    def arr(ptr):
        return ndarray._view(MemoryPointer(ptr), (4,), (4,), np.dtype("float32"), None)

    a, b = arr(0x20000), arr(0x30000)
    f16, c64 = np.dtype("float16"), np.dtype("complex64")
    conv = (None, f16, None, c64)
    objs = [ctypes.c_void_p(), execute.scalar_object(f16), ctypes.c_void_p(), execute.scalar_object(c64)]
    values = [None, f16.type(1.5), None, c64.type(2 - 3j)]
    execute.set_operands(objs, (a, 1.5, b, 2 - 3j), conv, values)
    assert objs[0].value == 0x20000 and objs[2].value == 0x30000
    assert objs[1].value == 1.5 and (objs[3][0], objs[3][1]) == (2.0, -3.0)
    plain = [ctypes.c_void_p(), ctypes.c_void_p()]
    execute.set_operands(plain, (b, a), (None, None), None)
    assert [o.value for o in plain] == [0x30000, 0x20000]


def test_prepared_calls_pack_their_signature_and_miss_the_rest(monkeypatch):
    """kernels.fastgen without a GPU: the made call packs pointers, converted scalars (half
    widened to float, complex as two parts), the outputs and the count as the kernel reads
    them, with the capped grid; any argument unlike its signature is a miss that launches
    nothing."""
    import ctypes
    import itertools
    import struct

    from gpunb.core.kernels import fastgen
    from gpunb.core.ndarray import MemoryPointer, ndarray
    from gpunb.core.runtime import driver, fastcall

    ptrs = itertools.count(0x40000, 0x1000)
    f4, f16, c64 = np.dtype("float32"), np.dtype("float16"), np.dtype("complex64")

    def arr(n=1000, dt=f4, ptr=None, stride=None):
        dt = np.dtype(dt)
        return ndarray._view(MemoryPointer(next(ptrs) if ptr is None else ptr), (n,),
                             (stride or dt.itemsize,), dt, None)

    # the pool the prepared calls allocate their outputs from
    pool = type("Pool", (), {"malloc": lambda self, nbytes: MemoryPointer(next(ptrs))})()
    ctx = type("Ctx", (), {"default_handle": 7, "pool": pool})()
    monkeypatch.setattr(driver, "active", ctx)
    monkeypatch.setattr(driver._current, "ctx", ctx)
    monkeypatch.setattr(driver._current, "stream", None)
    monkeypatch.setattr(ndarray, "_empty", classmethod(lambda cls, shape, dt: arr(shape[0], dt)))
    launched = data.record_launches(monkeypatch)
    offsets = []
    init = fastcall.Prepared.__init__

    def record(self, function, grid, block, objects):
        init(self, function, grid, block, objects)
        base = ctypes.addressof(objects[-1])
        offsets.append([ctypes.addressof(o) - base for o in objects[:-1]])
    monkeypatch.setattr(fastcall.Prepared, "__init__", record)
    x, y = arr(), arr()
    fast = fastgen.make((x, 1.5, y, 2 - 3j), (None, f16, None, c64), 1, vec=4, block=256,
                        out_dtypes=(f4,), cap=3)
    z = fast((x, 0.5, y, 1j))
    assert z.shape == (1000,) and z.dtype == f4
    assert [(s, b, struct.unpack_from("@PfPffPI", p)) for s, b, p in launched] == [
        (7, 1, (x.data.ptr, 0.5, y.data.ptr, 0.0, 1.0, z.data.ptr, 1000))]
    # one parameter pointer each, the complex one included: where the driver reads them (in
    # the main thread's buffer and in the one other threads share)
    assert offsets == [[0, 8, 16, 24, 32, 40]] * 2
    # another thread packs the same values into the shared buffer, not the main thread's
    params, record_launch = [], fastcall._cu_launch
    monkeypatch.setattr(fastcall, "_cu_launch", lambda *a: params.append(a[9]) or record_launch(*a))
    fast((x, 0.5, y, 1j))
    def in_thread():
        driver._current.ctx, driver._current.stream = ctx, None     # (thread-local state)
        fast((x, 0.5, y, 1j))
    worker = threading.Thread(target=in_thread)
    worker.start()
    worker.join()
    assert params[0] != params[1] and len(launched) == 3
    first, main, other = (struct.unpack_from("@PfPffPI", p) for _, _, p in launched)
    assert main[:5] == other[:5] == first[:5] and main[6] == other[6] == 1000
    assert len({first[5], main[5], other[5]}) == 3                     # each call's own output
    del launched[1:]
    big = arr(10 ** 6)
    fast1 = fastgen.make((big,), (None,), 1, vec=4, block=256, out_dtypes=(f4,), cap=3)
    fast1((big,))
    assert launched[-1][1] == 3                              # the grid's cap
    misses = [(arr(1000, "float64"), 0.5, y, 1j),            # another dtype
              (x, 0.5, arr(999), 1j),                        # another shape
              (x, 0.5, arr(500, stride=8), 1j),              # not contiguous
              (x, 0.5, arr(1000, ptr=0x50004), 1j),          # misaligned
              (x, 1, y, 1j),                                 # an int for the float
              (x, 0.5, y), (x, 0.5, y, 1j, 1)]               # the count of arguments
    for call in misses:
        assert fast(call) is fastgen.MISS
    flat = fastgen.make((x, y), (None, None), 1, vec=1, block=256, out_dtypes=(f4,),
                        aligned=False, count="q", min_size=2)
    assert flat((x, y)) is fastgen.MISS                      # aligned: not its entry
    assert flat((arr(1), arr(1, ptr=0x60004))) is fastgen.MISS   # one element: another kernel
    assert flat((x, arr(1000, ptr=0x60004))).shape == (1000,)
    monkeypatch.setattr(driver, "active", type("Ctx", (), {"default_handle": 7})())   # another device context
    assert fast((x, 0.5, y, 1j)) is fastgen.MISS
    assert len(launched) == 3
