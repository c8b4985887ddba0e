"""The kernel viewer: a kernel's CUDA source, highlighted, with tabs for its PTX and its
resources (registers, shared and local memory, spills).

The source tab is rendered at once. PTX and resources need an NVRTC compile, so they are
computed when their tab is first selected (or when :meth:`KernelViewer.ptx` /
:meth:`KernelViewer.resources` is called) and kept. A viewer made from a cache entry reads
resources from the entry's cubin when :mod:`gpunb.core.build.inspection` is not there to give spills
too. With an arch named, nothing needs a GPU.
"""

from __future__ import annotations

from .. import report
from .base import View, escape

TABS = ("Source", "PTX", "Resources")
_SCROLL = "max-height:420px;overflow:auto;font-size:12px"


def _inspection():
    """:mod:`gpunb.core.build.inspection`, or None where that module is not installed."""
    try:
        from ..core.build import inspection
    except ModuleNotFoundError as e:
        if e.name != "gpunb.core.build.inspection":
            raise
        return None
    return inspection


def highlight(code: str, lexer: str = "cuda", *, first_line: int = 1, scroll: bool = True) -> str:
    """HTML of ``code`` highlighted by pygments with inline styles (no stylesheet needed, so it
    survives nbconvert), line numbers included (from ``first_line``)."""
    from pygments import highlight as _highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import CudaLexer, PtxLexer

    lex = {"cuda": CudaLexer, "ptx": PtxLexer}[lexer]()
    fmt = HtmlFormatter(noclasses=True, linenos="inline", nobackground=True, linenostart=first_line)
    body = _highlight(code, lex, fmt)
    return f'<div class="gpunb-code" style="{_SCROLL}">{body}</div>' if scroll else body


def split_prelude(source: str) -> tuple[str, str]:
    """``(prelude, rest)``: gpunb's prelude, which every generated kernel starts with (hundreds
    of lines of shared helpers), and the kernel's own code; ``("", source)`` without one."""
    from ..core.kernels.prelude import prelude

    head = prelude()
    if head and source.startswith(head):
        return head, source[len(head):]
    return "", source


def resources_table(res: dict) -> str:
    """Plain-text table of :meth:`KernelViewer.resources` (used without the inspection module)."""
    from ..core.build.signature import demangled_base

    def cell(v, fmt=str):
        return "?" if v is None else fmt(v)

    rows = []
    for symbol, r in sorted(res.items()):
        name = demangled_base(symbol)
        rows.append((name if name == symbol else f"{name} ({symbol})", cell(r.get("registers")),
                     report.format_bytes(r.get("shared_bytes", 0)),
                     report.format_bytes(r.get("local_bytes", 0)),
                     cell(r.get("spill_stores")), cell(r.get("spill_loads"))))
    if not rows:
        return "(no kernels)"
    return report.text_table(("kernel", "registers", "shared", "local", "spill stores",
                              "spill loads"), rows)


def cubin_resources(cubin: bytes) -> dict:
    """Registers, static shared memory and local memory per kernel from a cubin (spills are
    not recorded in a cubin: None)."""
    from ..core.build.cubin import read_kernels

    return {s: dict(registers=k.registers, shared_bytes=k.shared_bytes, local_bytes=k.local_bytes,
                    spill_stores=None, spill_loads=None) for s, k in read_kernels(cubin).items()}


class KernelViewer(View):
    """A kernel's source (highlighted), PTX and resources, in tabs.

    Parameters
    ----------
    source : str
        CUDA C++ source.
    options : sequence of str
        NVRTC options it compiles with.
    arch : str, optional
        Target, e.g. ``'sm_90'`` (default: the current GPU's, which needs one).
    name : str, optional
        Shown in the title (default: the kernels declared in the source).
    kind : str, optional
        What made it (``'elementwise'``, ``'reduction'``, ``'%%cuda'``...), for the title.
    name_expressions : sequence of str
        Template instances to compile (as ``%%cuda --instantiate``).
    cubin : bytes, optional
        The compiled cubin, if known (resources are read from it without a compile when the
        inspection module is absent).
    """

    def __init__(self, source: str, options=(), arch=None, name=None, *, kind=None,
                 name_expressions=(), cubin: bytes | None = None):
        super().__init__()
        self.source = source
        self.options = tuple(options)
        self.arch = arch
        self.kind = kind
        self.name_expressions = tuple(name_expressions)
        self.cubin = cubin
        if name is None:
            from ..core.build.cached import kernel_names

            name = ", ".join(kernel_names(source)[:4]) or "kernel"
        self.name = name
        self._ptx: str | None = None
        self._resources: dict | None = None
        self.computed: list[str] = []          # what was computed, in order (for tests)

    @classmethod
    def from_inspection(cls, ins) -> "KernelViewer":
        """The kernel of a fused function: ``KernelViewer.from_inspection(f.inspect(x, arch=...))``."""
        return cls(ins.source, (), ins.arch, ins.name, kind=getattr(ins, "kind", None),
                   cubin=getattr(ins, "_cubin", None))

    @classmethod
    def from_entry(cls, entry) -> "KernelViewer":
        """A kernel cache entry: a :class:`~gpunb.core.build.cache.CacheEntry` (as returned by
        ``compile_cached``) or a metadata record from ``kernel_cache().entries()``/``find()``."""
        meta = entry.meta if hasattr(entry, "meta") else dict(entry)
        if "source" not in meta:
            raise ValueError(f"cache entry {meta.get('key', '?')[:12]} holds no source")
        return cls(meta["source"], meta.get("options", ()), meta.get("arch"), meta.get("name"),
                   kind="cache entry", name_expressions=tuple(meta.get("name_expressions", {})),
                   cubin=getattr(entry, "cubin", None))

    # -- content (computed once) ---------------------------------------------------------------

    def title(self) -> str:
        details = ", ".join(str(x) for x in (self.kind, self.arch) if x)
        return f"kernel {self.name}" + (f" ({details})" if details else "")

    def source_html(self) -> str:
        """The source, opened on the kernel: gpunb's prelude (if the source starts with it) is
        folded into a collapsed section above the kernel's own code, line numbers kept."""
        head, rest = split_prelude(self.source)
        if not head:
            return highlight(self.source, "cuda")
        n = head.count("\n")
        fold = (f'<details class="gpunb-prelude"><summary style="cursor:pointer;color:#555">'
                f"lines 1&ndash;{n}: gpunb's prelude (types and NumPy-exact helpers shared by every "
                f"generated kernel), folded; the kernel starts at line {n + 1}</summary>"
                f'{highlight(head, "cuda", scroll=False)}</details>')
        return (f'<div class="gpunb-code" style="{_SCROLL}">{fold}'
                f'{highlight(rest, "cuda", first_line=n + 1, scroll=False)}</div>')

    def ptx(self) -> str:
        """The PTX NVRTC generates (one compile, then kept)."""
        if self._ptx is None:
            ins = _inspection()
            if ins is not None:
                self._ptx = ins.ptx(self.source, self.options, self.arch, self.name_expressions)
            else:
                from ..core.build.compiler import compile_program

                prog = compile_program(self.source, self.options, self.arch,
                                       name_expressions=self.name_expressions, want_ptx=True)
                self._ptx, self.cubin = prog.ptx, self.cubin or prog.cubin
            self.computed.append("ptx")
        return self._ptx

    def resources(self) -> dict:
        """Per kernel symbol: ``registers``, ``shared_bytes``, ``local_bytes``,
        ``spill_stores``, ``spill_loads`` (None where unknown)."""
        if self._resources is None:
            ins = _inspection()
            if ins is not None:
                self._resources = ins.resources(self.source, self.options, self.arch,
                                                self.name_expressions)
            else:
                if self.cubin is None:
                    from ..core.build.compiler import compile_program

                    self.cubin = compile_program(self.source, self.options, self.arch,
                                                 name_expressions=self.name_expressions).cubin
                self._resources = cubin_resources(self.cubin)
            self.computed.append("resources")
        return self._resources

    def resources_text(self) -> str:
        ins = _inspection()
        res = self.resources()
        return ins.resources_text(res) if ins is not None else resources_table(res)

    # -- text -----------------------------------------------------------------------------------

    def text(self, parts=("source",)) -> str:
        """The title and the numbered source; ``parts`` may add ``'ptx'`` and ``'resources'``
        (which compile on first use)."""
        out = [self.title()]
        for part in parts:
            if part == "source":
                head, rest = split_prelude(self.source)
                if head:     # the kernel's own lines, numbered as in the whole source
                    n = head.count("\n")
                    width = len(str(n + rest.count("\n") + 1))
                    lines = rest.rstrip("\n").split("\n")
                    out.append(f"{'':>{width}} | (lines 1-{n}: gpunb's prelude, not shown)\n"
                               + "\n".join(f"{i:>{width}} | {line}".rstrip()
                                            for i, line in enumerate(lines, n + 1)))
                else:
                    out.append(report.numbered_source(self.source))
            elif part == "ptx":
                out.append(self.ptx().rstrip())
            elif part == "resources":
                out.append(self.resources_text())
            else:
                raise ValueError(f"unknown part {part!r}; choose from source, ptx, resources")
        return "\n\n".join(out)

    # -- widget ---------------------------------------------------------------------------------

    def _build(self):
        import ipywidgets as w

        pending = '<i style="color:#666">computed when this tab is selected</i>'
        self._panes = [w.HTML(self.source_html()), w.HTML(pending), w.HTML(pending)]
        tab = w.Tab(children=self._panes)
        tab.titles = TABS
        header = w.HTML(f"<b>{escape(self.title())}</b>")
        tab.observe(self._on_select, names="selected_index")
        return w.VBox([header, tab])

    @property
    def tab(self):
        """The ipywidgets ``Tab`` (Source, PTX, Resources)."""
        return self.widget.children[1]

    def select(self, tab: str) -> None:
        """Select a tab by title (computing its content if needed)."""
        self.tab.selected_index = TABS.index(tab)

    def _on_select(self, change) -> None:
        index = change["new"]
        if index is None or index == 0:
            return
        pane = self._panes[index]
        if "computed when" not in pane.value:
            return
        pane.value = '<i style="color:#666">compiling...</i>'
        try:
            if index == 1:
                pane.value = highlight(self.ptx(), "ptx")
            else:
                ins = _inspection()
                to_html = getattr(ins, "resources_html", None)
                pane.value = (to_html(self.resources()) if to_html is not None
                              else f"<pre>{escape(self.resources_text())}</pre>")
        except Exception as e:   # shown in the tab: a viewer must not raise from a click
            pane.value = (f'<pre style="color:#b00020">could not compute {TABS[index]}: '
                          f"{escape(type(e).__name__)}: {escape(e)}</pre>")
