"""The long first-time build banner: shown on a :class:`~gpunb.core.events.SlowBuild` event,
gone when the build ends."""

from __future__ import annotations

import re
import time

from ..core import events
from .base import View, escape, spinner
from .state import ActivityState, seconds_text

_BOX = ("border-left:4px solid #e0a000;background:#fff7e0;color:#222;padding:6px 10px;"
        "margin:2px 0;line-height:1.4")


class SlowBuildBanner(View):
    """A clear notice that a long, one-time build is running, with its progress.

    Parameters
    ----------
    event : SlowBuild, optional
        Show the banner for this event now.
    state : ActivityState, optional
        Where progress is read from. When given (a :class:`CompileProgress` shares its own),
        the owner feeds the state and calls :meth:`show`, :meth:`redraw` and :meth:`close`;
        otherwise the banner keeps its own state, fed by :meth:`handle`.
    precompile : str, optional
        A command that builds this ahead of time, to name instead of the default advice
        (:func:`gpunb.core.events.precompile_advice`: a ``%%cuda`` cell is cached under its own
        source, so running it again helps and ``%gpucache warm`` would not; ``warm`` itself is
        the ahead-of-time build; gpunb's own kernels are precompiled by ``%gpucache warm``).

    The banner says what is being built, that it happens once, the cache directory and what
    helps next time. Its text form is one line starting with ``gpunb:``.
    """

    def __init__(self, event: events.SlowBuild | None = None, *, state: ActivityState | None = None,
                 precompile: str | None = None):
        super().__init__()
        self._own_state = state is None
        self.state = state if state is not None else ActivityState()
        self.precompile = precompile
        self.event: events.SlowBuild | None = None
        self.visible = False
        self.redraws = 0
        if event is not None:
            if self._own_state:
                self.state.apply(event)
            self.show(event)

    # -- input ----------------------------------------------------------------------------------

    def handle(self, event) -> None:
        """Feed one event (a banner with its own state): show on SlowBuild, close at the end."""
        if self._own_state:
            self.state.apply(event)
        if isinstance(event, events.SlowBuild):
            self.show(event)
        elif self.visible and not self.state.busy:
            self.close()
        elif self.visible:
            self.redraw()

    __call__ = handle

    def show(self, event: events.SlowBuild) -> None:
        """Show (or update) the banner for ``event``."""
        with self._draw_lock:
            self.event = event
            self.visible = True
            self.redraw()

    def close(self) -> None:
        """The build ended: hide the banner and close its widget (a later :meth:`show` builds
        a fresh one)."""
        with self._draw_lock:
            self.visible = False
            w, self._widget = self._widget, None
        if w is not None:
            w.layout.display = "none"
            w.close()

    # -- text -----------------------------------------------------------------------------------

    def elapsed(self, now: float | None = None) -> float:
        ev = self.event
        if ev is None:
            return 0.0
        now = time.time() if now is None else now
        return ev.elapsed + max(0.0, now - ev.time)

    def _progress_text(self) -> str:
        done, total = self.state.progress()
        return f", {done} of {total} done" if total else ""

    def _where(self) -> str:
        d = self.event.cache_dir
        return (f"the result is cached in {d}" if d is not None
                else "the result is kept in memory only (the cache directory is not writable)")

    def advice(self) -> str:
        """The sentence on what helps next time."""
        if self.precompile is not None:
            return f"To build ahead of time, run {self.precompile}."
        return events.precompile_advice(self.event.what if self.event is not None else "")

    def text(self, now: float | None = None) -> str:
        ev = self.event
        if ev is None:
            return "gpunb: no long build"
        if not self.visible:
            return f"gpunb: finished building {ev.what} (a one-time build, now cached)"
        return (f"gpunb: building {ev.what} for the first time ({seconds_text(self.elapsed(now))} "
                f"so far{self._progress_text()}). This happens once: {self._where()}. "
                f"{self.advice()}")

    # -- widget ---------------------------------------------------------------------------------

    def _html(self) -> str:
        ev = self.event
        if ev is None:
            return ""
        d = ev.cache_dir
        where = (f"the result is cached in <code>{escape(d)}</code>" if d is not None else
                 "the result is kept in memory only (the cache directory is not writable)")
        advice = re.sub(r"`([^`]+)`", lambda m: f"<code>{m.group(1)}</code>", escape(self.advice()))
        return (f'<div class="gpunb-banner" style="{_BOX}">{spinner("#b07800")} <b>Building '
                f"{escape(ev.what)} for the first time</b> &mdash; "
                f"{escape(seconds_text(self.elapsed()))} so far{escape(self._progress_text())}."
                f"<br>This happens once: {where}.<br>{advice}</div>")

    def _build(self):
        import ipywidgets as w

        self._message = w.HTML()
        self._bar = w.FloatProgress(min=0, max=1, value=0, bar_style="warning",
                                    layout=w.Layout(width="60%", display="none"))
        box = w.VBox([self._message, self._bar], layout=w.Layout(display="none"))
        return box

    def redraw(self) -> None:
        """Render the state into the widget (only once the widget exists)."""
        with self._draw_lock:
            if self._widget is None:
                return
            self.redraws += 1
            box = self._widget
            if not self.visible:
                box.layout.display = "none"
                return
            self._message.value = self._html()
            done, total = self.state.progress()
            if total and self._own_state:     # an owner (CompileProgress) shows its own bar
                self._bar.max = max(total, 1)
                self._bar.value = min(done, total)
                self._bar.layout.display = None
            else:
                self._bar.layout.display = "none"
            box.layout.display = None

