"""What CUDA C++ turns into: PTX, SASS and each kernel's resources.

Used by ``%%cuda --show`` and the kernel viewer widget; plain Python, no IPython. NVRTC gives
the PTX and, through ``--ptxas-options=-v``, ptxas's report of registers, stack frame and
spills; the cubin (:mod:`gpunb.core.build.cubin`) gives registers, static shared memory and local
memory as the driver sees them. SASS comes from NVIDIA's disassembler, ``nvdisasm`` (the
``nvidia-cuda-nvdisasm`` wheel, a gpunb dependency) or ``cuobjdump``, run as a subprocess.
None of this needs a GPU: with no architecture named and no GPU present, :data:`DEFAULT_ARCH`
is used.

Results of :func:`ptx` and :func:`resources` are kept in memory per program (one NVRTC compile
serves both); nothing here writes to the kernel cache, so inspecting never adds entries to it.
"""

from __future__ import annotations

import hashlib
import html
import re
import shutil
import subprocess
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from .. import memo
from ..errors import GPUNBError, GPUUnavailableError
from .compiler import check_options, compile_program, nvrtc_options

DEFAULT_ARCH = "sm_90"
"""The architecture compiled for when none is named and no GPU is present."""

RESOURCE_KEYS = ("registers", "shared_bytes", "local_bytes", "spill_stores", "spill_loads")
_PTXAS_VERBOSE = "--ptxas-options=-v"
_MEMO_SIZE = 32


class DisassemblerNotFoundError(GPUNBError, FileNotFoundError):
    """Neither ``nvdisasm`` nor ``cuobjdump`` could be found, so no SASS can be shown."""

    def __init__(self):
        super().__init__(
            "SASS needs NVIDIA's disassembler (nvdisasm or cuobjdump), and neither was found in "
            "the installed NVIDIA wheels, a CUDA toolkit (CUDA_PATH/CUDA_HOME) or on PATH. "
            "Install it with `pip install nvidia-cuda-nvdisasm` (no CUDA toolkit needed).")


def resolve_arch(options=(), arch=None) -> tuple[str, str | None]:
    """The architecture to compile for, and a note when it was chosen for lack of a GPU.

    ``arch`` if given, else one named in ``options`` (``-arch=sm_80``), else the current GPU's,
    else :data:`DEFAULT_ARCH` with a one-line note saying that no GPU was found.
    """
    options = check_options(options)
    try:
        return nvrtc_options(options, arch)[1], None
    except GPUUnavailableError:   # only raised when neither arch nor option named one
        return DEFAULT_ARCH, (f"no GPU found, so the target is {DEFAULT_ARCH} "
                              "(name another with --arch / arch=)")


# -- one NVRTC compile for PTX and ptxas's report ----------------------------------------------

@dataclass(frozen=True)
class _Inspected:
    ptx: str
    log: str
    cubin: bytes
    lowered: dict


_memo: OrderedDict[tuple, _Inspected] = memo.table("inspection.programs", OrderedDict)
_memo_lock = threading.Lock()


def _inspect(source, options, arch, name_expressions, headers, name) -> _Inspected:
    options = check_options(options)
    arch, _ = resolve_arch(options, arch)
    exprs = tuple(name_expressions)
    memo_key = (source, options, arch, exprs, tuple(sorted((headers or {}).items())), name)
    with _memo_lock:
        found = _memo.get(memo_key)
        if found is not None:
            _memo.move_to_end(memo_key)
            return found
    # -v changes ptxas's log, not the cubin, so this cubin is the one the kernel cache holds.
    prog = compile_program(source, (*options, _PTXAS_VERBOSE), arch, name=name, headers=headers,
                           name_expressions=exprs, want_ptx=True)
    found = _Inspected(prog.ptx, prog.log, prog.cubin, dict(prog.lowered_names))
    with _memo_lock:
        _memo[memo_key] = found
        while len(_memo) > _MEMO_SIZE:
            _memo.popitem(last=False)
    return found


def ptx(source: str, options=(), arch=None, name_expressions=(), *,
        headers: dict[str, str] | None = None, name: str = "kernel.cu") -> str:
    """The PTX that NVRTC generates for ``source``.

    Parameters
    ----------
    source : str
        CUDA C++ source.
    options : sequence of str
        NVRTC options, as for :func:`gpunb.core.build.compiler.compile`.
    arch : str, optional
        Target such as ``'sm_90'`` (see :func:`resolve_arch` for the default).
    name_expressions : sequence of str
        Template instances to generate, such as ``'axpy<float>'``.

    Raises
    ------
    gpunb.CompileError
        If NVRTC rejects the program.
    """
    return _inspect(source, options, arch, name_expressions, headers, name).ptx


# -- resources -----------------------------------------------------------------------------------

_ENTRY_RE = re.compile(r"Compiling entry function '([^']+)'")
_PROPS_RE = re.compile(r"Function properties for (\S+)")
_FRAME_RE = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_REGS_RE = re.compile(r"Used (\d+) registers")


def parse_ptxas_log(log: str) -> dict[str, dict]:
    """Per function, what ``ptxas -v`` reported: ``registers``, ``stack_bytes``,
    ``spill_stores``, ``spill_loads`` (each present only when the log gave it)."""
    out: dict[str, dict] = {}
    current = props = None
    for line in log.splitlines():
        if m := _ENTRY_RE.search(line):
            current = m.group(1)
            out.setdefault(current, {})
        elif m := _PROPS_RE.search(line):
            props = m.group(1)
        elif (m := _FRAME_RE.search(line)) and props is not None:
            out.setdefault(props, {}).update(
                stack_bytes=int(m.group(1)), spill_stores=int(m.group(2)), spill_loads=int(m.group(3)))
            props = None
        elif (m := _REGS_RE.search(line)) and current is not None:
            out[current]["registers"] = int(m.group(1))
    return out


def _display_name(symbol: str, lowered: dict) -> str:
    from .signature import demangled_base

    for expr, sym in lowered.items():
        if sym == symbol:
            return expr
    return demangled_base(symbol)


class Resources(dict):
    """Per-kernel resources, keyed by kernel symbol (a ``dict``), with text and HTML tables.

    Each value has ``registers``, ``shared_bytes`` (static shared memory), ``local_bytes``
    (stack frame per thread), ``spill_stores``, ``spill_loads`` (bytes; None when unknown) and
    ``name`` (the kernel's readable name: its ``extern "C"`` name or name expression).
    """

    arch: str | None = None

    def text(self) -> str:
        return resources_text(self)

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(self.text())

    def _repr_html_(self) -> str:
        return resources_html(self)


def resources(source: str, options=(), arch=None, name_expressions=(), *,
              headers: dict[str, str] | None = None, name: str = "kernel.cu") -> Resources:
    """Registers, shared and local memory and spills of every kernel of ``source``.

    Parameters are those of :func:`ptx`. Returns a :class:`Resources` (a dict keyed by kernel
    symbol; see there for the fields). Registers, shared and local bytes come from the cubin;
    spills from ptxas's report, which NVRTC gives with ``--ptxas-options=-v``.
    """
    from .cubin import read_kernels

    done = _inspect(source, options, arch, name_expressions, headers, name)
    report = parse_ptxas_log(done.log)
    out = Resources()
    out.arch = resolve_arch(check_options(options), arch)[0]
    for symbol, info in sorted(read_kernels(done.cubin).items()):
        ptxas = report.get(symbol, {})
        out[symbol] = {
            "name": _display_name(symbol, done.lowered),
            "registers": info.registers if info.registers is not None else ptxas.get("registers"),
            "shared_bytes": info.shared_bytes,
            "local_bytes": info.local_bytes,
            "spill_stores": ptxas.get("spill_stores"),
            "spill_loads": ptxas.get("spill_loads"),
        }
    return out


_COLUMNS = ("kernel", "registers", "shared", "local", "spill stores", "spill loads")


def _resource_rows(res: dict) -> list[tuple[str, ...]]:
    def num(v, unit=" B"):
        return "?" if v is None else f"{v}{unit}"

    rows = []
    for symbol, r in res.items():
        name = r.get("name") or symbol
        label = name if name == symbol else f"{name} ({symbol})"
        rows.append((label, num(r.get("registers"), ""), num(r.get("shared_bytes")),
                     num(r.get("local_bytes")), num(r.get("spill_stores")),
                     num(r.get("spill_loads"))))
    return rows


def resources_text(res: dict) -> str:
    """A plain-text table of :func:`resources`' result (columns padded, a rule under the
    header); ``?`` marks what is unknown."""
    rows = _resource_rows(res)
    if not rows:
        return "(no kernels)"
    widths = [max(len(c) for c in col) for col in zip(_COLUMNS, *rows)]

    def line(cells):
        # names left-aligned, numbers right-aligned
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    arch = getattr(res, "arch", None)
    head = [f"resources per kernel ({arch})"] if arch else []
    return "\n".join(head + [line(_COLUMNS), line(tuple("-" * w for w in widths))]
                     + [line(r) for r in rows])


def resources_html(res: dict) -> str:
    """The table of :func:`resources_text` as HTML."""
    e = html.escape
    cell = 'style="text-align:{};padding:1px 8px"'
    head = "".join(f"<th {cell.format('left' if i == 0 else 'right')}>{e(c)}</th>"
                   for i, c in enumerate(_COLUMNS))
    body = "".join("<tr>" + "".join(f"<td {cell.format('left' if i == 0 else 'right')}>{e(c)}</td>"
                                    for i, c in enumerate(r)) + "</tr>"
                   for r in _resource_rows(res))
    arch = getattr(res, "arch", None)
    cap = (f"<caption style='text-align:left'>resources per kernel ({e(arch)})</caption>"
           if arch else "")
    return (f'<table class="gpunb-table" style="border-collapse:collapse">{cap}<thead><tr>{head}'
            f"</tr></thead><tbody>{body}</tbody></table>")


# -- SASS ----------------------------------------------------------------------------------------

def find_disassembler() -> tuple[str, str] | None:
    """(tool, path) of the disassembler to use: ``nvdisasm`` before ``cuobjdump``, each looked
    for in NVIDIA's wheels, a conda environment and CUDA_PATH/CUDA_HOME (cuda-pathfinder), then
    on PATH. None if there is neither."""
    for tool in ("nvdisasm", "cuobjdump"):
        path = None
        try:
            from cuda.pathfinder import find_nvidia_binary_utility
        except ImportError:  # pragma: no cover - cuda-pathfinder comes with cuda-bindings
            pass
        else:
            try:
                path = find_nvidia_binary_utility(tool)
            except (RuntimeError, OSError):   # a broken install must not hide the PATH lookup
                path = None
        path = path or shutil.which(tool)
        if path:
            return tool, str(path)
    return None


_sass_memo: OrderedDict[str, str] = memo.table("inspection.sass", OrderedDict)


def sass(cubin: bytes) -> str:
    """The SASS (machine code) of a cubin, as ``nvdisasm -c`` (or ``cuobjdump -sass``) prints it.

    Raises
    ------
    DisassemblerNotFoundError
        (a FileNotFoundError) if neither tool is installed; the message says how to get one.
    RuntimeError
        If the tool fails, for example a disassembler older than the cubin's architecture.
    """
    if not isinstance(cubin, (bytes, bytearray, memoryview)):
        raise TypeError(f"cubin must be bytes, got {type(cubin).__name__}")
    cubin = bytes(cubin)
    digest = hashlib.sha256(cubin).hexdigest()
    with _memo_lock:
        if digest in _sass_memo:
            return _sass_memo[digest]
    found = find_disassembler()
    if found is None:
        raise DisassemblerNotFoundError()
    tool, path = found
    with tempfile.TemporaryDirectory(prefix="gpunb-sass-") as tmp:
        file = Path(tmp) / "kernel.cubin"
        file.write_bytes(cubin)
        argv = [path, "-c", str(file)] if tool == "nvdisasm" else [path, "-sass", str(file)]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise RuntimeError(f"{tool} ({path}) could not disassemble the cubin: {e}") from e
    if done.returncode != 0:
        raise RuntimeError(
            f"{tool} ({path}) failed with exit status {done.returncode}: "
            f"{(done.stderr or done.stdout).strip()}\nAn older disassembler may not know this "
            "architecture: `pip install -U nvidia-cuda-nvdisasm` gives one that matches NVRTC.")
    text = done.stdout
    with _memo_lock:
        _sass_memo[digest] = text
        while len(_sass_memo) > _MEMO_SIZE:
            _sass_memo.popitem(last=False)
    return text


__all__ = ["DEFAULT_ARCH", "DisassemblerNotFoundError", "Resources", "find_disassembler",
           "parse_ptxas_log", "ptx", "resolve_arch", "resources",
           "resources_html", "resources_text", "sass"]
