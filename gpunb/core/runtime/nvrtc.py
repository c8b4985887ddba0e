"""NVRTC through ``cuda.bindings.nvrtc``: version, supported archs, one compile.

NVRTC comes from the ``nvidia-cuda-nvrtc`` wheel (found by cuda-pathfinder), so no CUDA toolkit
and no host C++ compiler are ever needed.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass, field

from ..errors import GPUNBError

_identity_lock = threading.Lock()
_identity: str | None = None


def _nvrtc():
    try:
        from cuda.bindings import nvrtc
    except ImportError as e:  # pragma: no cover - dependency missing
        raise GPUNBError(
            "cuda-bindings is not installed; install gpunb's dependencies (pip install gpunb)"
        ) from e
    return nvrtc


def _check(result, what: str):
    """Unpack a ``(nvrtcResult, *values)`` tuple, raising on failure."""
    nvrtc = _nvrtc()
    err, *values = result
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        _, msg = nvrtc.nvrtcGetErrorString(err)
        raise GPUNBError(f"NVRTC {what} failed: {msg.decode(errors='replace')}")
    return values[0] if len(values) == 1 else values


@functools.lru_cache(maxsize=None)
def version() -> tuple[int, int]:
    """NVRTC's (major, minor) version. Loads the library."""
    nvrtc = _nvrtc()
    try:
        major, minor = _check(nvrtc.nvrtcVersion(), "version query")
    except RuntimeError as e:  # cuda-pathfinder found no libnvrtc
        raise GPUNBError(
            f"The NVRTC library could not be loaded ({e}). Install the 'nvidia-cuda-nvrtc' wheel "
            "(a dependency of gpunb)."
        ) from e
    _reconcile_identity(major, minor)
    return major, minor


def _wheel_version() -> str | None:
    """The installed nvidia-cuda-nvrtc wheel's version, read from its ``.dist-info`` folder's
    name on ``sys.path`` (the first wins, as for importlib.metadata, whose import alone costs
    a first kernel about 40 ms)."""
    import os
    import sys

    prefix, suffix = "nvidia_cuda_nvrtc-", ".dist-info"
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.startswith(prefix) and name.endswith(suffix):
                return name[len(prefix):-len(suffix)]
    return None


def identity() -> str:
    """A short, path-free name of the NVRTC that compiles here, for cache keys.

    Read from the wheel's metadata so that a cache hit never loads NVRTC; when no wheel is
    installed, NVRTC itself is asked.
    """
    global _identity
    if _identity is None:
        with _identity_lock:
            if _identity is None:
                wheel = _wheel_version()
                if wheel is not None:
                    _identity = "nvrtc-" + wheel
                else:
                    major, minor = version()
                    _identity = f"nvrtc-{major}.{minor}"
    return _identity


def _reconcile_identity(major: int, minor: int) -> None:
    # A system NVRTC can shadow the wheel's (LD_LIBRARY_PATH, conda). Key by what really loaded.
    global _identity
    wheel = _wheel_version()
    if wheel is None or wheel.split(".")[:2] != [str(major), str(minor)]:
        _identity = f"nvrtc-{major}.{minor}"


@functools.lru_cache(maxsize=None)
def supported_archs() -> tuple[int, ...]:
    """Compute capabilities this NVRTC can compile for, e.g. ``(75, 80, ..., 90, 100, 120)``."""
    nvrtc = _nvrtc()
    version()
    return tuple(int(a) for a in _check(nvrtc.nvrtcGetSupportedArchs(), "supported-arch query"))


@dataclass
class NvrtcOutput:
    ok: bool
    log: str
    cubin: bytes = b""
    lowered_names: dict[str, str] = field(default_factory=dict)
    ptx: str = ""


def compile_program(source: str, name: str, options: list[str], headers: dict[str, str],
                    name_expressions: list[str], want_ptx: bool = False) -> NvrtcOutput:
    """Compile ``source`` to a cubin (and its PTX if ``want_ptx``). A rejected program returns
    ``ok=False`` with NVRTC's log."""
    nvrtc = _nvrtc()
    version()
    prog = _check(nvrtc.nvrtcCreateProgram(
        source.encode(), name.encode(), len(headers),
        [v.encode() for v in headers.values()], [k.encode() for k in headers]), "program creation")
    try:
        for expr in name_expressions:
            _check(nvrtc.nvrtcAddNameExpression(prog, expr.encode()), f"name expression {expr!r}")
        opts = [o.encode() for o in options]
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        size = _check(nvrtc.nvrtcGetProgramLogSize(prog), "log query")
        # a fresh writable buffer: ``b" " * size`` (cuda.bindings' examples) is the interpreter's
        # shared one-byte singleton when size is 1 (an empty log), and NVRTC's NUL written
        # into it turns every b" " in the process into b"\x00"
        buf = bytearray(size)
        _check(nvrtc.nvrtcGetProgramLog(prog, buf), "log query")
        log = bytes(buf).rstrip(b"\x00").decode(errors="replace")
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            _, msg = nvrtc.nvrtcGetErrorString(err)
            if not log.strip():
                log = f"nvrtc: {msg.decode(errors='replace')}"
            return NvrtcOutput(False, log)
        size = _check(nvrtc.nvrtcGetCUBINSize(prog), "cubin size query")
        if size == 0:
            return NvrtcOutput(False, log + "\nnvrtc produced no cubin: name a real SM "
                               "architecture (sm_XX), not a virtual one (compute_XX)")
        cubin = bytearray(size)
        _check(nvrtc.nvrtcGetCUBIN(prog, cubin), "cubin query")
        lowered = {}
        for expr in name_expressions:
            lowered[expr] = _check(nvrtc.nvrtcGetLoweredName(prog, expr.encode()),
                                   f"lowered name of {expr!r}").decode()
        ptx = ""
        if want_ptx:   # NVRTC keeps the PTX it fed ptxas, also when compiling for a real sm_XX
            buf = bytearray(_check(nvrtc.nvrtcGetPTXSize(prog), "PTX size query"))
            _check(nvrtc.nvrtcGetPTX(prog, buf), "PTX query")
            ptx = bytes(buf).rstrip(b"\x00").decode(errors="replace")
        return NvrtcOutput(True, log, bytes(cubin), lowered, ptx)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
