"""The table of gpunb's public names: one line each (see :mod:`gpunb._registry` for what is
derived from it).

A line names the implementation as ``'module:attribute'`` under the ``gpunb`` package; the
helpers below say what kind of name it is (a NumPy function, a ufunc, an ndarray-only method,
a scalar type, an object of gpunb's own, a subpackage member). The members of
``gpunb.linalg``, ``gpunb.fft`` and ``gpunb.random`` are declared in :mod:`gpunb._table_sub`
through :func:`gpunb._table_sub.declare`.
"""

from __future__ import annotations

# (Plain classes and lists: ``import gpunb`` runs this module, so it imports nothing else.)
from . import _table_sub


class Entry:
    """One public name (or one ndarray-only method, ``kind='method'``).

    ``target`` is ``'module:attribute'`` relative to the gpunb package; ``method`` the
    ndarray method it also is; ``numpy`` the NumPy function it stands for, dotted under
    ``numpy`` (``'sum'``, ``'linalg.norm'``); ``fuse`` how ``@gpunb.fuse`` traces it
    (None: it cannot); ``operator`` and ``form`` the operators of a ufunc
    ('binary': ``__add__``, ``__radd__``, ``__iadd__``; 'compare': ``__eq__``; 'unary':
    ``__neg__``)."""

    __slots__ = ("name", "target", "kind", "method", "numpy", "fuse", "operator", "form")

    def __init__(self, name, target, kind="function", method=None, numpy=None, fuse=None,
                 operator=None, form=None):
        self.name, self.target, self.kind, self.method = name, target, kind, method
        self.numpy, self.fuse, self.operator, self.form = numpy, fuse, operator, form

    def __repr__(self) -> str:
        fields = ", ".join(f"{f}={getattr(self, f)!r}" for f in self.__slots__[2:]
                           if getattr(self, f) is not None)
        return f"Entry({self.name!r}, {self.target!r}, {fields})"


_TABLE: list[Entry] = []


def _fn(name, module, *, attr=None, method=None, numpy=True, fuse=None):
    """A function with NumPy's name and semantics (``numpy=False``: not NumPy's)."""
    _TABLE.append(Entry(name, f"{module}:{attr or name}", "function", method,
                        name if numpy is True else (numpy or None), fuse))


def _uf(name, operator=None, form="binary"):
    """A ufunc: one line of the op table (core/kernels/elementwise/ops.py) made public."""
    _TABLE.append(Entry(name, f"_math.ufuncs:{name}", "ufunc", None, name, "ufunc", operator,
                        form if operator else None))


def _meth(name, target):
    """An ndarray method with no function in the namespace (``__getitem__``...)."""
    _TABLE.append(Entry(name, target, "method", method=name))


def _type(name):
    """A scalar type name: NumPy's own object (``gpunb.float32 is numpy.float32``)."""
    _TABLE.append(Entry(name, f"_types.names:{name}", "type"))


def _obj(name, target, kind="object"):
    """A name of gpunb's own (classes, the runtime, the cache, the kernel tools)."""
    _TABLE.append(Entry(name, target, kind))


def _sub(package, name, module, *, attr=None, kind="function", numpy=True):
    """A member of a subpackage (``gpunb.linalg.norm``): the entry ``'linalg.norm'``, standing
    for ``numpy.linalg.norm`` unless ``numpy=False``; the subpackage's ``__getattr__`` resolves
    it (:func:`members`)."""
    full = f"{package}.{name}"
    _TABLE.append(Entry(full, f"{module}:{attr or name}", kind, None,
                        (full if numpy is True else (numpy or None)) if kind == "function" else None))


# -- data types (gpunb/_types) --------------------------------------------------------------------
for _t in ("bool_", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
           "uint64", "float16", "float32", "float64", "complex64", "complex128",
           # NumPy 2's aliases of those, and the abstract types issubdtype tests against
           "byte", "ubyte", "short", "ushort", "intc", "uintc", "int_", "uint", "long", "ulong",
           "longlong", "ulonglong", "intp", "uintp", "half", "single", "double", "csingle",
           "cdouble", "generic", "number", "integer", "signedinteger", "unsignedinteger",
           "inexact", "floating", "complexfloating",
           # NumPy's types with no GPU dtype (names for host code; arrays of them raise)
           "bytes_", "str_", "object_", "void", "character", "flexible", "longdouble", "clongdouble"):
    _type(_t)
del _t
_obj("dtype", "_types.routines:dtype", "class")
_obj("finfo", "_types.routines:finfo", "class")
_obj("iinfo", "_types.routines:iinfo", "class")
_fn("result_type", "_types.routines")
_fn("can_cast", "_types.routines")
_fn("promote_types", "_types.routines", numpy=False)
_fn("issubdtype", "_types.routines", numpy=False)
_fn("isscalar", "_types.routines", numpy=False)

# -- array creation (gpunb/_creation) -----------------------------------------------------------
_fn("empty", "_creation.basic")
_fn("zeros", "_creation.basic")
_fn("ones", "_creation.basic")
_fn("full", "_creation.basic")
_fn("empty_like", "_creation.basic")
_fn("zeros_like", "_creation.basic")
_fn("ones_like", "_creation.basic")
_fn("full_like", "_creation.basic")
_fn("array", "_creation.from_data")
_fn("asarray", "_creation.from_data")
_fn("asanyarray", "_creation.from_data", attr="asarray")
_fn("frombuffer", "_creation.from_data")
_fn("fromiter", "_creation.from_data")
_fn("copyto", "_creation.from_data")
_fn("fromfunction", "_creation.grids")
_fn("ascontiguousarray", "_creation.from_data")
_fn("copy", "_creation.from_data")
_fn("asnumpy", "_creation.from_data", numpy=False)
_fn("from_dlpack", "core.interop", numpy=False)
_fn("fromDlpack", "core.interop", attr="from_dlpack", numpy=False)   # CuPy's older spelling
_fn("arange", "_creation.ranges")
_fn("linspace", "_creation.ranges")
_fn("eye", "_creation.ranges")
_fn("identity", "_creation.ranges")
_fn("logspace", "_creation.ranges")
_fn("geomspace", "_creation.ranges")
_fn("asfortranarray", "_creation.from_data")
_fn("meshgrid", "_creation.grids")
_fn("indices", "_creation.grids")
_fn("diag", "_creation.matrices")
_fn("diagflat", "_creation.matrices")
_fn("tri", "_creation.matrices")
_fn("tril", "_creation.matrices")
_fn("triu", "_creation.matrices")
_fn("mask_indices", "_creation.matrices")

# -- shape manipulation (gpunb/_manipulation) ---------------------------------------------------
_fn("reshape", "_manipulation.shape", fuse="method")
_fn("ravel", "_manipulation.shape")
_fn("shape", "_manipulation.shape")
_fn("ndim", "_manipulation.shape")
_fn("size", "_manipulation.shape")
_fn("transpose", "_manipulation.transpose")
_fn("swapaxes", "_manipulation.transpose")
_fn("moveaxis", "_manipulation.transpose")
_fn("rollaxis", "_manipulation.transpose")
_fn("isfortran", "_manipulation.transpose")
_fn("apply_along_axis", "_manipulation.apply")
_fn("apply_over_axes", "_manipulation.apply")
_fn("squeeze", "_manipulation.dims", fuse="method")
_fn("expand_dims", "_manipulation.dims", fuse="method")
_fn("broadcast_to", "_manipulation.dims")
_fn("broadcast_arrays", "_manipulation.dims")
_fn("broadcast_shapes", "_manipulation.dims")
_fn("atleast_1d", "_manipulation.dims")
_fn("atleast_2d", "_manipulation.dims")
_fn("atleast_3d", "_manipulation.dims")
_fn("concatenate", "_manipulation.joining")
_fn("stack", "_manipulation.joining")
_fn("vstack", "_manipulation.joining")
_fn("hstack", "_manipulation.joining")
_fn("dstack", "_manipulation.joining")
_fn("column_stack", "_manipulation.joining")
_fn("append", "_manipulation.joining")
_fn("split", "_manipulation.joining")
_fn("array_split", "_manipulation.joining")
_fn("hsplit", "_manipulation.joining")
_fn("vsplit", "_manipulation.joining")
_fn("dsplit", "_manipulation.joining")
_fn("flip", "_manipulation.rearrange")
_fn("fliplr", "_manipulation.rearrange")
_fn("flipud", "_manipulation.rearrange")
_fn("roll", "_manipulation.rearrange")
_fn("rot90", "_manipulation.rearrange")
_fn("tile", "_manipulation.tiling")
_fn("repeat", "_manipulation.tiling", method="repeat")
_fn("pad", "_manipulation.padding")
_fn("resize", "_manipulation.edit")
_fn("trim_zeros", "_manipulation.edit")
_fn("delete", "_manipulation.edit")
_fn("insert", "_manipulation.edit")

# -- indexing (gpunb/_indexing) -------------------------------------------------------------------
_meth("__getitem__", "_indexing.basic:getitem")
_meth("__setitem__", "_indexing.basic:setitem")
_fn("diagonal", "_indexing.basic", method="diagonal")
_fn("take", "_indexing.gather", method="take")
_fn("take_along_axis", "_indexing.gather")
_fn("put", "_indexing.gather", method="put")
_fn("put_along_axis", "_indexing.gather")
_fn("place", "_indexing.gather")
_fn("choose", "_indexing.gather", method="choose")
_fn("compress", "_indexing.gather")
_meth("compress", "_indexing.gather:compress_method")   # the array comes second in the function
_fn("extract", "_indexing.gather")
_fn("select", "_indexing.gather")
_fn("diag_indices", "_indexing.generate")
_fn("diag_indices_from", "_indexing.generate")
_fn("tril_indices", "_indexing.generate")
_fn("triu_indices", "_indexing.generate")
_fn("tril_indices_from", "_indexing.generate")
_fn("triu_indices_from", "_indexing.generate")
_fn("unravel_index", "_indexing.generate")
_fn("ravel_multi_index", "_indexing.generate")
_fn("ix_", "_indexing.generate")

# -- math: ufuncs (one op-table line each in core/kernels/elementwise/ops.py) ---------------------
_uf("add", "add")
_uf("subtract", "sub")
_uf("multiply", "mul")
_uf("divide", "truediv")
_uf("true_divide")
_uf("floor_divide", "floordiv")
_uf("remainder", "mod")
_uf("mod")
_uf("power", "pow")
_uf("negative", "neg", "unary")
_uf("positive", "pos", "unary")
_uf("absolute", "abs", "unary")
_uf("abs")
_uf("sign")
_uf("sqrt")
_uf("cbrt")
_uf("square")
_uf("reciprocal")
_uf("exp")
_uf("exp2")
_uf("expm1")
_uf("log")
_uf("log2")
_uf("log10")
_uf("log1p")
_uf("sin")
_uf("cos")
_uf("tan")
_uf("arcsin")
_uf("arccos")
_uf("arctan")
_uf("arctan2")
_uf("sinh")
_uf("cosh")
_uf("tanh")
_uf("arcsinh")
_uf("arccosh")
_uf("arctanh")
_uf("hypot")
_uf("logaddexp")
_uf("logaddexp2")
_uf("floor")
_uf("ceil")
_uf("trunc")
_uf("rint")
_uf("conjugate")
_uf("conj")
_meth("conjugate", "_math.ufuncs:conjugate")
_meth("conj", "_math.ufuncs:conjugate")
_uf("maximum")
_uf("minimum")
_uf("fmax")
_uf("fmin")
_uf("isnan")
_uf("isinf")
_uf("isfinite")
_uf("signbit")
_uf("copysign")
_uf("nextafter")
_uf("deg2rad")
_uf("radians")
_uf("rad2deg")
_uf("degrees")
_uf("fabs")
_uf("fmod")
_uf("float_power")
_uf("heaviside")
_uf("gcd")
_uf("lcm")
_uf("ldexp")
_uf("bitwise_count")
_uf("divmod")
_uf("modf")
_uf("frexp")
_uf("spacing")
_uf("equal", "eq", "compare")
_uf("not_equal", "ne", "compare")
_uf("less", "lt", "compare")
_uf("less_equal", "le", "compare")
_uf("greater", "gt", "compare")
_uf("greater_equal", "ge", "compare")
_uf("logical_and")
_uf("logical_or")
_uf("logical_xor")
_uf("logical_not")
_uf("bitwise_and", "and")
_uf("bitwise_or", "or")
_uf("bitwise_xor", "xor")
_uf("invert", "invert", "unary")
_uf("bitwise_not")
_uf("left_shift", "lshift")
_uf("right_shift", "rshift")

# -- math: sums and products, and other (gpunb/_math) ---------------------------------------------
_fn("sum", "_math.sumprod", method="sum", fuse="method")
_fn("prod", "_math.sumprod", method="prod", fuse="method")
_fn("nansum", "_math.sumprod")
_fn("nanprod", "_math.sumprod")
_fn("clip", "_math.misc", method="clip", fuse="inline")
for _name in ("isposinf", "isneginf", "nan_to_num", "sinc", "fix", "real_if_close", "polyval",
              "vander", "interp", "unwrap", "piecewise", "i0"):
    _fn(_name, "_math.numeric")
for _name in ("bartlett", "blackman", "hamming", "hanning", "kaiser"):
    _fn(_name, "_creation.windows")
for _name in ("array2string", "array_repr", "array_str"):
    _fn(_name, "_utility.printing")
for _name in ("save", "load", "savez", "savez_compressed", "loadtxt", "genfromtxt", "savetxt",
              "fromfile", "fromstring"):
    _fn(_name, "_utility.io")
for _name in ("binary_repr", "base_repr", "iterable", "set_printoptions", "get_printoptions",
              "printoptions"):
    _fn(_name, "_utility.host")
for _name in ("typename", "mintypecode", "common_type", "min_scalar_type"):
    _fn(_name, "_types.routines")
for _name in ("putmask", "fill_diagonal", "packbits", "unpackbits"):
    _fn(_name, "_manipulation.masks")
_fn("block", "_manipulation.block")
for _name in ("polyadd", "polysub", "polymul", "polyder", "polyint", "polyfit", "roots", "poly"):
    _fn(_name, "_math.polynomial")
_fn("asarray_chkfinite", "_creation.from_data")
_fn("require", "_creation.from_data")
_fn("real", "_math.complex")
_fn("imag", "_math.complex")
_fn("angle", "_math.complex")
_fn("cumsum", "_math.sumprod", method="cumsum")
_fn("cumprod", "_math.sumprod", method="cumprod")
_fn("nancumsum", "_math.sumprod")
_fn("nancumprod", "_math.sumprod")
_fn("diff", "_math.differences")
_fn("ediff1d", "_math.differences")
_fn("gradient", "_math.differences")
_fn("trapezoid", "_math.differences")

# -- logic (gpunb/_logic) -------------------------------------------------------------------------
_fn("any", "_logic.truth", method="any", fuse="method")
_fn("all", "_logic.truth", method="all", fuse="method")
_fn("isclose", "_logic.comparison", fuse="inline")
_fn("allclose", "_logic.comparison")
_fn("array_equal", "_logic.comparison")
_fn("array_equiv", "_logic.comparison")
_fn("iscomplexobj", "_logic.types")
_fn("isrealobj", "_logic.types")
_fn("iscomplex", "_logic.types")
_fn("isreal", "_logic.types")

# -- sorting, searching, counting (gpunb/_sorting) ------------------------------------------------
_fn("argmax", "_sorting.search", method="argmax")
_fn("argmin", "_sorting.search", method="argmin")
_fn("where", "_sorting.search", fuse="inline")
_fn("nanargmax", "_sorting.search")
_fn("nanargmin", "_sorting.search")
_fn("nonzero", "_sorting.nonzero", method="nonzero")
_fn("flatnonzero", "_sorting.nonzero")
_fn("argwhere", "_sorting.nonzero")
_fn("count_nonzero", "_sorting.count")
_fn("sort", "_sorting.sort")
_fn("argsort", "_sorting.sort", method="argsort")
_fn("lexsort", "_sorting.sort")
_fn("partition", "_sorting.sort")
_fn("argpartition", "_sorting.sort", method="argpartition")
_fn("sort_complex", "_sorting.sort")
_meth("sort", "_sorting.sort:sort_inplace")             # ndarray.sort sorts in place
_meth("partition", "_sorting.sort:partition_inplace")
_fn("searchsorted", "_sorting.bisect", method="searchsorted")
_fn("digitize", "_sorting.bisect")
_fn("unique", "_sorting.sets")
_fn("unique_values", "_sorting.sets")
_fn("unique_counts", "_sorting.sets")
_fn("unique_inverse", "_sorting.sets")
_fn("unique_all", "_sorting.sets")
_fn("isin", "_sorting.sets")
_fn("intersect1d", "_sorting.sets")
_fn("union1d", "_sorting.sets")
_fn("setdiff1d", "_sorting.sets")
_fn("setxor1d", "_sorting.sets")

# -- statistics (gpunb/_statistics) ---------------------------------------------------------------
_fn("amax", "_statistics.order", method="max", fuse="method")
_fn("amin", "_statistics.order", method="min", fuse="method")
_fn("max", "_statistics.order", fuse="method")
_fn("min", "_statistics.order", fuse="method")
_fn("nanmax", "_statistics.order")
_fn("nanmin", "_statistics.order")
_fn("ptp", "_statistics.order", method="ptp")
_fn("mean", "_statistics.meanvar", method="mean", fuse="method")
_fn("var", "_statistics.meanvar", method="var")
_fn("std", "_statistics.meanvar", method="std")
_fn("average", "_statistics.meanvar")
_fn("nanmean", "_statistics.meanvar")
_fn("nanvar", "_statistics.meanvar")
_fn("nanstd", "_statistics.meanvar")
_fn("cov", "_statistics.correlating")
_fn("corrcoef", "_statistics.correlating")
_fn("correlate", "_statistics.correlating")
_fn("convolve", "_statistics.correlating")
_fn("bincount", "_statistics.histograms")
_fn("histogram", "_statistics.histograms")
_fn("histogram2d", "_statistics.histograms")
_fn("histogramdd", "_statistics.histograms")
_fn("histogram_bin_edges", "_statistics.histograms")
_fn("median", "_statistics.quantiles")
_fn("percentile", "_statistics.quantiles")
_fn("quantile", "_statistics.quantiles")
_fn("nanmedian", "_statistics.quantiles")
_fn("nanpercentile", "_statistics.quantiles")
_fn("nanquantile", "_statistics.quantiles")

# -- products (gpunb/linalg/products.py: cuBLAS) --------------------------------------------------
_fn("matmul", "linalg.products")
_fn("dot", "linalg.products", method="dot")
_fn("vdot", "linalg.products")
_fn("inner", "linalg.products")
_fn("outer", "linalg.products")
_fn("tensordot", "linalg.products")
_fn("einsum", "linalg.einsum")
_fn("einsum_path", "linalg.einsum")
_fn("kron", "linalg.products")
_fn("trace", "linalg.products", method="trace")
_fn("vecdot", "linalg.products")
_fn("matvec", "linalg.products")
_fn("vecmat", "linalg.products")
_fn("matrix_transpose", "linalg.products")
_fn("cross", "linalg.products")
_meth("__matmul__", "linalg.products:matmul_operator")
_meth("__rmatmul__", "linalg.products:rmatmul_operator")
_meth("__imatmul__", "linalg.products:imatmul_operator")

# -- index tricks, iteration helpers, NumPy's error state and host-only values ----------------------
# (kind 'value': an object that is no function, used by indexing (mgrid[...]), or a constant)
_obj("mgrid", "_indexing.tricks:mgrid", "value")
_obj("ogrid", "_indexing.tricks:ogrid", "value")
_obj("r_", "_indexing.tricks:r_", "value")
_obj("c_", "_indexing.tricks:c_", "value")
_obj("s_", "_indexing.tricks:s_", "value")                 # NumPy's own (tuples of slices)
_obj("index_exp", "_indexing.tricks:index_exp", "value")   # NumPy's own
_obj("ndindex", "_indexing.tricks:ndindex", "class")       # NumPy's own (shapes only)
_obj("ndenumerate", "_indexing.tricks:ndenumerate", "class")
_obj("broadcast", "_manipulation.broadcast:broadcast", "class")
_fn("row_stack", "_manipulation.joining")
_fn("shares_memory", "_utility.memory")
_obj("errstate", "_utility.host:errstate", "class")    # NumPy's own error state
_fn("getbufsize", "_utility.host")
_fn("setbufsize", "_utility.host")
_fn("info", "_utility.host")
_obj("exceptions", "_utility.host:exceptions", "value")   # numpy.exceptions (AxisError...)
_obj("dtypes", "_utility.host:dtypes", "value")           # numpy.dtypes (Float32DType...)
_fn("seterr", "_utility.host")
_fn("geterr", "_utility.host")
_fn("seterrcall", "_utility.host")
_fn("geterrcall", "_utility.host")
_obj("euler_gamma", "_utility.host:euler_gamma", "value")
for _name in ("typecodes", "ScalarType", "sctypeDict", "little_endian", "True_", "False_"):
    _obj(_name, f"_types.names:{_name}", "value")             # NumPy's own objects
_fn("format_float_positional", "_utility.floatformat")    # NumPy's (a 0-d GPU array read back)
_fn("format_float_scientific", "_utility.floatformat")
_fn("fromregex", "_utility.io")                           # NumPy's parse, one upload
_fn("show_runtime", "_utility.info")                      # NumPy's report, then gpunb's

# -- vectorize, poly1d and the remaining polynomial names ----------------------------------------
_obj("vectorize", "core.fusion.vectorize:vectorize", "class")    # one fused kernel (gpunb.fuse)
_obj("poly1d", "_math.poly1d:poly1d", "class")
_fn("polydiv", "_math.polynomial")

# -- subpackages ----------------------------------------------------------------------------------
_obj("linalg", "linalg", "module")
_obj("fft", "fft", "module")
_obj("random", "random", "module")
_obj("cuda", "cuda", "module")
_obj("testing", "testing", "module")
_obj("profiler", "profiler", "module")     # cupyx.profiler's benchmark, time_range, profile
_obj("lib", "lib", "module")             # numpy.lib's stride_tricks
_sub("lib.stride_tricks", "as_strided", "_manipulation.strides")
_sub("lib.stride_tricks", "sliding_window_view", "_manipulation.strides")
_obj("dask", "dask", "module")           # gpunb arrays as Dask chunks (imports no dask)
_obj("emath", "emath", "module")         # numpy.emath: complex outside the real domain
for _name in ("sqrt", "log", "log2", "log10", "logn", "power", "arccos", "arcsin", "arctanh"):
    _sub("emath", _name, "_math.emath")

# -- gpunb.linalg, gpunb.fft, gpunb.random: their members (gpunb/_table_sub.py) -----------------
_table_sub.declare(_sub)

# -- gpunb's own: arrays, fusion, raw CUDA, streams and memory, the kernel cache ------------------
_obj("ndarray", "core.ndarray:ndarray", "class")
_obj("ufunc", "core.ufunc:ufunc", "class")
_obj("fuse", "core.fusion.function:fuse")
_obj("FusionError", "core.fusion.tracer:FusionError", "class")
_obj("RawModule", "core.kernels.raw.module:RawModule", "class")
_obj("RawKernel", "core.kernels.raw.module:RawKernel", "class")
_obj("ElementwiseKernel", "core.kernels.user.run:ElementwiseKernel", "class")
_obj("ReductionKernel", "core.kernels.user.reduction:ReductionKernel", "class")
_obj("get_default_memory_pool", "core.runtime.memory:get_default_memory_pool")
_obj("MemoryPool", "core.runtime.memory:MemoryPool", "class")
_obj("get_default_pinned_memory_pool", "core.runtime.pinned:get_default_pinned_memory_pool")
for _n in ("empty_pinned", "zeros_pinned", "empty_like_pinned", "zeros_like_pinned"):   # cupyx's
    _obj(_n, f"core.runtime.pinned:{_n}")
_obj("is_available", "cuda:is_available")
_obj("synchronize", "core.runtime.driver:synchronize")
_obj("device_info", "core.runtime.driver:device_info")
_obj("Stream", "core.runtime.stream:Stream", "class")
_obj("ExternalStream", "core.runtime.stream:ExternalStream", "class")
_obj("Event", "core.runtime.stream:Event", "class")
_obj("get_current_stream", "core.runtime.stream:get_current_stream")
_obj("graph", "core.runtime.graphs:graph")
_obj("Graph", "core.runtime.graphs:Graph", "class")
_obj("GraphCaptureError", "core.runtime.graphs:GraphCaptureError", "class")
_obj("get_elapsed_time", "core.runtime.stream:get_elapsed_time")
_obj("KernelCache", "core.build.cache:KernelCache", "class")
_obj("kernel_cache", "core.build.cache:kernel_cache")
_obj("compile", "core.build.compiler:compile")
_obj("compile_cached", "core.build.cached:compile_cached")
_obj("Config", "core.config:Config", "class")
_obj("events", "core.events", "module")
_obj("warm", "core.kernels.standard:warm")
_fn("get_array_module", "_utility.info", numpy=False)
_fn("memoize", "_utility.info", numpy=False)
_fn("clear_memo", "_utility.info", numpy=False)
_fn("show_config", "_utility.info", numpy=False)
_fn("may_share_memory", "_utility.info")
_meth("__dlpack__", "core.interop:to_dlpack")
_meth("toDlpack", "core.interop:to_dlpack")           # CuPy's older spelling: a capsule

# -- the array API standard (gpunb/_array_api): its inspection API and its names -----------------
_obj("__array_namespace_info__", "_array_api.info:__array_namespace_info__")
_fn("astype", "_array_api.names")
_fn("isdtype", "_array_api.names")
_fn("round", "_array_api.names", method="round")
_fn("around", "_array_api.names", attr="round")
_fn("cumulative_sum", "_array_api.names")
_fn("cumulative_prod", "_array_api.names")
_fn("unstack", "_array_api.names")
# the standard's names of NumPy functions (NumPy 2 has them as aliases of the same objects)
_fn("concat", "_manipulation.joining", attr="concatenate", numpy=False)
_fn("permute_dims", "_manipulation.transpose", attr="transpose", numpy=False)
for _std, _np in (("pow", "power"), ("acos", "arccos"), ("asin", "arcsin"), ("atan", "arctan"),
                  ("atan2", "arctan2"), ("acosh", "arccosh"), ("asinh", "arcsinh"),
                  ("atanh", "arctanh"), ("bitwise_left_shift", "left_shift"),
                  ("bitwise_right_shift", "right_shift"), ("bitwise_invert", "invert")):
    _fn(_std, "_math.ufuncs", attr=_np, numpy=False)
del _std, _np
