"""The row interchanges of an LU factorization (LAPACK's ``laswp``, backward) applied to one
vector, CUDA C++ source.

A transposed LU solve ends with ``x = P z``: the pivots' swaps applied last to first, each
depending on the ones before it. cuSOLVER's ``getrs`` does this in global memory and it was
most of its time for one right-hand side (0.72 ms of ``Xgetrs`` against 0.14 ms for each
triangular solve at n = 2048 on an H100); here one block stages the vector and the pivots in
shared memory, one thread swaps (0.10 ms), and the block writes the vector back.

Pure: imports nothing from CUDA, returns a string.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..prelude import prelude

THREADS = 256
SHARED_LIMIT = 48 * 1024          # dynamic shared memory without an opt-in attribute
_WORDS = {4: "unsigned int", 8: "unsigned long long", 16: "ulonglong2"}


def shared_bytes(n: int, itemsize: int) -> int:
    """The dynamic shared memory of a vector of ``n`` items: the items, then ``n`` int pivots."""
    return n * (itemsize + 4)


def fits(n: int, itemsize: int) -> bool:
    return itemsize in _WORDS and shared_bytes(n, itemsize) <= SHARED_LIMIT


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
    return (kernel.name,)


def vector_width(kernel: UnpivotKernel) -> int:
    return 1


def source(name: str, itemsize: int) -> str:
    """The kernel ``name(T* x, const long long* ipiv, int n)``: for ``i = n-1 .. 0`` swap
    ``x[i]`` and ``x[ipiv[i] - 1]`` (1-based pivots). Launch one block of :data:`THREADS`
    threads with :func:`shared_bytes` of dynamic shared memory."""
    T = _WORDS[itemsize]
    return "\n".join([
        prelude(),
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
