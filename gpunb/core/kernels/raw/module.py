"""CuPy-compatible raw CUDA C++: ``RawModule`` and ``RawKernel``, the raw kernel family.

Constructing either compiles nothing and touches no GPU. ``.compile(arch=...)`` compiles and
caches without launching (a named arch needs no GPU); the first call compiles for the current
device. Arguments are checked against the kernel's signature before launch (:mod:`.args`:
the cubin gives the parameter count and sizes, the source whether each is a pointer and its
scalar type); the kernel is loaded by the one loader and launched by the one executor, or,
for an argument signature seen before, by its prepared launch (:mod:`.launch`).
"""

from __future__ import annotations

import operator
import re
import warnings
import weakref
from pathlib import Path

import numpy as np

from ... import memo
from ...build.cache import CacheEntry
from ...build.cached import compile_cached
from ...build.compiler import check_options, normalize_arch
from ...build.cubin import KernelInfo, read_kernels
from ...build.signature import Param, demangled_base, signature
from ...ndarray import MemoryPointer
from ...runtime import driver  # import no CUDA module until a function in it is called
from .. import loader
from ..execute import launch_args
from .args import prepare_args
from .launch import _CallSignature, _dims, _launch_cooperative, _prepare_fast

_SOURCE_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".h", ".hpp")
# CuPy's RawKernel.attributes keys (the driver's CU_FUNC_ATTRIBUTE_* names)
_ATTRIBUTES = ("binary_version", "cache_mode_ca", "const_size_bytes", "local_size_bytes",
               "max_dynamic_shared_size_bytes", "max_threads_per_block", "num_regs",
               "preferred_shared_memory_carveout", "ptx_version", "shared_size_bytes")


def _attribute(a, name: str) -> int:
    v = getattr(a, name)
    return int(v() if callable(v) else v)     # properties in cuda-core 1.2, methods before


class _GlobalPointer(MemoryPointer):
    """A device global's pointer, which also knows its size (CuPy's ``.mem.size``)."""

    __slots__ = ("size",)

    def __init__(self, mp: MemoryPointer, size: int):
        super().__init__(mp.ptr, mp.owner, mp.device_id)
        self.size = size

    @property
    def mem(self):
        return self


_PTX_ENTRY = re.compile(r"\.entry\s+([\w$]+)\s*\((.*?)\)", re.S)
_PTX_PARAM = re.compile(r"\.param\s+(?:\.align\s+(\d+)\s+)?\.[a-z]+(\d+)\s+[\w$]+(?:\[(\d+)\])?")


def ptx_kernels(ptx: str) -> dict[str, KernelInfo]:
    """Every ``.entry`` of a PTX text with its parameters' sizes and offsets (registers and
    memory are decided when the driver compiles it: unknown here)."""
    out = {}
    for m in _PTX_ENTRY.finditer(ptx):
        sizes, offsets, off = [], [], 0
        for p in _PTX_PARAM.finditer(m.group(2)):
            width = int(p.group(2)) // 8
            size = width * int(p.group(3) or 1)
            align = int(p.group(1) or width)
            off = -(-off // align) * align
            sizes.append(size)
            offsets.append(off)
            off += size
        out[m.group(1)] = KernelInfo(m.group(1), tuple(sizes), tuple(offsets), None, 0, 0)
    return out


def _cooperative_includes() -> tuple[str, ...]:
    """``-I`` options for ``<cooperative_groups.h>`` (the CUDA runtime's headers, which include
    libcu++'s). ``grid.sync()`` compiles to a header-only barrier since CUDA 11, so no
    relocatable code or device-runtime link is needed (CuPy's ``-rdc=true`` was for that)."""
    out = []
    try:
        from cuda.pathfinder import locate_nvidia_header_directory

        found = locate_nvidia_header_directory("cudart")
        if found is not None:
            out.append(f"-I{found.abs_path}")
    except Exception:        # no pathfinder or no runtime headers: the source may need none
        pass
    try:
        from ...build import cccl

        out.append(f"-I{cccl.include_dir()}")
    except Exception:
        pass
    return tuple(out)


_resolved = memo.table("raw.signatures")   # (cache key, kernel name) -> (symbol, KernelInfo, params)


def _tuple_or_int(v):
    return tuple(v) if isinstance(v, list) else v


class RawModule:
    """A CUDA C++ module compiled with NVRTC through the kernel cache.

    Parameters
    ----------
    code : str
        CUDA C++ source.
    path : str or path-like, optional
        A cubin file to load instead of ``code`` (not compiled, not cached).
    options : tuple of str
        NVRTC options (``-std=c++17`` unless one is given).
    name_expressions : sequence of str, optional
        C++ names to instantiate and look up, such as ``'add<float>'``.
    backend : {'nvrtc'}
        Only NVRTC: gpunb never needs nvcc or a host compiler.

    Examples
    --------
    >>> mod = gpunb.RawModule(code=src, name_expressions=["axpy<float>"])
    >>> mod.compile(arch="sm_90")          # no GPU needed
    >>> axpy = mod.get_function("axpy<float>")
    >>> axpy((blocks,), (256,), (a, x, y, n))
    """

    def __init__(self, code: str | None = None, *, path=None, options=(), backend: str = "nvrtc",
                 name_expressions=None, translate_cucomplex: bool = False,
                 enable_cooperative_groups: bool = False, jitify: bool = False):
        if (code is None) == (path is None):
            raise TypeError("give exactly one of code= (CUDA C++ source) and path= (a .cu, "
                            ".cubin, .fatbin or .ptx file)")
        if code is not None and not isinstance(code, str):
            raise TypeError(f"code must be a str of CUDA C++, got {type(code).__name__}")
        if backend == "nvcc":
            # CuPy code asks for nvcc for what older NVRTCs lacked; gpunb has no nvcc (NVRTC
            # only, nothing to install), and NVRTC compiles the same device code
            warnings.warn("backend='nvcc': gpunb compiles with NVRTC only; the source is given "
                          "to NVRTC (host code and nvcc-only options will not compile)", stacklevel=3)
        elif backend != "nvrtc":
            raise ValueError(f"backend={backend!r}: gpunb compiles with NVRTC only ('nvrtc')")
        if translate_cucomplex:
            raise ValueError("translate_cucomplex is not supported by gpunb")
        if jitify:
            # CuPy's Jitify preprocesses the source (standard headers, template names); gpunb
            # gives it to NVRTC directly, which compiles the same code when it needs neither.
            warnings.warn("jitify=True: gpunb compiles with NVRTC directly, without Jitify; "
                          "the source must not rely on Jitify's header emulation", stacklevel=3)
        self.jitify = bool(jitify)
        self.enable_cooperative_groups = bool(enable_cooperative_groups)
        if path is not None and Path(path).suffix.lower() in _SOURCE_SUFFIXES:
            code, path = Path(path).read_text(), None      # a source file: compiled as code=
        self.code = code
        self.path = Path(path) if path is not None else None
        self.options = check_options(options)
        if enable_cooperative_groups:
            self.options += tuple(o for o in _cooperative_includes() if o not in self.options)
        if isinstance(name_expressions, str):
            raise TypeError("name_expressions must be a sequence of strings, not one string")
        self.name_expressions = tuple(name_expressions or ())
        self._entries: dict[str, CacheEntry] = {}
        self._functions: dict[str, RawKernel] = {}

    def __repr__(self) -> str:
        what = f"path={str(self.path)!r}" if self.path else f"{len(self.code.splitlines())} lines"
        return f"<gpunb.RawModule {what} options={self.options!r}>"

    def _arch(self, arch) -> str:
        if arch is not None:
            return normalize_arch(arch)
        if self.code is not None:   # an -arch= option names the target: no GPU needed
            from ...build.compiler import named_arch

            named = named_arch(self.options)
            if named is not None:
                return named
        return driver.current_arch()

    def compile(self, arch=None, *, force: bool = False) -> "RawModule":
        """Compile (or load from the cache) for ``arch``, default the current device's.

        Launches nothing; with ``arch`` named it works on a machine without a GPU.
        """
        self.entry(arch, force=force)
        return self

    def entry(self, arch=None, *, force: bool = False) -> CacheEntry:
        """The cache entry (cubin and metadata) for ``arch``."""
        if not force and arch in self._entries:
            return self._entries[arch]
        arch = self._arch(arch)
        if force or arch not in self._entries:
            if self.path is not None:
                data = self.path.read_bytes()
                if self.path.suffix.lower() == ".ptx":
                    infos = ptx_kernels(data.decode())
                    data = data.rstrip(b"\0") + b"\0"     # the driver reads PTX as a C string
                    meta = {"kernels": sorted(infos), "arch": arch,
                            "kernel_info": {k: [v.param_sizes, v.param_offsets, v.registers,
                                                v.shared_bytes, v.local_bytes]
                                            for k, v in infos.items()}}
                else:
                    meta = {"kernels": sorted(read_kernels(data)), "arch": arch}
                self._entries[arch] = CacheEntry("path:" + str(self.path), data, meta)
            else:
                self._entries[arch] = compile_cached(
                    self.code, self.options, arch, name_expressions=self.name_expressions,
                    force=force)
        return self._entries[arch]

    def set_entry(self, arch: str, entry: CacheEntry) -> None:
        """Use ``entry``, compiled elsewhere from this module's code and options (``%%cuda``
        compiles with a display of its own), as this module's build for ``arch``."""
        self._entries[normalize_arch(arch)] = entry

    def cubin(self, arch=None) -> bytes:
        return self.entry(arch).cubin

    def kernel_names(self, arch=None) -> list[str]:
        """Kernel symbols in the module (mangled for C++ kernels)."""
        return list(self.entry(arch).meta.get("kernels", ()))

    def get_function(self, name: str) -> "RawKernel":
        """The kernel ``name``: an ``extern "C"`` name, a name expression, or a symbol."""
        if not isinstance(name, str):
            raise TypeError(f"kernel name must be a str, got {type(name).__name__}")
        fn = self._functions.get(name)
        if fn is None:
            fn = self._functions[name] = RawKernel._bound(self, name)
        return fn

    def get_global(self, name: str) -> MemoryPointer:
        """A device global variable of the module (``__device__`` or ``__constant__``) as a
        :class:`~gpunb.core.ndarray.MemoryPointer` to its memory on the current device, as
        CuPy's ``RawModule.get_global``; C++ names through ``name_expressions``. View it with
        ``gpunb.ndarray(shape, dtype, memptr=ptr)``."""
        if not isinstance(name, str):
            raise TypeError(f"global name must be a str, got {type(name).__name__}")
        ctx = driver.context()
        entry = self.entry(ctx.arch)
        symbol = entry.meta.get("name_expressions", {}).get(name, name)
        obj = ctx.modules.get(entry.key)
        if obj is None:
            ObjectCode = driver.cuda_core().ObjectCode
            obj = ctx.modules[entry.key] = ObjectCode.from_cubin(entry.cubin, name=entry.key[:16])
        err, dptr, size = driver._driver_module().cuLibraryGetGlobal(obj.handle, symbol.encode())
        if int(err) != 0:
            raise ValueError(f"no global {name!r} in this module ({getattr(err, 'name', err)})")
        mp = MemoryPointer(int(dptr), obj, ctx.ordinal)
        return _GlobalPointer(mp, int(size))

    def _resolve(self, name: str, arch: str) -> tuple[str, KernelInfo, list[Param] | None]:
        entry = self.entry(arch)
        # A cache key fixes both the source and the cubin, so the parse is shared by every
        # RawKernel of that program (re-running a notebook cell builds new ones).
        found = _resolved.get((entry.key, name))
        if found is None:
            found = _resolved[(entry.key, name)] = self._parse(entry, name)
            if len(_resolved) > 4096:
                _resolved.pop(next(iter(_resolved)))
        return found

    def _parse(self, entry: CacheEntry, name: str) -> tuple[str, KernelInfo, list[Param] | None]:
        # Entries built by gpunb carry the parse (see build.describe_kernels); others are read.
        stored = entry.meta.get("kernel_info")
        infos = ({s: KernelInfo(s, *map(_tuple_or_int, v)) for s, v in stored.items()}
                 if stored is not None else read_kernels(entry.cubin))
        lowered = entry.meta.get("name_expressions", {})
        symbol = lowered.get(name, name)
        if symbol not in infos:
            matches = [s for s in infos if demangled_base(s) == name]
            if len(matches) == 1:
                symbol = matches[0]
            else:
                known = sorted(set(infos) | set(lowered))
                hint = (" (a C++ name: give it in name_expressions, or declare the kernel "
                        'extern "C")' if matches or "<" in name else "")
                raise ValueError(f"no kernel {name!r} in this module{hint}; it has: "
                                 + (", ".join(known) or "no kernels"))
        info = infos[symbol]
        sig = entry.meta.get("signatures", {}).get(name)
        if sig is not None and len(sig) == len(info.param_sizes):
            return symbol, info, [Param(*p) for p in sig]
        params = signature(self.code, name, len(info.param_sizes)) if self.code else None
        if params is None and self.code:
            params = signature(self.code, demangled_base(symbol), len(info.param_sizes))
        return symbol, info, params


class RawKernel:
    """One CUDA kernel, CuPy's ``RawKernel``: ``kernel(grid, block, args, shared_mem=0,
    stream=None)``.

    Parameters
    ----------
    code : str
        CUDA C++ source holding the kernel.
    name : str
        The kernel's name (``extern "C"``) or a name expression such as ``'add<float>'``.
    options : tuple of str
        NVRTC options.
    """

    def __init__(self, code: str, name: str, options=(), backend: str = "nvrtc",
                 translate_cucomplex: bool = False, *, enable_cooperative_groups: bool = False,
                 jitify: bool = False):
        if not isinstance(name, str):
            raise TypeError(f"kernel name must be a str, got {type(name).__name__}")
        exprs = (name,) if "<" in name else ()
        module = RawModule(code=code, options=options, backend=backend, name_expressions=exprs,
                           translate_cucomplex=translate_cucomplex,
                           enable_cooperative_groups=enable_cooperative_groups, jitify=jitify)
        self._init(module, name)

    @classmethod
    def _bound(cls, module: RawModule, name: str) -> "RawKernel":
        self = cls.__new__(cls)
        self._init(module, name)
        return self

    def _init(self, module: RawModule, name: str) -> None:
        self.module = module
        self.name = name
        self._resolved: dict[str, tuple] = {}
        self._launchable: dict = {}   # device context -> (cuda.core Kernel, info, params)
        self._fast: dict = {}         # device context -> its prepared launch (see _prepare_fast)

    code = property(lambda self: self.module.code)
    options = property(lambda self: self.module.options)

    def __repr__(self) -> str:
        return f"<gpunb.RawKernel {self.name!r}>"

    def compile(self, arch=None, *, force: bool = False) -> "RawKernel":
        """Compile (or load from the cache) without launching; see :meth:`RawModule.compile`."""
        self.module.compile(arch, force=force)
        self._resolve(self.module._arch(arch))
        return self

    def _resolve(self, arch: str):
        r = self._resolved.get(arch)
        if r is None:
            r = self._resolved[arch] = self.module._resolve(self.name, arch)
        return r

    def info(self, arch=None) -> KernelInfo:
        """Parameter sizes, registers, static shared and local memory from the cubin."""
        return self._resolve(self.module._arch(arch))[1]

    def parameters(self, arch=None) -> list[Param] | None:
        """The parameter types read from the source, or None if they could not be read."""
        return self._resolve(self.module._arch(arch))[2]

    @property
    def attributes(self) -> dict:
        """The kernel's attributes on the current device, with CuPy's keys (``num_regs``,
        ``max_threads_per_block``, ``shared_size_bytes``...) and gpunb's (``registers``,
        ``shared_bytes``, ``local_bytes``)."""
        a = self._kernel().attributes
        out = {k: _attribute(a, k) for k in _ATTRIBUTES}
        out["max_dynamic_shared_size_bytes"] = self.max_dynamic_shared_size_bytes
        out["preferred_shared_memory_carveout"] = self.preferred_shared_memory_carveout
        out.update(registers=out["num_regs"], shared_bytes=out["shared_size_bytes"],
                   local_bytes=out["local_size_bytes"])
        return out

    max_threads_per_block = property(lambda self: self._attr("max_threads_per_block"))
    shared_size_bytes = property(lambda self: self._attr("shared_size_bytes"))
    const_size_bytes = property(lambda self: self._attr("const_size_bytes"))
    local_size_bytes = property(lambda self: self._attr("local_size_bytes"))
    num_regs = property(lambda self: self._attr("num_regs"))
    ptx_version = property(lambda self: self._attr("ptx_version"))
    binary_version = property(lambda self: self._attr("binary_version"))
    cache_mode_ca = property(lambda self: bool(self._attr("cache_mode_ca")))
    # settable: read from the function itself (cuda.core caches the attributes it reads)
    max_dynamic_shared_size_bytes = property(
        lambda self: self._func_attr("MAX_DYNAMIC_SHARED_SIZE_BYTES"),
        lambda self, v: self._func_attr("MAX_DYNAMIC_SHARED_SIZE_BYTES", v))
    preferred_shared_memory_carveout = property(
        lambda self: self._func_attr("PREFERRED_SHARED_MEMORY_CARVEOUT"),
        lambda self, v: self._func_attr("PREFERRED_SHARED_MEMORY_CARVEOUT", v))

    def _attr(self, name: str) -> int:
        return _attribute(self._kernel().attributes, name)

    def _func_attr(self, name: str, value=None) -> int | None:
        """Read (or, with ``value``, set) ``CU_FUNC_ATTRIBUTE_<name>`` of the kernel's function
        on the current device."""
        d = driver._driver_module()
        func = d.CUfunction(loader.function(self._kernel()))
        attr = getattr(d.CUfunction_attribute, f"CU_FUNC_ATTRIBUTE_{name}")
        if value is None:
            err, v = d.cuFuncGetAttribute(attr, func)
            if int(err) != 0:
                raise ValueError(f"cannot read {name.lower()}: {getattr(err, 'name', err)}")
            return int(v)
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
            raise TypeError(f"{name.lower()} must be an int, got {type(value).__name__}")
        (err,) = d.cuFuncSetAttribute(func, attr, int(value))
        if int(err) != 0:
            raise ValueError(f"cannot set {name.lower()} to {value}: {getattr(err, 'name', err)}")
        return None

    def _kernel(self):
        arch = driver.current_arch()
        symbol, _, _ = self._resolve(arch)
        return loader.kernel(self.module.entry(arch), symbol)

    def prepare_args(self, args, arch=None) -> tuple[list, list]:
        """Check ``args`` against the signature and convert them for the launch.

        Returns the converted arguments and the producer streams of array arguments. Raises
        :class:`~gpunb.core.errors.KernelArgumentError` (a TypeError) naming the parameter.
        """
        _, info, params = self._resolve(self.module._arch(arch))
        return prepare_args(self.name, info, params, args)

    # kernel(grid, block, args, shared_mem=0, stream=None). Python looks __call__ up on the
    # class; this property hands it the instance's _call: the prepared launch of the kernel's
    # last argument signature on its device (which falls back to _launch), or until there is
    # one _launch itself (the class attribute below). No Python frame runs between the call
    # and the prepared launch: 1.07 against 1.21-1.38 us a call without a GPU.
    __call__ = property(operator.attrgetter("_call"), doc="Launch: ``kernel(grid, block, args, "
                        "shared_mem=0, stream=None)`` (CuPy's RawKernel call).")
    __signature__ = _CallSignature()

    def _launch(self, grid, block, args, *, shared_mem: int = 0, stream=None) -> None:
        """The checked launch (any arguments, stream or device); then the prepared launch of
        this argument signature, if it has one, becomes the kernel's call."""
        grid = _dims(grid, "grid")
        block = _dims(block, "block")
        if not isinstance(args, (tuple, list)):
            raise TypeError(f"args must be a tuple or list of kernel arguments, got {type(args).__name__}")
        if not isinstance(shared_mem, (int, np.integer)) or shared_mem < 0:
            raise ValueError(f"shared_mem must be a non-negative int, got {shared_mem!r}")
        ctx = driver.active or driver.context()
        ready = self._launchable.get(ctx)
        if ready is None:
            symbol, info, params = self._resolve(ctx.arch)
            ready = self._launchable[ctx] = (loader.kernel(self.module.entry(ctx.arch), symbol),
                                             info, params)
        kernel, info, params = ready
        converted, producers = prepare_args(self.name, info, params, args)
        if stream is None and driver._current.stream is None:
            s = ctx.default_stream
            # Arrays made on a default stream need no wait before a launch on the default stream.
            if producers and not all(p in driver.DEFAULT_HANDLES for p in producers):
                driver.wait_for_producers(s, producers)
        else:
            s = driver.as_stream(stream)
            if producers:
                driver.wait_for_producers(s, producers)
        if self.module.enable_cooperative_groups:
            _launch_cooperative(kernel, grid, block, int(shared_mem), s, converted)
        else:
            launch_args(kernel, grid, block, int(shared_mem), s, converted)
            if stream is None:
                fast = self._fast.get(ctx)
                if fast is None:
                    fast = _prepare_fast(kernel, params, args, weakref.WeakMethod(self._launch))
                    if fast is not None:
                        self._fast[ctx] = fast
                if fast is not None:
                    self._call = fast

    _call = _launch     # (an instance's _call, once set, is found first)
