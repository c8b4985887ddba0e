"""The standard kernels, and ``gpunb.warm``: what ``gpunb cache warm`` precompiles besides the
user's modules.

The demo kernels, and the array kernels a first notebook session is most likely to need:
common ufuncs on float32/float64 (and integer arithmetic) for contiguous arrays and Python
scalars, copies and casts, transposing copies, concatenation's joins, and the reductions.
Each is rendered exactly as the runtime renders it, so its cache key is the one the runtime
looks up.
"""

from __future__ import annotations

import numpy as np

from ..build.warm import ModuleSpec, WarmReport, warm_modules

FLOATS = ("float32", "float64")
INTS = ("int32", "int64")
_BINARY = ("add", "subtract", "multiply", "true_divide", "power", "maximum", "minimum", "less",
           "greater", "equal")
_INT_BINARY = ("add", "subtract", "multiply", "floor_divide", "remainder", "less", "equal")
_UNARY = ("sqrt", "exp", "log", "sin", "cos", "tanh", "absolute", "negative", "square")
_REDUCTIONS = ("sum", "mean", "max", "min", "argmax", "argmin", "std", "var")
_INT_REDUCTIONS = ("sum", "max", "min", "argmax", "mean")


def array_kernels() -> list[tuple[str, str]]:
    """(name, CUDA source) of the standard array kernels; pure, no GPU needed."""
    from .elementwise import codegen as ecg
    from .elementwise import ir as eir
    from .elementwise import ops
    from .reduction import codegen as rcg
    from .rearrange import codegen as gcg
    from .reduction import ir as rir
    from .transpose import codegen as tcg

    out = []

    def ufunc(name, dtypes, kinds):
        op = ops.get(name)
        dtypes = tuple(d if d in (int, float) else np.dtype(d) for d in dtypes)
        loop = op.resolve(dtypes)
        ins = [loop[i] if d in (int, float) else np.dtype(d) for i, d in enumerate(dtypes)]
        k = eir.ufunc_kernel(op.name, ins, kinds, None, "contiguous", 1, loop=loop)
        out.append((k.name, ecg.render(k)))

    for dt in FLOATS:
        for name in _BINARY:
            ufunc(name, (dt, dt), ("array", "array"))
            ufunc(name, (dt, dt), ("array", "uniform"))     # x / x.max(): a 0-d operand
            ufunc(name, (dt, float), ("array", "scalar"))
            ufunc(name, (float, dt), ("scalar", "array"))
        ufunc("power", (dt, int), ("array", "scalar"))
        for name in ("less", "greater", "equal"):              # x > 0: an int scalar
            ufunc(name, (dt, int), ("array", "scalar"))
        for name in _UNARY:
            ufunc(name, (dt,), ("array",))
    for dt in INTS:
        for name in _INT_BINARY:
            ufunc(name, (dt, dt), ("array", "array"))
            ufunc(name, (dt, int), ("array", "scalar"))
    for src, dst in (("float32", "float32"), ("float64", "float64"), ("float64", "float32"),
                     ("float32", "float64"), ("int64", "float64"), ("bool", "float32")):
        k = eir.copy_kernel(src, dst)
        out.append((k.name, ecg.render(k)))
        if src == dst:
            fill = eir.copy_kernel(src, dst, "scalar")
            out.append((fill.name, ecg.render(fill)))
            t = tcg.TransposeKernel(src, dst)
            out.append((t.name, tcg.render(t)))
    for word in (1, 2, 4, 8, 16):        # concatenate's contiguous pieces
        k = gcg.JoinKernel(word)
        out.append((k.name, gcg.render(k)))
    bools = [("bool", ("sum", "any", "all", "count_nonzero"))]      # (x > 0).sum() and friends
    for dt, funcs in [(d, _REDUCTIONS) for d in FLOATS] + [(d, _INT_REDUCTIONS) for d in INTS] + bools:
        for func in funcs:
            k = rir.kernel_for(func, dt, None, 1, 1)
            out.append((k.name, rcg.render(k)))
            if func in ("std", "var"):          # their mean pass
                mean = rir.kernel_for("mean", dt, rir.result_dtype("mean", np.dtype(dt), None), 1, 1)
                out.append((mean.name, rcg.render(mean)))
    seen, unique = set(), []
    for name, src in out:
        if name not in seen:
            seen.add(name)
            unique.append((name, src))
    return unique

DEMO_SOURCE = r"""
extern "C" __global__ void vector_add(const float* __restrict__ a, const float* __restrict__ b,
                                      float* __restrict__ out, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        out[i] = a[i] + b[i];
}

// One Jacobi step of the 2-D Laplace equation: every interior point becomes the mean of its
// four neighbours; the boundary is copied.
extern "C" __global__ void laplace_step(const float* __restrict__ in, float* __restrict__ out,
                                        int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r >= rows || c >= cols) return;
    int i = r * cols + c;
    if (r == 0 || c == 0 || r == rows - 1 || c == cols - 1) { out[i] = in[i]; return; }
    out[i] = 0.25f * (in[i - 1] + in[i + 1] + in[i - cols] + in[i + cols]);
}
"""

DEMO = ModuleSpec("demo", DEMO_SOURCE)


def standard_modules() -> list[ModuleSpec]:
    """The demo and the standard array kernels (rendered here, which takes a few tenths of a
    second: only a warm asks for them)."""
    from .sort import codegen as scg     # radix sorts of the common dtypes (CUB: seconds each)

    sorts = [ModuleSpec(k.label, scg.render(k), scg.nvrtc_options(k)) for k in scg.warm_kernels()]
    return [DEMO] + [ModuleSpec(name, source) for name, source in array_kernels()] + sorts + search_modules()


def search_modules() -> list[ModuleSpec]:
    """median/percentile's radix select and searchsorted's binary search for the common dtypes
    (histograms depend on their range's dtypes: built on first use)."""
    from .search import codegen as kcg

    kernels = [kcg.SelectKernel(dt) for dt in FLOATS + INTS]
    kernels += [kcg.SearchKernel(dt, side) for dt in FLOATS + INTS for side in ("left", "right")]
    return [ModuleSpec(k.label if isinstance(k, kcg.SelectKernel) else k.name, kcg.render(k))
            for k in kernels]


def warm(modules=None, arch=None, *, jobs: int | None = None, standard: bool = True) -> WarmReport:
    """Compile ``modules`` (:class:`~gpunb.core.build.warm.ModuleSpec`) and, with
    ``standard=True``, gpunb's standard kernels into the kernel cache for ``arch`` (default:
    the current device's), in parallel, with progress events.

    A module that fails to compile is reported in ``WarmReport.failed``; the others still
    compile. ``gpunb cache warm`` and ``%gpucache warm`` call this.
    """
    specs = (standard_modules() if standard else []) + list(modules or [])
    return warm_modules(specs, arch, jobs=jobs)
