"""The row interchanges of an LU factorization (LAPACK's ``laswp``, backward) applied to one
vector, CUDA C++ source.

A transposed LU solve ends with ``x = P z``: the pivots' swaps applied last to first, each
depending on the ones before it. cuSOLVER's ``getrs`` does this in global memory and it was
most of its time for one right-hand side (0.72 ms of ``Xgetrs`` against 0.14 ms for each
triangular solve at n = 2048 on an H100); here one block stages the vector and the pivots in
shared memory and either one thread swaps (0.10 ms) or, where four int arrays more fit, the
block computes the permutation the swaps make and scatters the vector once (``_par``).

Pure: imports nothing from CUDA, returns a string.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..prelude import prelude

THREADS = 256
SHARED_LIMIT = 48 * 1024          # dynamic shared memory without an opt-in attribute
_WORDS = {4: "unsigned int", 8: "unsigned long long", 16: "ulonglong2"}


def shared_bytes(n: int, itemsize: int, parallel: bool = False) -> int:
    """The dynamic shared memory of a vector of ``n`` items: the items, then ``n`` int pivots
    (and three more int arrays for the parallel kernel)."""
    return n * (itemsize + (16 if parallel else 4))


def fits(n: int, itemsize: int, parallel: bool = False) -> bool:
    return itemsize in _WORDS and shared_bytes(n, itemsize, parallel) <= SHARED_LIMIT


@dataclass(frozen=True)
class UnpivotKernel:
    """Backward row interchanges of a vector of ``itemsize``-byte items (moved as words)."""

    itemsize: int

    def __post_init__(self):
        if self.itemsize not in _WORDS:
            raise ValueError(f"no unpivot kernel for {self.itemsize}-byte items")

    @property
    def name(self) -> str:
        return f"lu_unpivot_{self.itemsize * 8}"


def render(kernel: UnpivotKernel) -> str:
    return source(kernel.name, kernel.itemsize)


def entry_points(kernel: UnpivotKernel) -> tuple[str, ...]:
    return (kernel.name, kernel.name + "_par")


def vector_width(kernel: UnpivotKernel) -> int:
    return 1


def source(name: str, itemsize: int) -> str:
    """The kernel ``name(T* x, const long long* ipiv, int n)``: for ``i = n-1 .. 0`` swap
    ``x[i]`` and ``x[ipiv[i] - 1]`` (1-based pivots). Launch one block of :data:`THREADS`
    threads with :func:`shared_bytes` of dynamic shared memory."""
    T = _WORDS[itemsize]
    return "\n".join([
        prelude(),
        _parallel(name + "_par", T),
        f'extern "C" __global__ void __launch_bounds__({THREADS}) '
        f"{name}({T}* __restrict__ x, const long long* __restrict__ ipiv, const int n) {{",
        "    extern __shared__ ulonglong2 smem[];     // 16-byte aligned for every item size",
        f"    {T}* s = reinterpret_cast<{T}*>(smem);",
        "    int* piv = reinterpret_cast<int*>(s + n);",
        "    for (int i = threadIdx.x; i < n; i += blockDim.x) {",
        "        s[i] = x[i];",
        "        piv[i] = (int)ipiv[i] - 1;",
        "    }",
        "    __syncthreads();",
        "    if (threadIdx.x == 0) {",
        "        // Each swap may move what an earlier one moved: one thread, in order.",
        "        for (int i = n - 1; i >= 0; --i) {",
        "            const int j = piv[i];",
        f"            if (j != i) {{ const {T} t = s[i]; s[i] = s[j]; s[j] = t; }}",
        "        }",
        "    }",
        "    __syncthreads();",
        "    for (int i = threadIdx.x; i < n; i += blockDim.x) x[i] = s[i];",
        "}",
        "",
    ])


def _parallel(name: str, T: str) -> str:
    """``name(T* x, const long long* ipiv, int n)``, the same result without the chain of
    swaps. The forward swaps ``P^T`` move position ``p_i``'s value to ``i`` at step ``i``, and
    ``x = P z`` is ``x[perm[i]] = z[i]`` for that permutation: ``perm[i]`` is what position
    ``p_i`` held before step ``i``, i.e. what position ``j`` held before its own step ``j``
    for the last earlier step ``j`` with ``p_j == p_i`` (``p_i`` itself if none). What a
    position held before its own step follows the last steps that moved into it, back to
    one no step moved into (pointer jumping). Shared memory: :func:`shared_bytes` with
    ``parallel=True``."""
    return "\n".join([
        f'extern "C" __global__ void __launch_bounds__({THREADS}) '
        f"{name}({T}* __restrict__ x, const long long* __restrict__ ipiv, const int n) {{",
        "    extern __shared__ ulonglong2 smem[];",
        f"    {T}* s = reinterpret_cast<{T}*>(smem);",
        "    int* piv = reinterpret_cast<int*>(s + n);",
        "    int* last = piv + n;      // the last step so far that moved a value into position q",
        "    int* root = last + n;     // position k before step k held position root[k]'s value",
        "    int* perm = root + n;",
        "    for (int i = threadIdx.x; i < n; i += blockDim.x) {",
        "        s[i] = x[i];",
        "        piv[i] = (int)ipiv[i] - 1;",
        "        last[i] = -1;",
        "    }",
        "    __syncthreads();",
        "    for (int j = threadIdx.x; j < n; j += blockDim.x)",
        "        if (piv[j] != j) atomicMax(&last[piv[j]], j);     // every such j is below piv[j]",
        "    __syncthreads();",
        "    for (int k = threadIdx.x; k < n; k += blockDim.x) root[k] = last[k] >= 0 ? last[k] : k;",
        "    __syncthreads();",
        "    for (;;) {       // in place: a value read mid-round is still an ancestor",
        "        int moved = 0;",
        "        for (int k = threadIdx.x; k < n; k += blockDim.x) {",
        "            const int a = root[k], b = root[a];",
        "            if (a != b) { root[k] = b; moved = 1; }",
        "        }",
        "        if (!__syncthreads_or(moved)) break;",
        "    }",
        "    for (int k = threadIdx.x; k < n; k += blockDim.x) last[k] = -1;",
        "    __syncthreads();",
        "    if (threadIdx.x < 32) {      // one warp, 32 steps at a time in step order",
        "        const int lane = threadIdx.x;",
        "        for (int c = 0; c < n; c += 32) {",
        "            const int i = c + lane;",
        "            const unsigned active = __ballot_sync(0xffffffffu, i < n);",
        "            if (i < n) {",
        "                const int q = piv[i];",
        "                // the earlier steps of this group with the same target: the lanes below",
        "                const unsigned same = __match_any_sync(active, q);",
        "                const unsigned below = same & ((1u << lane) - 1u);",
        "                const int found = below ? c + 31 - __clz(below) : last[q];",
        "                perm[i] = found >= 0 ? root[found] : q;",
        "                __syncwarp(active);",
        "                if ((same >> lane) == 1u) last[q] = i;     // the group's last step",
        "            }",
        "            __syncwarp();",
        "        }",
        "    }",
        "    __syncthreads();",
        "    for (int k = threadIdx.x; k < n; k += blockDim.x) x[perm[k]] = s[k];",
        "}",
        "",
    ])
