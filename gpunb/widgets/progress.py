"""Compile progress: a bar while kernels compile, a small badge for cache hits, a one-line
summary when the cell is done."""

from __future__ import annotations

import threading
import time

from ..core import events
from .banner import SlowBuildBanner
from .base import View, escape, indeterminate_bar, spinner
from .state import ActivityState

_BADGE = ("display:inline-block;padding:0 7px;border-radius:9px;font-size:11px;"
          "line-height:18px;background:#e7f5ea;color:#1e6b34;border:1px solid #b7dfc1")
_COLORS = {"done": "#1e6b34", "error": "#b00020", "running": "inherit"}
# No emoji: the check marks are in every common font (DejaVu has them); busy is a CSS spinner.
_ICONS = {"done": "&#10003;", "error": "&#10007;", "running": spinner()}


class CompileProgress(View):
    """Kernels compiling in the running cell, as a view over an :class:`ActivityState`.

    Parameters
    ----------
    state : ActivityState, optional
        The state to show (default: a new one). Feed events with :meth:`handle` (or subscribe
        the object itself: it is callable).
    interval : float
        Redraw at most once per ``interval`` seconds, except on a change of phase (first hit,
        first compile, an error, a slow build); cache hits only bump a counter, so a loop of a
        thousand hits costs a few redraws.
    tick : float or None
        While something compiles, a daemon thread redraws every ``tick`` seconds so the
        elapsed time moves even when no event arrives (None: no thread).
    clock : callable
        Monotonic clock for the throttle (tests pass a fake one).

    Modes (``mode``): ``'badge'`` (cache hits only: a small badge, no bar), ``'bar'``
    (compiling: bar, current kernel, done of total, elapsed time; with no total known, as for
    single compiles, a moving stripe instead of a bar that would sit empty) and ``'summary'`` (done or
    failed: one line such as ``compiled 3 kernels in 1.2 s, 5 cache hits``). ``redraws``
    counts the renders of the widget.
    """

    def __init__(self, state: ActivityState | None = None, *, interval: float = 0.1,
                 tick: float | None = None, clock=time.monotonic):
        super().__init__()
        self.state = state if state is not None else ActivityState()
        self.banner = SlowBuildBanner(state=self.state)
        self.interval = interval
        self.tick = tick
        self.clock = clock
        self.redraws = 0
        self._last_draw: float | None = None
        self._ticker: threading.Thread | None = None
        self._stop = threading.Event()

    # -- input ----------------------------------------------------------------------------------

    def handle(self, event) -> None:
        """Take one event into the state and redraw if due. Safe from any thread."""
        urgent = self.state.apply(event)
        if isinstance(event, events.SlowBuild):
            if self.state.busy:   # a timer that fired as the build ended shows nothing
                self.banner.show(event)
                self._place_banner()
        elif self.banner.visible and not self.state.busy:
            self._drop_banner()
        if self._widget is None:
            return
        now = self.clock()
        if urgent or self._last_draw is None or now - self._last_draw >= self.interval:
            self.redraw()
        if self.tick and self.state.busy:
            self._start_ticker()

    __call__ = handle

    def collapse(self) -> None:
        """The cell ended: close the banner and show the one-line summary."""
        self.state.collapse()
        if self.banner.visible and not self.state.busy:
            self._drop_banner()
        self.redraw()

    def final_html(self) -> str:
        """The finished state as static HTML (the badge, or the summary line with its mark)."""
        st = self.state
        with st._lock:
            mode, phase, line = self.mode, st.phase, st.text()[len("gpunb: "):]
            error = st.failed[-1][1] if st.failed else ""
        if mode == "badge":
            return (f'<span class="gpunb-badge" style="{_BADGE}" title="kernels loaded from the '
                    f'gpunb kernel cache">{escape(line)}</span>')
        title = f' title="{escape(error.strip().splitlines()[0])}"' if error.strip() else ""
        icon = _ICONS.get(phase, "") if phase != "running" else ""
        return (f'<span class="gpunb-summary" style="color:{_COLORS.get(phase, "inherit")}"{title}>'
                f"{icon} {escape(line)}</span>")

    def _repr_mimebundle_(self, include=None, exclude=None):
        # text/html too, so that the output keeps the same keys when the end of the cell
        # replaces it with final_bundle() (nbval compares keys; it ignores display updates)
        bundle = super()._repr_mimebundle_(include, exclude)
        bundle["text/html"] = self.final_html()
        return bundle

    def final_bundle(self) -> dict:
        """What the output becomes when the cell ends: static HTML and text, no widget, so a
        saved notebook reads correctly without widget state (trusted or not)."""
        return {"text/html": self.final_html(), "text/plain": self.text()}

    def close(self) -> None:
        """Stop the ticker and close the widgets."""
        self._stop.set()
        self.banner.close()
        with self._draw_lock:
            w, self._widget = self._widget, None
        if w is not None:
            w.close()

    # -- derived --------------------------------------------------------------------------------

    @property
    def mode(self) -> str:
        phase = self.state.phase
        if phase in ("idle", "hits"):
            return "badge"
        return "bar" if phase == "running" else "summary"

    def text(self, now: float | None = None) -> str:
        """One line starting with ``gpunb:`` (see :class:`ActivityState`)."""
        return self.state.text(now)

    # -- widget ---------------------------------------------------------------------------------

    def _build(self):
        import ipywidgets as w

        self._badge = w.HTML(layout=w.Layout(display="none"))
        self._bar = w.FloatProgress(min=0, max=1, value=0, bar_style="info",
                                    layout=w.Layout(width="30%", display="none"))
        self._busy = w.HTML(indeterminate_bar("100%"), layout=w.Layout(width="30%", display="none"))
        self._label = w.HTML(layout=w.Layout(display="none"))
        self._row = w.HBox([self._badge, self._bar, self._busy, self._label])
        children = (self.banner.widget, self._row) if self.banner.visible else (self._row,)
        return w.VBox(children)

    def _place_banner(self) -> None:
        with self._draw_lock:
            if self._widget is not None:
                self._widget.children = (self.banner.widget, self._row)

    def _drop_banner(self) -> None:
        with self._draw_lock:
            if self._widget is not None:
                self._widget.children = (self._row,)
        self.banner.close()

    def redraw(self) -> None:
        """Render the state now (a no-op until the widget exists)."""
        with self._draw_lock:
            if self._widget is None:
                return
            self.redraws += 1
            self._last_draw = self.clock()
            st = self.state
            with st._lock:
                mode, phase = self.mode, st.phase
                line = st.text()[len("gpunb: "):]
                done, total = st.progress()
                in_flight = len(st.in_flight)
                error = st.failed[-1][1] if st.failed else ""
            if mode == "badge":
                self._badge.value = (f'<span class="gpunb-badge" style="{_BADGE}" title="kernels '
                                     f'loaded from the gpunb kernel cache">{escape(line)}</span>')
                self._show(self._badge, True)
                self._show(self._bar, False)
                self._show(self._busy, False)
                self._show(self._label, False)
            else:
                self._bar.max = max(total if total is not None else done + in_flight, 1)
                self._bar.value = min(done, self._bar.max)
                self._bar.bar_style = {"running": "info", "error": "danger"}.get(phase, "success")
                color = _COLORS.get(phase, "inherit")
                title = f' title="{escape(error.strip().splitlines()[0])}"' if error.strip() else ""
                self._label.value = (f'<span style="color:{color}"{title}>{_ICONS.get(phase, "")} '
                                     f"{escape(line)}</span>")
                self._show(self._badge, False)
                self._show(self._bar, mode == "bar" and total is not None)
                self._show(self._busy, mode == "bar" and total is None)
                self._show(self._label, True)
            if self.banner.visible:
                self.banner.redraw()

    @staticmethod
    def _show(widget, visible: bool) -> None:
        display = None if visible else "none"
        if widget.layout.display != display:
            widget.layout.display = display

    # -- ticker ---------------------------------------------------------------------------------

    def _start_ticker(self) -> None:
        with self._draw_lock:
            if self._ticker is not None:
                return
            self._stop.clear()
            self._ticker = threading.Thread(target=self._tick_loop, name="gpunb-progress",
                                            daemon=True)
            self._ticker.start()

    def _tick_loop(self) -> None:
        while not self._stop.wait(self.tick):
            with self._draw_lock:
                # Decided under the lock that _start_ticker takes, so a compile starting now
                # either sees this thread alive or starts a new one.
                if self._widget is None or not self.state.busy:
                    self._ticker = None
                    break
                self.redraw()
        with self._draw_lock:
            if self._ticker is threading.current_thread():
                self._ticker = None
        self.redraw()
