"""Reduction kernels' partial states: the state struct, its identity, combine and shuffle,
how lanes combine states (the tree), how an output is written from one, and how a split's
states are combined (:mod:`gpunb.core.runtime.scratch`'s tickets, then the states). Pure:
strings out, as :mod:`.codegen`, which renders the entry points around them.
"""

from __future__ import annotations

import numpy as np

from ...abi import TICKET_BYTES, TICKETS  # noqa: F401 (the scratch's layout, shared with the runtime)
from ...dtypes import compute_type, literal, storage_type
from .. import ir

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


def is_arg(kernel) -> bool:
    return kernel.reducer in ("argmax", "argmin")


def is_user(kernel) -> bool:
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


def state_struct(kernel) -> list[str]:
    if is_user(kernel):
        return _user_state(kernel)
    ct = compute_type(state_dtype(kernel))
    idx = " long long i;" if is_arg(kernel) else ""
    return [f"struct S {{ {ct} v;{idx} }};",
            "__device__ __forceinline__ S shfl(const S s, const int d) {",
            "    S r;",
            *["    " + ln for ln in _shuffle(state_dtype(kernel))],
            *(["    r.i = __shfl_down_sync(0xffffffffu, s.i, d);"] if is_arg(kernel) else []),
            "    return r;",
            "}",
            "__device__ __forceinline__ S ident() { S s; s.v = " + _identity(kernel)
            + (f"; s.i = {NO_INDEX}" if is_arg(kernel) else "") + "; return s; }",
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
    if is_arg(kernel):
        return "gpunb::store<long long>(r.i)"
    ct = compute_type(state_dtype(kernel))
    v = "r.v"
    if kernel.finish != "none":
        v = f"(r.v / gpunb::cast<{ct}>(divisor))"
        if kernel.finish == "sqrt_divide":
            v = f"sqrt({v})"
    return f"gpunb::store<{storage_type(out)}>(gpunb::cast<{compute_type(out)}>({v}))"


def write_output(kernel, i: str) -> str:
    """The statement writing output ``i`` from the final state ``r``."""
    if is_user(kernel):
        return (f"{{ {kernel.out_type}* _p_ = reinterpret_cast<{kernel.out_type}*>(&out[{i}]); "
                f"const _type_reduce a = r.v; {kernel.out_type}& {kernel.out_name} = *_p_; "
                f"{kernel.post_map_expr}; }}")
    return f"out[{i}] = {_finish(kernel)};"


def lane_tree(indent: str) -> list[str]:
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


def state_bytes(kernel) -> int:
    """The size of a partial state (a user's: the most gpunb allows, 32)."""
    if is_user(kernel):
        return 32
    return state_dtype(kernel).itemsize + (8 if is_arg(kernel) else 0)


def _load_cg(kernel) -> list[str]:
    """``load_cg(p)``: a state written by another block in this launch, member by member
    through L2 (``__ldcg``; bool as a byte). A user's state of whole 32-bit words is read as
    words, any other plainly (the reading block never read it before: no L1 line to be
    stale)."""
    head = "__device__ __forceinline__ S load_cg(const S* p) {"
    if is_user(kernel):
        return [head,
                "    if (sizeof(S) % 4 != 0) return *p;",
                "    unsigned int w[(sizeof(S) + 3) / 4];",
                "    #pragma unroll",
                "    for (int k = 0; k < (int)(sizeof(S) / 4); ++k) w[k] = __ldcg(reinterpret_cast<const unsigned int*>(p) + k);",
                "    S r;",
                "    memcpy(&r, w, sizeof(S));",
                "    return r;",
                "}"]
    dt = state_dtype(kernel)
    if dt.kind == "c":
        value = ["r.v.re = __ldcg(&p->v.re);", "r.v.im = __ldcg(&p->v.im);"]
    elif dt.kind == "b":
        value = ["r.v = __ldcg(reinterpret_cast<const unsigned char*>(&p->v)) != 0;"]
    else:
        value = ["r.v = __ldcg(&p->v);"]
    index = ["r.i = __ldcg(&p->i);"] if is_arg(kernel) else []
    return [head, "    S r;", *("    " + ln for ln in value + index), "    return r;", "}"]


def split_functions(kernel) -> list[str]:
    """``combine_range``: outputs ``[base, end)``, ``BX = blockDim.x / G`` at a time, each
    reduced from its ``K`` partial states ([K, M]) by ``G`` lanes, finished and written.
    ``finish_split``: a block's ticket after its partial states; the last block of the output
    group ``[first, end)`` combines it (its ``atomicInc`` leaves the ticket zero again).
    States written by other blocks are read through L2 (``__ldcg``), never a stale L1 line."""
    return [
        f"constexpr long long TICKET_BYTES = {TICKET_BYTES};",
        *_load_cg(kernel),
        "template <bool L2>",
        f"__device__ __noinline__ void combine_range(const S* partial, {storage_type(kernel.out)}* __restrict__ out, "
        "const long long M, const long long K, const int G, const int lane_fast, const double divisor, "
        "long long base, const long long end, S* sh) {",
        "    const int t = threadIdx.x;",
        "    const int BX = blockDim.x / G;",
        "    const int lane = lane_fast ? (t % G) : (t / BX);",
        "    const int slot = lane_fast ? (t / G) : (t % BX);",
        "    const int ls = lane_fast ? 1 : BX;",
        "    for (; base < end; base += BX) {",
        "        const long long i = base + slot;",
        "        S acc = ident();",
        "        if (i < end && L2) {       // the launch's tail: every load in flight at once",
        "            #pragma unroll 16",
        "            for (long long k = lane; k < K; k += G) acc = comb(acc, load_cg(partial + k * M + i));",
        "        } else if (i < end) {",
        "            for (long long k = lane; k < K; k += G) acc = comb(acc, partial[k * M + i]);",
        "        }",
        *lane_tree("        "),
        "        if (lane == 0 && i < end) {",
        "            const S r = acc;",
        f"            {write_output(kernel, 'i')}",
        "        }",
        "        __syncthreads();",
        "    }",
        "}",
        f"__device__ __forceinline__ void finish_split(unsigned char* scratch_, {storage_type(kernel.out)}* __restrict__ out, "
        "const long long M, const double divisor, const long long first, const long long end, "
        "const int CG, const int clf, S* sh) {",
        "    __shared__ unsigned int last_;",
        "    __threadfence();        // this block's states, visible before its ticket",
        "    __syncthreads();",
        "    if (threadIdx.x == 0)",
        "        last_ = atomicInc(reinterpret_cast<unsigned int*>(scratch_) + blockIdx.x, gridDim.y - 1) == gridDim.y - 1;",
        "    __syncthreads();",
        "    if (!last_) return;",
        "    combine_range<true>(reinterpret_cast<const S*>(scratch_ + TICKET_BYTES), out, M, gridDim.y, CG, clf, "
        "divisor, first, end, sh);",
        "}"]


def combine_entry(kernel) -> list[str]:
    """``<name>_combine``: the second launch of a split whose groups hold too many states for
    one block (``final_ == 2``: partial states only), ``BX`` outputs a block."""
    return [f'extern "C" __global__ void {kernel.name}_combine(const unsigned char* __restrict__ scratch_, '
            f"{storage_type(kernel.out)}* __restrict__ out, const long long M, const long long K, "
            "const int G, const int lane_fast, const double divisor) {",
            "    __shared__ S sh[%d];" % BLOCK,
            "    const long long BX = blockDim.x / G;",
            "    const S* partial = reinterpret_cast<const S*>(scratch_ + TICKET_BYTES);",
            "    for (long long base = (long long)blockIdx.x * BX; base < M; base += (long long)gridDim.x * BX)",
            "        combine_range<false>(partial, out, M, K, G, lane_fast, divisor, base, min(M, base + BX), sh);",
            "}"]
