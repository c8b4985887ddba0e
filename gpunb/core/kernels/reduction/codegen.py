"""Reduction kernels: :class:`~gpunb.core.kernels.ir.ReductionKernel` -> CUDA C++ source.

One module, three entry points, all with the same thread layout. A block of ``blockDim.x``
threads handles ``blockDim.x / G`` outputs with ``G`` threads ("lanes", a power of two) per
output. ``lane_fast`` puts the lanes of one output in consecutive threads (coalesced when the
reduced axis is the contiguous one: row sums, full sums); otherwise consecutive threads take
consecutive outputs (coalesced when the outputs are adjacent in memory: column sums).
``blockIdx.y`` splits the reduction (split ``s`` of ``S`` takes runs ``s, s + S, ...`` of ``G``
elements) when there are too few outputs to fill the device; each split then writes a
partial state and ``<name>_combine`` finishes them.

- ``<name>_main``: any strides (collapsed shapes and byte strides in a struct by value).
- ``<name>_vec``: one reduced dimension, contiguous in the single 'array' operand, rows
  aligned to 16 bytes: each lane loads 16 bytes per step.
- ``<name>_combine``: reduces ``S`` partial states per output, then finishes.

Codegen is pure: no CUDA import, a string out.
"""

from __future__ import annotations

import numpy as np

from ...dtypes import compute_type, literal, storage_type
from .. import ir
from ..elementwise.codegen import VEC_BYTES, VEC_TYPE, Emitter
from ..prelude import prelude

THREADS = 256       # threads per block of every reduction launch
BLOCK = THREADS
NO_INDEX = "0x7fffffffffffffffLL"   # an arg state's index before it has seen an element


def state_dtype(kernel: ir.ReductionKernel) -> np.dtype:
    return kernel.value.dtype


def _identity(kernel: ir.ReductionKernel) -> str:
    dt = state_dtype(kernel)
    r = kernel.reducer
    if r == "sum":
        return literal(0, dt)
    if r == "prod":
        return literal(1, dt)
    if r == "any":
        return "false"
    if r == "all":
        return "true"
    if r in ("argmax", "argmin"):
        return literal(0, dt)            # unused: NO_INDEX marks the empty state
    low = r in ("max", "nanmax")
    if dt.kind == "b":
        return "false" if low else "true"
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return literal(info.min if low else info.max, dt)
    if r in ("nanmax", "nanmin"):
        return literal(float("nan"), dt)   # fmax(nan, x) = x; all-NaN stays NaN, as NumPy
    inf = float("-inf") if low else float("inf")
    return literal(complex(inf, inf) if dt.kind == "c" else inf, dt)


def _combine(kernel: ir.ReductionKernel) -> list[str]:
    """The body of ``comb(a, b)``: the reducer's associative step."""
    r, kind = kernel.reducer, state_dtype(kernel).kind
    if r in ("argmax", "argmin"):
        better = ">" if r == "argmax" else "<"
        # NumPy: the first NaN wins; among equal values the smallest index.
        return [f"if (b.i == {NO_INDEX}) return a;",
                f"if (a.i == {NO_INDEX}) return b;",
                "const bool an = gpunb::isnan_(a.v), bn = gpunb::isnan_(b.v);",
                "if (an || bn) return (an && bn) ? (a.i <= b.i ? a : b) : (an ? a : b);",
                f"if (a.v {better} b.v) return a;",
                f"if (b.v {better} a.v) return b;",
                "return a.i <= b.i ? a : b;"]
    expr = {"sum": "a.v + b.v", "prod": "a.v * b.v", "any": "a.v || b.v", "all": "a.v && b.v",
            "max": "gpunb::maximum_(a.v, b.v)", "min": "gpunb::minimum_(a.v, b.v)",
            "nanmax": "gpunb::fmax_(a.v, b.v)", "nanmin": "gpunb::fmin_(a.v, b.v)"}[r]
    if kind == "b" and r in ("max", "nanmax"):
        expr = "a.v || b.v"
    elif kind == "b" and r in ("min", "nanmin"):
        expr = "a.v && b.v"
    elif kind == "b" and r in ("sum", "prod"):
        expr = {"sum": "a.v || b.v", "prod": "a.v && b.v"}[r]
    ct = compute_type(state_dtype(kernel))
    return [f"S s; s.v = ({ct})({expr});", "return s;"]


def _is_arg(kernel) -> bool:
    return kernel.reducer in ("argmax", "argmin")


def _is_user(kernel) -> bool:
    return kernel.reducer == "user"


def _user_state(kernel) -> list[str]:
    """A user reduction's state: any C++ type, shuffled as 32-bit words."""
    return ["struct S { _type_reduce v; };",
            "__device__ __forceinline__ S shfl(const S s, const int d) {",
            "    S r;",
            "    unsigned int w[(sizeof(S) + 3) / 4];",
            "    memcpy(w, &s, sizeof(S));",
            "    #pragma unroll",
            "    for (int k = 0; k < (int)((sizeof(S) + 3) / 4); ++k) w[k] = __shfl_down_sync(0xffffffffu, w[k], d);",
            "    memcpy(&r, w, sizeof(S));",
            "    return r;",
            "}",
            f"__device__ __forceinline__ S ident() {{ S s; s.v = (_type_reduce)({kernel.identity}); return s; }}",
            "__device__ __forceinline__ S comb(const S a_, const S b_) {",
            "    const _type_reduce a = a_.v, b = b_.v;",
            f"    S s; s.v = (_type_reduce)({kernel.reduce_expr});",
            "    return s;",
            "}"]


def _state_struct(kernel) -> list[str]:
    if _is_user(kernel):
        return _user_state(kernel)
    ct = compute_type(state_dtype(kernel))
    idx = " long long i;" if _is_arg(kernel) else ""
    return [f"struct S {{ {ct} v;{idx} }};",
            "__device__ __forceinline__ S shfl(const S s, const int d) {",
            "    S r;",
            *["    " + ln for ln in _shuffle(state_dtype(kernel))],
            *(["    r.i = __shfl_down_sync(0xffffffffu, s.i, d);"] if _is_arg(kernel) else []),
            "    return r;",
            "}",
            "__device__ __forceinline__ S ident() { S s; s.v = " + _identity(kernel)
            + (f"; s.i = {NO_INDEX}" if _is_arg(kernel) else "") + "; return s; }",
            "__device__ __forceinline__ S comb(const S a, const S b) {",
            *["    " + ln for ln in _combine(kernel)],
            "}"]


def _shuffle(dt: np.dtype) -> list[str]:
    """``r.v`` = lane ``+d``'s ``s.v`` (__shfl_down_sync has no 8/16-bit or complex forms)."""
    if dt.kind == "c":
        return ["r.v.re = __shfl_down_sync(0xffffffffu, s.v.re, d);",
                "r.v.im = __shfl_down_sync(0xffffffffu, s.v.im, d);"]
    if dt.kind in "biu" and dt.itemsize < 4:
        return [f"r.v = ({compute_type(dt)})__shfl_down_sync(0xffffffffu, (int)s.v, d);"]
    return ["r.v = __shfl_down_sync(0xffffffffu, s.v, d);"]


def _finish(kernel) -> str:
    """The C++ expression of the output value from the final state ``r``."""
    out = kernel.out
    if _is_arg(kernel):
        return "gpunb::store<long long>(r.i)"
    ct = compute_type(state_dtype(kernel))
    v = "r.v"
    if kernel.finish != "none":
        v = f"(r.v / gpunb::cast<{ct}>(divisor))"
        if kernel.finish == "sqrt_divide":
            v = f"sqrt({v})"
    return f"gpunb::store<{storage_type(out)}>(gpunb::cast<{compute_type(out)}>({v}))"


def _write(kernel, i: str) -> str:
    """The statement writing output ``i`` from the final state ``r``."""
    if _is_user(kernel):
        return (f"{{ {kernel.out_type}* _p_ = reinterpret_cast<{kernel.out_type}*>(&out[{i}]); "
                f"const _type_reduce a = r.v; {kernel.out_type}& {kernel.out_name} = *_p_; "
                f"{kernel.post_map_expr}; }}")
    return f"out[{i}] = {_finish(kernel)};"


def _params(kernel) -> str:
    ps = []
    for i, o in enumerate(kernel.operands):
        if o.kind == "scalar":
            ps.append(f"const {compute_type(o.dtype)} a{i}")
        else:
            ps.append(f"const {storage_type(o.dtype)}* __restrict__ a{i}")
    ps += ["S* __restrict__ partial", f"{storage_type(kernel.out)}* __restrict__ out",
           "const long long M", "const long long K", "const int G",
           "const int lane_fast", "const int final_", "const double divisor"]
    return ", ".join(ps)


def strided_operands(kernel) -> list[int]:
    """Operands with strides in the geometry struct ('array' and 'outer'), in its order."""
    return [i for i, o in enumerate(kernel.operands) if o.kind != "scalar"]


def _geometry(kernel) -> str:
    n = max(1, len(strided_operands(kernel)))
    return (f"struct Geo {{ long long oshape[{kernel.ndim_outer}]; long long rshape[{kernel.ndim_reduce}]; "
            f"long long ostr[{n}][{kernel.ndim_outer}]; long long rstr[{n}][{kernel.ndim_reduce}]; }};")


def _walk(var: str, shape: str, nd: int, offsets: list[tuple[str, str]], indent: str) -> list[str]:
    """Decompose the flat index ``var`` over ``shape`` (C order) and add each dimension's index
    times the stride to each offset; the outermost dimension needs no division."""
    lines = [f"{indent}long long rest_ = {var};"]
    for d in range(nd - 1, -1, -1):
        if d == 0:
            lines.append(f"{indent}{{ const long long idx = rest_;")
        else:
            lines.append(f"{indent}{{ const long long q = rest_ / {shape}[{d}], idx = rest_ - q * {shape}[{d}]; rest_ = q;")
        lines += [f"{indent}  {off} += idx * {stride}[{d}];" for off, stride in offsets]
        lines.append(f"{indent}}}")
    return lines


def _element(kernel, access, index: str, indent: str, target: str = "acc") -> list[str]:
    """Statements folding one element (operand accesses from ``access``) into ``target``."""
    if _is_user(kernel):
        # every access is read before the user's names are declared (a name may shadow one)
        ops = range(len(kernel.operands))
        return [f"{indent}{{ {' '.join(f'const {kernel.user_types[j]} _m{j} = {access(j)};' for j in ops)}",
                f"{indent}  {{ {' '.join(f'const {kernel.user_types[j]} {kernel.names[j]} = _m{j};' for j in ops)}",
                f"{indent}    S e_; e_.v = (_type_reduce)({kernel.map_expr}); {target} = comb({target}, e_); }} }}"]
    em = Emitter(access)
    v = em.emit(kernel.value)
    lines = [indent + ln for ln in em.lines]
    idx = f" e_.i = {index};" if _is_arg(kernel) else ""
    lines.append(f"{indent}{{ S e_; e_.v = {v};{idx} {target} = comb({target}, e_); }}")
    return lines


def _tree(indent: str) -> list[str]:
    """Combine the lanes of each output; lane 0 ends with the result in ``acc``. Consecutive
    lanes reduce with warp shuffles (then across warps through shared memory); lanes spread
    over the block (one output per thread of a row) reduce through shared memory."""
    lines = ["if (lane_fast) {",
             "    const int w = G < 32 ? G : 32;",
             "    for (int s = w >> 1; s > 0; s >>= 1) acc = comb(acc, shfl(acc, s));",
             "    if (G > 32) {",
             "        const int nw = G >> 5;",
             "        if ((t & 31) == 0) sh[t >> 5] = acc;",
             "        __syncthreads();",
             "        if (lane < 32) {",
             "            acc = lane < nw ? sh[slot * nw + lane] : ident();",
             "            for (int s = nw >> 1; s > 0; s >>= 1) acc = comb(acc, shfl(acc, s));",
             "        }",
             "    }",
             "} else {",
             "    sh[t] = acc;",
             "    __syncthreads();",
             "    for (int s = G >> 1; s > 0; s >>= 1) {",
             "        if (lane < s) sh[t] = comb(sh[t], sh[t + s * ls]);",
             "        __syncthreads();",
             "    }",
             "    acc = sh[t];",
             "}"]
    return [indent + ln for ln in lines]


def _prologue() -> list[str]:
    return ["    __shared__ S sh[%d];" % BLOCK,
            "    const int t = threadIdx.x;",
            "    const int BX = blockDim.x / G;",
            "    const int lane = lane_fast ? (t % G) : (t / BX);",
            "    const int slot = lane_fast ? (t / G) : (t % BX);",
            "    const int ls = lane_fast ? 1 : BX;",
            # split s of gridDim.y takes every gridDim.y-th run of G elements, so that the
            # blocks running together read neighbouring memory (DRAM pages), not far chunks
            "    const long long kb = (long long)blockIdx.y * G;",
            "    const long long ks = (long long)gridDim.y * G;"]


def _store(kernel, indent: str) -> list[str]:
    return [f"{indent}if (lane == 0 && i < M) {{",
            f"{indent}    const S r = acc;",
            f"{indent}    if (final_) {_write(kernel, 'i')}",
            f"{indent}    else partial[(long long)blockIdx.y * M + i] = r;",
            f"{indent}}}",
            f"{indent}__syncthreads();"]


def _outer_setup(kernel, indent: str) -> list[str]:
    """Offsets of output ``i`` in every strided operand, and the 'outer' operands' values."""
    slots = strided_operands(kernel)
    lines = [f"{indent}long long {', '.join(f'off{k} = 0' for k in range(max(1, len(slots))))};"]
    lines += _walk("i", "g.oshape", kernel.ndim_outer,
                   [(f"off{k}", f"g.ostr[{k}]") for k in range(len(slots))], indent)
    for k, i in enumerate(slots):
        o = kernel.operands[i]
        if o.kind == "outer":
            st = storage_type(o.dtype)
            lines.append(f"{indent}const {compute_type(o.dtype)} u{i} = gpunb::load(*reinterpret_cast<const {st}*>("
                         f"reinterpret_cast<const char*>(a{i}) + off{k}));")
    return lines


UNROLL = 8   # independent loads in flight per lane before they are folded in


def _main(kernel) -> list[str]:
    slots = strided_operands(kernel)
    arrays = [(k, i) for k, i in enumerate(slots) if kernel.operands[i].kind == "array"]

    def access(i):
        o = kernel.operands[i]
        if o.kind == "scalar":
            return f"a{i}"
        if o.kind == "outer":
            return f"u{i}"
        k = slots.index(i)
        st = storage_type(o.dtype)
        return f"gpunb::load(*reinterpret_cast<const {st}*>(reinterpret_cast<const char*>(a{i}) + r{k}))"

    def one(kk: str, indent: str) -> list[str]:
        lines = [f"{indent}{{ const long long kk = {kk};",
                 f"{indent}  long long {', '.join(f'r{k} = off{k}' for k, _ in arrays) or 'r_unused = 0'};"]
        lines += _walk("kk", "g.rshape", kernel.ndim_reduce, [(f"r{k}", f"g.rstr[{k}]") for k, _ in arrays],
                       indent + "  ")
        lines += _element(kernel, access, "kk", indent + "  ")
        return lines + [f"{indent}}}"]

    unrolled = [ln for u in range(UNROLL) for ln in one(f"k + {u}LL * ks", "                ")]
    return [f'extern "C" __global__ void {kernel.name}_main({_params(kernel)}, const Geo g) {{',
            *_prologue(),
            "    for (long long base = (long long)blockIdx.x * BX; base < M; base += (long long)gridDim.x * BX) {",
            "        const long long i = base + slot;",
            "        S acc = ident();",
            "        if (i < M) {",
            *_outer_setup(kernel, "            "),
            "            long long k = kb + lane;",
            f"            for (; k + {UNROLL - 1}LL * ks < K; k += {UNROLL}LL * ks) {{",
            *unrolled,
            "            }",
            "            for (; k < K; k += ks) {",
            *one("k", "                "),
            "            }",
            "        }",
            *_tree("        "),
            *_store(kernel, "        "),
            "    }",
            "}"]


def vector_width(kernel) -> int:
    arrays = [o for o in kernel.operands if o.kind == "array"]
    return max(1, VEC_BYTES // arrays[0].dtype.itemsize) if len(arrays) == 1 else 1


def has_vec(kernel) -> bool:
    """Whether the module has a ``_vec`` entry: one 'array' operand and one reduced dim."""
    return kernel.ndim_reduce == 1 and sum(o.kind == "array" for o in kernel.operands) == 1


def _vec(kernel) -> list[str]:
    slots = strided_operands(kernel)
    (a_idx,) = [i for i in slots if kernel.operands[i].kind == "array"]
    k_a = slots.index(a_idx)
    st = storage_type(kernel.operands[a_idx].dtype)
    E = vector_width(kernel)
    vt = f"gpunb_vec<{st}, {E}>"

    def fold(x: str, v: str, indent: str) -> list[str]:
        """Fold the elements of vector ``x`` (vector index ``v``) into ``acc``."""
        def access(i):
            o = kernel.operands[i]
            return f"a{i}" if o.kind == "scalar" else f"u{i}" if o.kind == "outer" else f"gpunb::load({x}.v[e])"
        return [f"{indent}#pragma unroll", f"{indent}for (int e = 0; e < {E}; ++e) {{",
                *_element(kernel, access, f"{v} * {E} + e", indent + "    "), f"{indent}}}"]

    def access_tail(i):
        o = kernel.operands[i]
        return f"a{i}" if o.kind == "scalar" else f"u{i}" if o.kind == "outer" else "gpunb::load(row[k])"

    return [f'extern "C" __global__ void {kernel.name}_vec({_params(kernel)}, const Geo g) {{',
            *_prologue(),
            "    for (long long base = (long long)blockIdx.x * BX; base < M; base += (long long)gridDim.x * BX) {",
            "        const long long i = base + slot;",
            "        S acc = ident();",
            "        if (i < M) {",
            *_outer_setup(kernel, "            "),
            f"            const {st}* row = reinterpret_cast<const {st}*>(reinterpret_cast<const char*>(a{a_idx}) + off{k_a});",
            f"            const long long nv = K / {E};",
            f"            const {vt}* rv = reinterpret_cast<const {vt}*>(row);",
            "            long long v = kb + lane;",
            f"            for (; v + {UNROLL - 1}LL * ks < nv; v += {UNROLL}LL * ks) {{",
            *[f"                const {vt} x{u} = rv[v + {u}LL * ks];" for u in range(UNROLL)],
            *[ln for u in range(UNROLL) for ln in fold(f"x{u}", f"(v + {u}LL * ks)", "                ")],
            "            }",
            "            for (; v < nv; v += ks) {",
            f"                const {vt} x0 = rv[v];",
            *fold("x0", "v", "                "),
            "            }",
            f"            for (long long k = nv * {E} + kb + lane; k < K; k += ks) {{",
            *_element(kernel, access_tail, "k", "                "),
            "            }",
            "        }",
            *_tree("        "),
            *_store(kernel, "        "),
            "    }",
            "}"]


def _combine_entry(kernel) -> list[str]:
    return [f'extern "C" __global__ void {kernel.name}_combine(const S* __restrict__ partial, '
            f"{storage_type(kernel.out)}* __restrict__ out, const long long M, const long long K, "
            "const int G, const int lane_fast, const double divisor) {",
            "    __shared__ S sh[%d];" % BLOCK,
            "    const int t = threadIdx.x;",
            "    const int BX = blockDim.x / G;",
            "    const int lane = lane_fast ? (t % G) : (t / BX);",
            "    const int slot = lane_fast ? (t / G) : (t % BX);",
            "    const int ls = lane_fast ? 1 : BX;",
            "    for (long long base = (long long)blockIdx.x * BX; base < M; base += (long long)gridDim.x * BX) {",
            "        const long long i = base + slot;",
            "        S acc = ident();",
            "        if (i < M)",
            "            for (long long k = lane; k < K; k += G) acc = comb(acc, partial[k * M + i]);",
            *_tree("        "),
            "        if (lane == 0 && i < M) {",
            "            const S r = acc;",
            f"            {_write(kernel, 'i')}",
            "        }",
            "        __syncthreads();",
            "    }",
            "}"]


def has_cols(kernel) -> bool:
    """Whether the module has a ``_cols`` entry: the input array is the only operand and the
    reduction has one dimension."""
    return (kernel.ndim_reduce == 1 and len(kernel.operands) == 1
            and kernel.operands[0].kind == "array")


COLS_UNROLL = 4


def _cols(kernel) -> list[str]:
    """Column reductions: each thread takes ``E`` adjacent outputs with one 16-byte load per
    reduced row (consecutive threads, consecutive output groups), lanes split the rows."""
    st = storage_type(kernel.operands[0].dtype)
    E = vector_width(kernel)
    vt = f"gpunb_vec<{st}, {E}>"

    def fold(x: str, k: str, indent: str) -> list[str]:
        def access(i):
            return f"gpunb::load({x}.v[e])"
        return [f"{indent}#pragma unroll", f"{indent}for (int e = 0; e < {E}; ++e) {{",
                *_element(kernel, access, k, indent + "    ", "acc[e]"), f"{indent}}}"]

    def load(u: str, k: str) -> str:
        return f"const {vt} {u} = *reinterpret_cast<const {vt}*>(col + ({k}) * g.rstr[0][0]);"

    U = COLS_UNROLL
    return [f'extern "C" __global__ void {kernel.name}_cols({_params(kernel)}, const Geo g) {{',
            "    __shared__ S sh[%d];" % BLOCK,
            "    const int t = threadIdx.x;",
            "    const int BX = blockDim.x / G;",
            "    const int slot = t % BX, lane = t / BX;",
            "    const long long kb = (long long)blockIdx.y * G;",
            "    const long long ks = (long long)gridDim.y * G;",
            f"    const long long Mg = M / {E};",
            "    for (long long base = (long long)blockIdx.x * BX; base < Mg; base += (long long)gridDim.x * BX) {",
            "        const long long gi = base + slot;",
            f"        S acc[{E}];",
            "        #pragma unroll",
            f"        for (int e = 0; e < {E}; ++e) acc[e] = ident();",
            "        if (gi < Mg) {",
            f"            const long long i = gi * {E};",
            *_outer_setup(kernel, "            "),
            "            const char* col = reinterpret_cast<const char*>(a0) + off0;",
            "            long long k = kb + lane;",
            f"            for (; k + {U - 1}LL * ks < K; k += {U}LL * ks) {{",
            *[f"                {load(f'x{u}', f'k + {u}LL * ks')}" for u in range(U)],
            *[ln for u in range(U) for ln in fold(f"x{u}", f"k + {u}LL * ks", "                ")],
            "            }",
            "            for (; k < K; k += ks) {",
            f"                {load('x0', 'k')}",
            *fold("x0", "k", "                "),
            "            }",
            "        }",
            f"        for (int e = 0; e < {E}; ++e) {{",
            "            sh[t] = acc[e];",
            "            __syncthreads();",
            "            for (int s = G >> 1; s > 0; s >>= 1) {",
            "                if (lane < s) sh[t] = comb(sh[t], sh[t + s * BX]);",
            "                __syncthreads();",
            "            }",
            "            if (lane == 0 && gi < Mg) {",
            "                const S r = sh[t];",
            f"                const long long i = gi * {E} + e;",
            f"                if (final_) {_write(kernel, 'i')}",
            "                else partial[(long long)blockIdx.y * M + i] = r;",
            "            }",
            "            __syncthreads();",
            "        }",
            "    }",
            "}"]


def body(kernel: ir.ReductionKernel) -> str:
    """The kernel's own code, in a namespace of its own (``extern "C"`` names stay plain), so
    several kernels can share one module after a single prelude."""
    parts = [f"namespace {kernel.name}_ns {{", *_state_struct(kernel), _geometry(kernel), "",
             *_main(kernel), ""]
    if has_vec(kernel):
        parts += [*_vec(kernel), ""]
    if has_cols(kernel):
        parts += [*_cols(kernel), ""]
    parts += [*_combine_entry(kernel), "}", ""]
    return "\n".join(parts)


def render(kernel: ir.ReductionKernel) -> str:
    """The complete CUDA C++ source of a reduction kernel module."""
    return "\n".join([prelude(), VEC_TYPE, getattr(kernel, "header", ""), body(kernel)])


def nvrtc_options(kernel) -> tuple:
    """NVRTC options of a user reduction (none for gpunb's own)."""
    return tuple(getattr(kernel, "options", ()))


def entry_points(kernel: ir.ReductionKernel) -> tuple[str, ...]:
    names = [f"{kernel.name}_main"]
    if has_vec(kernel):
        names.append(f"{kernel.name}_vec")
    if has_cols(kernel):
        names.append(f"{kernel.name}_cols")
    return (*names, f"{kernel.name}_combine")
