"""``%%cuda``: compile a cell of CUDA C++ with NVRTC and bind its kernels as Python callables.

The cell goes through the kernel cache (:func:`gpunb.core.build.cached.compile_cached`), so running it
again loads the cubin without calling NVRTC. Every ``extern "C" __global__`` function becomes a
:class:`gpunb.RawKernel` in the user namespace (plain C++ ``__global__`` functions outside any
namespace too), and so does each template instance named with ``--instantiate EXPR``, under a
Python name derived from the expression (:func:`python_name`: ``axpy<float>`` -> ``axpy_float``).
With ``--module NAME`` only NAME is bound: a :class:`CellModule` whose attributes are the
kernels and which also answers ``module["axpy<float>"]``.

Highlighting: JupyterLab 4 highlights every code cell in the kernel's language (Python), and
a cell magic gets another mode only from a frontend extension (a JavaScript package built with
node, as jupyterlab-lsp does); IPython's old ``highlight_modes`` hook was the classic notebook's
only. gpunb is pure Python with no frontend build, so a ``%%cuda`` cell is highlighted as Python
while it is edited; ``--show source`` displays it highlighted as CUDA.

Line numbers: the compiled source is the cell body after one comment line standing in for the
``%%cuda`` line, so NVRTC's log, the marked source of a :class:`gpunb.CompileError` and the
notebook agree on every line number.
"""

from __future__ import annotations

import html
import keyword
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments
from IPython.display import Code, display
from IPython.utils.process import arg_split

from ..core import events
from ..report import natural_key
from ..core.build import inspection
from ..core.build.cached import compile_cached
from ..core.build.compiler import normalize_arch
from ..core.build.signature import demangled_base, kernel_declarations
from ..core.kernels.raw.module import RawModule

SHOW_CHOICES = ("source", "ptx", "sass", "resources")
CELL_HEADER = "// %%cuda\n"   # stands for the magic line: source line k is cell line k
PROGRAM_NAME = "cell.cu"
_DEFINE_RE = re.compile(r"^[A-Za-z_]\w*(=.*)?$", re.S)
_STD_RE = re.compile(r"^(?:c\+\+|gnu\+\+)?(\d\d)$")
_PLAIN_CPP_RE = re.compile(r"^_Z(\d+)")


def python_name(expr: str) -> str:
    """The Python name a ``--instantiate`` expression is bound to.

    ``*`` reads as ``ptr`` and ``&`` as ``ref``; every run of other characters that cannot
    appear in an identifier (``<``, ``>``, ``,``, ``::``, spaces) becomes one underscore, and
    underscores at either end are dropped: ``axpy<float>`` -> ``axpy_float``,
    ``ns::scale<double, 4>`` -> ``ns_scale_double_4``, ``fill<float*>`` -> ``fill_float_ptr``.
    A leading digit gets an underscore before it, a keyword one after it.
    """
    text = expr.replace("*", " ptr ").replace("&", " ref ")
    name = re.sub(r"[^0-9A-Za-z_]+", "_", text).strip("_")
    if not name:
        raise UsageError(f"--instantiate {expr!r}: no Python name can be made from it")
    if name[0].isdigit():
        name = "_" + name
    return name + "_" if keyword.iskeyword(name) else name


class CellModule(RawModule):
    """The kernels of one ``%%cuda`` cell: a :class:`gpunb.RawModule` whose attributes are its
    kernels (``mod.saxpy``, ``mod.axpy_float``) and which is indexed by Python name, C++ name
    or name expression (``mod["axpy<float>"]``). A kernel named like a RawModule attribute
    (``compile``, ``entry``, ``code``, ...) is reached by indexing: ``mod["compile"]``."""

    def __init__(self, code: str, options=(), name_expressions=()):
        super().__init__(code=code, options=options, name_expressions=name_expressions)
        self._bound: dict[str, str] = {}    # Python name -> kernel name or expression

    def _bind(self, names: dict[str, str]) -> None:
        self._bound = dict(names)

    @property
    def kernels(self) -> dict:
        """Python name -> :class:`gpunb.RawKernel`, in the order bound."""
        return {py: self.get_function(k) for py, k in self._bound.items()}

    def __getattr__(self, name: str):
        bound = self.__dict__.get("_bound", {})   # absent while unpickling / constructing
        if name in bound:
            return self.get_function(bound[name])
        raise AttributeError(f"this %%cuda module has no kernel {name!r}; it has: "
                             + (", ".join(bound) or "none"))

    def __getitem__(self, name: str):
        if name in self._bound:
            return self.get_function(self._bound[name])
        if name in self._bound.values():
            return self.get_function(name)
        raise KeyError(f"this %%cuda module has no kernel {name!r}; it has: "
                       + (", ".join(f"{py} ({k})" if py != k else py for py, k in self._bound.items())
                          or "none"))

    def __contains__(self, name) -> bool:
        return name in self._bound or name in self._bound.values()

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._bound))

    def __repr__(self) -> str:
        items = ", ".join(py if py == k else f"{py} ({k})" for py, k in self._bound.items())
        return f"<gpunb %%cuda module: {items or 'no kernels'}>"


# -- what a run of the magic shows ---------------------------------------------------------------

class Listing(Code):
    """Highlighted code with a title: HTML in a notebook, plain text elsewhere."""

    def __init__(self, data: str, language: str | None, title: str):
        self.title = title
        # data set afterwards: DisplayObject would read a str naming an existing file, or
        # starting with "http", as a file name or URL
        super().__init__(data=None, language=language)
        self.data = data

    def __repr__(self) -> str:
        return f"{self.title}:\n{self.data.rstrip()}"

    def _repr_html_(self) -> str:
        head = f"<div><b>{html.escape(self.title)}</b></div>"
        if not self.language:
            return head + f"<pre>{html.escape(self.data)}</pre>"
        from pygments import highlight
        from pygments.formatters import HtmlFormatter

        # inline styles: no stylesheet needed in JupyterLab, nbconvert or a static viewer
        return head + highlight(self.data, self._get_lexer(), HtmlFormatter(noclasses=True))


@dataclass
class CellSummary:
    """What ``%%cuda`` did: the names it bound, the architecture, and cache hit or compile."""

    bound: dict[str, str]               # Python name -> kernel name or expression
    arch: str
    status: str                         # "compiled", "memory" or "disk" (a cache hit)
    seconds: float | None = None        # compile seconds when compiled
    module: str | None = None
    notes: list[str] = field(default_factory=list)
    log: str = ""                       # NVRTC's warnings, if any

    shown = 8    # names listed before the rest is counted ("... and 72 more")

    def _names(self) -> str:
        items = list(self.bound.items())     # kernels in natural order, then instances as given
        names = ", ".join(py if py == k else f"{py} ({k})" for py, k in items[:self.shown])
        if len(items) > self.shown:
            names += f", ... and {len(items) - self.shown} more ({len(items)} kernels)"
        if self.module:
            return f"{self.module} with {names or 'no kernels'}"
        return names or 'no kernels (declare them extern "C" or name instances with --instantiate)'

    def _how(self) -> str:
        if self.status == "compiled":
            return f"compiled for {self.arch} in {self.seconds:.2f} s"
        return f"loaded from the kernel cache ({self.status}) for {self.arch}"

    def text(self) -> str:
        lines = [f"%%cuda: {self._names()}; {self._how()}"]
        lines += [f"note: {n}" for n in self.notes]
        if self.log:
            lines += ["NVRTC log:", self.log]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.text()

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(self.text())

    def _repr_html_(self) -> str:
        e = html.escape
        out = [f"<div><code>%%cuda</code>: <b>{e(self._names())}</b>; {e(self._how())}</div>"]
        out += [f"<div><i>note:</i> {e(n)}</div>" for n in self.notes]
        if self.log:
            out.append(f"<pre>{e(self.log)}</pre>")
        return "".join(out)


# -- argument handling -----------------------------------------------------------------------------

def _join_option_values(tokens: list[str]) -> list[str]:
    # argparse takes a value that starts with '-' for an option: `--opt -lineinfo` would fail.
    out, it = [], iter(tokens)
    for tok in it:
        if tok == "--opt":
            value = next(it, None)
            out.append(tok if value is None else "--opt=" + value)
        else:
            out.append(tok)
    return out


def nvrtc_options_from(args) -> list[str]:
    """The NVRTC options that ``--std``, ``-D``, ``-I`` and ``--opt`` ask for."""
    options = []
    if args.std:
        m = _STD_RE.match(args.std.strip())
        if not m:
            raise UsageError(f"--std {args.std!r}: give a C++ standard such as c++17 or c++20")
        options.append(f"-std={args.std if '+' in args.std else 'c++' + m.group(1)}")
    for d in args.define or ():
        if not _DEFINE_RE.match(d):
            raise UsageError(f"-D {d!r}: give NAME or NAME=VALUE, NAME a C identifier")
        options.append("-D" + d)
    for i in args.include or ():
        path = Path(i).expanduser()
        if not path.is_dir():
            raise UsageError(f"-I {i!r}: no such directory")
        # absolute, so that a later compile (another arch, another cwd) finds the same headers;
        # include paths never enter the cache key, the headers' contents do
        options.append("-I" + str(path.resolve()))
    for o in args.opt or ():
        try:
            options += shlex.split(o)
        except ValueError as e:
            raise UsageError(f"--opt {o!r}: {e}") from None
    return options


def _bindings(entry, instances: list[str]) -> dict[str, str]:
    """Python name -> kernel name (extern "C" or plain C++) or name expression."""
    lowered = entry.meta.get("name_expressions", {})
    instance_symbols = set(lowered.values())
    names: dict[str, str] = {}
    # natural order (k2 before k10): the entry lists its kernels sorted as text
    plain = sorted((s for s in entry.meta.get("kernels", ()) if s not in instance_symbols), key=natural_key)
    bases: dict[str, list[str]] = {}
    for symbol in plain:
        m = _PLAIN_CPP_RE.match(symbol)
        if not symbol.startswith("_Z"):
            names[symbol + "_" if keyword.iskeyword(symbol) else symbol] = symbol   # extern "C"
        elif m and symbol[m.end() + int(m.group(1)):][:1] != "I":   # not a template instance
            bases.setdefault(demangled_base(symbol), []).append(symbol)
    for base, symbols in bases.items():
        py = base + "_" if keyword.iskeyword(base) else base
        if len(symbols) == 1 and py not in names:        # overloads need --instantiate
            names[py] = base
    for expr in instances:
        py = python_name(expr)
        if py in names and names[py] != expr:
            raise UsageError(
                f"--instantiate {expr!r} would be bound as {py!r}, which is already the name of "
                f"{names[py]!r}; use --module NAME and reach it as NAME[{expr!r}]")
        names[py] = expr
    return names


# -- the magic -----------------------------------------------------------------------------------

@magics_class
class CudaMagics(Magics):
    """The ``%%cuda`` cell magic. Register with ``shell.register_magics(CudaMagics(shell))`` or
    ``%load_ext gpunb``."""

    last: CellSummary | None = None

    @cell_magic
    @magic_arguments()
    @argument("--arch", default=None,
              help="architecture to compile and inspect for, e.g. sm_90 (default: the GPU's; "
                   f"{inspection.DEFAULT_ARCH} without one). Launching always compiles for the "
                   "current GPU.")
    @argument("--std", default=None, help="C++ standard: c++17 (default), c++20, ...")
    @argument("-D", dest="define", action="append", metavar="NAME[=VALUE]",
              help="define a macro (repeatable)")
    @argument("-I", dest="include", action="append", metavar="DIR",
              help="add a header directory (repeatable)")
    @argument("--opt", action="append", metavar="OPTIONS",
              help="extra NVRTC options, e.g. --opt=--use_fast_math or --opt \"-lineinfo "
                   "--maxrregcount=64\" (repeatable; split like a shell)")
    @argument("--module", default=None, metavar="NAME",
              help="bind one object NAME whose attributes are the kernels, instead of each kernel")
    @argument("--instantiate", action="append", metavar="EXPR",
              help="a template instance to compile and bind, e.g. \"axpy<float>\" (repeatable); "
                   "bound as axpy_float: every run of <, >, ',', ::, spaces becomes _, * is ptr")
    @argument("--show", action="append", choices=SHOW_CHOICES,
              metavar="{" + ",".join(SHOW_CHOICES) + "}",
              help="also show the highlighted source, the PTX, the SASS (needs nvdisasm: pip install "
                   "nvidia-cuda-nvdisasm) or the resources per kernel: registers, shared and local "
                   "memory, spills (repeatable)")
    @argument("--force", action="store_true", help="recompile even if the kernel cache has it")
    @argument("--quiet", "-q", action="store_true",
              help="no summary and no notes: only errors (and what --show asks for)")
    def cuda(self, line: str = "", cell: str | None = None):
        """Compile the cell's CUDA C++ with NVRTC (through the kernel cache) and bind every
        extern "C" __global__ function, and every --instantiate'd template instance, as a
        gpunb.RawKernel: kernel(grid, block, args, shared_mem=0) with gpunb arrays, CuPy arrays
        or anything with __cuda_array_interface__. A compile error raises gpunb.CompileError
        with the cell's line numbers, and binds nothing.
        """
        try:   # shell quoting (posix): --instantiate "axpy<float>" gives axpy<float>
            tokens = arg_split(line, posix=True)
        except ValueError as e:
            raise UsageError(f"%%cuda {line}: {e}") from None
        args = CudaMagics.cuda.parser.parse_args(_join_option_values(tokens))
        if cell is None or not cell.strip():
            raise UsageError("%%cuda needs CUDA C++ in the cell, below the %%cuda line")
        module_name = args.module
        if module_name is not None and (not module_name.isidentifier() or keyword.iskeyword(module_name)):
            raise UsageError(f"--module {args.module!r} is not a valid Python name")
        options = nvrtc_options_from(args)
        instances = _instances(args.instantiate)
        try:
            arch = normalize_arch(args.arch) if args.arch else None
            arch, note = inspection.resolve_arch(options, arch)
        except ValueError as e:
            raise UsageError(str(e)) from None

        if args.quiet:      # the compile display keeps no summary of this cell either
            from ..widgets import quiet_cell

            quiet_cell(self.shell)
        source = CELL_HEADER + cell
        entry, status, seconds = _compile(source, options, arch, instances, args.force,
                                          _display_name(cell, instances, args.module))
        names = _bindings(entry, instances)
        module = CellModule(source, options, instances)
        module.set_entry(arch, entry)   # the entry just built: launching on this arch loads it
        module._bind(names)
        if args.module:
            self.shell.user_ns[args.module] = module
        else:
            self.shell.user_ns.update({py: module.get_function(k) for py, k in names.items()})

        summary = CellSummary(names, arch, status, seconds, args.module, [note] if note else [],
                              entry.meta.get("log", "") or "")
        self.last = summary
        if not args.quiet:
            display(summary)
        for what in dict.fromkeys(args.show or ()):
            display(_shown(what, cell, source, options, arch, instances, entry))
        return None


def _instances(exprs) -> list[str]:
    """The --instantiate expressions, once each; two that would share a Python name are an error."""
    instances = list(dict.fromkeys(e.strip() for e in exprs or () if e.strip()))
    seen: dict[str, str] = {}
    for expr in instances:
        py = python_name(expr)
        if py in seen:
            raise UsageError(f"--instantiate {seen[py]!r} and {expr!r} would both be bound as "
                             f"{py!r}; use --module NAME and NAME[EXPR]")
        seen[py] = expr
    return instances


def _display_name(cell: str, instances: list[str], module: str | None) -> str:
    declared = [n for n, decls in kernel_declarations(cell).items() if any(not t for t, _ in decls)]
    names = declared + instances
    what = ", ".join(names[:4]) + (f", ... ({len(names)} kernels)" if len(names) > 4 else "")
    return f"%%cuda {what or module or 'cell'}"


def _compile(source, options, arch, instances, force, display_name):
    """compile_cached, noting whether the entry was a cache hit or a compile."""
    seen = []
    with events.subscribed(seen.append):
        entry = compile_cached(source, options, arch, name=PROGRAM_NAME, name_expressions=instances,
                               display_name=display_name, force=force)
    for ev in seen:
        if getattr(ev, "key", None) != entry.key:
            continue
        if isinstance(ev, events.CacheHit):
            return entry, ev.level, None
        if isinstance(ev, events.CompileFinished):
            return entry, "compiled", ev.seconds
    return entry, "compiled", entry.meta.get("compile_seconds")


def _shown(what, cell, source, options, arch, instances, entry):
    if what == "source":
        return Listing(cell, "cuda", "source")
    if what == "ptx":
        text = inspection.ptx(source, options, arch, instances, name=PROGRAM_NAME)
        return Listing(text, "ptx", f"PTX ({arch})")
    if what == "sass":
        return Listing(inspection.sass(entry.cubin), None, f"SASS ({arch})")
    return inspection.resources(source, options, arch, instances, name=PROGRAM_NAME)
