"""The IPython display hook: compile events become a widget in the running cell.

:func:`install` subscribes one :class:`CellDisplay` to :mod:`gpunb.core.events` and registers
its ``pre_run_cell``/``post_run_cell`` callbacks. Per cell, the first event creates a
:class:`~gpunb.widgets.progress.CompileProgress` and displays it (a bar while compiling, a
badge when only cache hits happen, the slow-build banner above it past the threshold); at the
end of the cell it collapses to its one-line summary. Events outside a cell are not shown.

Modes: ``'widget'`` displays widgets (its ``text/plain`` is the one-line ``gpunb: ...``
summary, for nbconvert and nbval); the output has a display id, and when the cell ends it is
replaced by the summary as static HTML and text (the widget closed), so a saved notebook reads
correctly without widget state. ``'text'`` shows no widget and prints the summary line after
a cell that compiled something (cells with cache hits only print nothing; a long build
is reported by gpunb's own log warning); ``'auto'`` picks ``'widget'`` in a Jupyter kernel
(the shell has a ``kernel``, as ``%gpucache warm`` also checks) when ipywidgets imports, else
``'text'``. In widget mode the banner replaces the slow-build log line.
"""

from __future__ import annotations

import sys
import threading

from ..core import events
from .progress import CompileProgress
from .state import ACTIVITY

MODES = ("auto", "widget", "text")
_ATTR = "_gpunb_cell_display"


def detect_mode(shell) -> str:
    """``'widget'`` in a Jupyter kernel with ipywidgets installed, else ``'text'``."""
    if getattr(shell, "kernel", None) is None:
        return "text"
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        return "text"
    return "widget"


class CellDisplay:
    """One shell's display of compile events (created by :func:`install`).

    Attributes
    ----------
    mode : str
        ``'widget'`` or ``'text'``.
    progress : CompileProgress or None
        The running cell's display (None until its first event).
    shown : list of CompileProgress
        Every display created, oldest first (kept to the last ``keep``).
    """

    keep = 50

    def __init__(self, shell, mode: str = "text", *, interval: float = 0.1, tick: float = 0.5,
                 stream=None):
        self.shell = shell
        self.mode = mode
        self.interval = interval
        self.tick = tick if mode == "widget" else None
        self.stream = stream
        self.progress: CompileProgress | None = None
        self.shown: list[CompileProgress] = []
        self.in_cell = False
        self._lock = threading.Lock()
        self._muted_log = False
        self._displayed = False
        self.quiet = False

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        events.subscribe(self)
        self.shell.events.register("pre_run_cell", self.pre_run_cell)
        self.shell.events.register("post_run_cell", self.post_run_cell)
        if self.mode == "widget" and events._log_slow_build in events._subscribers:
            # In a notebook the banner says it; the log line would say it twice.
            events.unsubscribe(events._log_slow_build)
            self._muted_log = True

    def stop(self) -> None:
        events.unsubscribe(self)
        for name, cb in (("pre_run_cell", self.pre_run_cell), ("post_run_cell", self.post_run_cell)):
            try:
                self.shell.events.unregister(name, cb)
            except ValueError:   # already gone
                pass
        if self._muted_log:
            events.subscribe(events._log_slow_build)
            self._muted_log = False
        p, self.progress, self.in_cell = self.progress, None, False
        if p is not None:
            p.collapse()

    # -- IPython callbacks --------------------------------------------------------------------

    def pre_run_cell(self, info=None) -> None:
        with self._lock:
            self.progress = None
            self.in_cell = True
            self.quiet = False

    def post_run_cell(self, result=None) -> None:
        with self._lock:
            p, self.progress, self.in_cell = self.progress, None, False
        if p is None:
            return
        p.collapse()
        handle = getattr(p, "handle_", None)
        if self.quiet and p.state.phase != "error":
            p.close()   # quiet cells keep no summary (a failure stays shown)
            if handle is not None:
                handle.update({"text/plain": ""}, raw=True)
            return
        if handle is not None:
            # The output was displayed as a widget whose text/plain is the first state
            # ("compiling ..."); a saved notebook keeps no widget state, so it would show that
            # frozen (or "model not found"). The finished summary needs no widget: replace the
            # output with its static HTML and text, and close the widget.
            handle.update(p.final_bundle(), raw=True)
            p.close()
        if self.mode == "text":
            st = p.state
            if st.compiled or st.failed or st.batch is not None:
                print(p.text(), file=self.stream or sys.stdout, flush=True)

    # -- events ---------------------------------------------------------------------------------

    def __call__(self, event) -> None:
        if not isinstance(event, ACTIVITY):
            return
        with self._lock:
            p = self.progress
            if p is None:
                if not self.in_cell:
                    if self._muted_log and isinstance(event, events.SlowBuild):
                        events._log_slow_build(event)   # no cell to show a banner in
                    return
                p = self.progress = CompileProgress(interval=self.interval, tick=self.tick)
                self.shown = self.shown[-(self.keep - 1):] + [p]
                self._displayed = False
        p.handle(event)
        with self._lock:
            # A miss is followed by its compile's start: display then, so the first text/plain
            # (what nbconvert keeps) says "compiling ...". A quiet cell displays only a
            # failure or the slow-build banner.
            show = (self.mode == "widget" and not self._displayed and p is self.progress
                    and not isinstance(event, events.CacheMiss)
                    and (not self.quiet or p.state.phase == "error" or p.banner.visible))
            if show:
                self._displayed = True
        if show:
            from IPython.display import display

            # with a display id, so that the end of the cell can replace the output's text form
            p.handle_ = display(p, display_id=True)

    def __repr__(self) -> str:
        return f"<gpunb CellDisplay mode={self.mode!r} shown={len(self.shown)}>"


def quiet_cell(ip=None) -> None:
    """Keep no summary of the running cell's compiles (``%%cuda --quiet``): at the end of the
    cell its widget is closed and text mode prints nothing, unless a compile failed."""
    if ip is None:
        from IPython import get_ipython

        ip = get_ipython()
    hook = installed(ip) if ip is not None else None
    if hook is not None:
        hook.quiet = True


def installed(shell) -> CellDisplay | None:
    """The :class:`CellDisplay` installed on ``shell``, if any."""
    return getattr(shell, _ATTR, None)


def install(ip=None, mode: str = "auto", **kwargs) -> CellDisplay:
    """Show gpunb's compile events in ``ip``'s cells (default: the running IPython).

    Installing again with the same mode returns the installed display (one subscription,
    one pair of callbacks); another mode replaces it. ``kwargs`` go to :class:`CellDisplay`
    (``interval``, ``tick``, ``stream``).
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if ip is None:
        from IPython import get_ipython

        ip = get_ipython()
        if ip is None:
            raise RuntimeError("no IPython shell is running; pass one: install(shell)")
    resolved = detect_mode(ip) if mode == "auto" else mode
    if resolved == "widget":
        import ipywidgets  # noqa: F401  (fail here, not at the first compile)
    current = installed(ip)
    if current is not None:
        if current.mode == resolved and not kwargs:
            return current
        uninstall(ip)
    hook = CellDisplay(ip, resolved, **kwargs)
    hook.start()
    setattr(ip, _ATTR, hook)
    return hook


def uninstall(ip=None) -> None:
    """Remove the display from ``ip``: its event subscription and cell callbacks (nothing if
    none is installed)."""
    if ip is None:
        from IPython import get_ipython

        ip = get_ipython()
        if ip is None:
            return
    hook = installed(ip)
    if hook is None:
        return
    hook.stop()
    setattr(ip, _ATTR, None)
