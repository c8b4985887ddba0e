"""What every gpunb widget shares: a plain-text form and a lazily built ipywidgets view.

A view is a plain object, not an ipywidgets subclass (as tqdm.notebook wraps its HBox): its
``widget`` (stock ipywidgets) is built on first use, so creating a view, reading its text or
feeding it events never needs ipywidgets or a frontend. Displaying it gives the widget plus a
``text/plain`` form, which is what terminals, nbconvert and nbval see.
"""

from __future__ import annotations

import html
import threading


def escape(value) -> str:
    return html.escape(str(value))


# Drawn with CSS, not an emoji (an hourglass shows as a box without an emoji font). The
# keyframes live in the HTML itself: widgets carry no stylesheet.
_SPIN_CSS = "<style>@keyframes gpunb-spin{to{transform:rotate(360deg)}}</style>"


def spinner(color: str = "#1976d2") -> str:
    """HTML of a small spinning ring (busy), needing no font."""
    return (f'{_SPIN_CSS}<span class="gpunb-spinner" style="display:inline-block;width:9px;'
            f"height:9px;border:2px solid {color};border-right-color:transparent;border-radius:50%;"
            'vertical-align:-1px;animation:gpunb-spin 0.9s linear infinite"></span>')


def indeterminate_bar(width: str = "30%") -> str:
    """HTML of a bar with a moving stripe: busy, total unknown (a FloatProgress would sit empty)."""
    return ("<style>@keyframes gpunb-slide{from{margin-left:-30%}to{margin-left:100%}}</style>"
            f'<div class="gpunb-indeterminate" style="width:{width};min-width:120px;height:14px;'
            'margin:3px 8px 3px 0;background:#e3eef9;border-radius:2px;overflow:hidden">'
            '<div style="width:30%;height:100%;background:#2196f3;border-radius:2px;'
            'animation:gpunb-slide 1.3s ease-in-out infinite"></div></div>')


class View:
    """Base of gpunb's widgets: ``text()``, ``repr``, pretty printing and display."""

    def __init__(self):
        self._widget = None
        self._draw_lock = threading.RLock()

    # -- to override ----------------------------------------------------------------------------

    def text(self) -> str:
        raise NotImplementedError

    def _build(self):
        """Create and return the ipywidgets container (called once, under the draw lock)."""
        raise NotImplementedError

    # -- shared ---------------------------------------------------------------------------------

    def redraw(self) -> None:
        """Bring the built widget up to date with the state (views that change override it)."""

    @property
    def widget(self):
        """The ipywidgets container of this view (built on first access, then drawn once)."""
        if self._widget is None:
            with self._draw_lock:
                if self._widget is None:
                    self._widget = self._build()
                    self.redraw()
        return self._widget

    @property
    def built(self) -> bool:
        """Whether the ipywidgets view exists (it is built when first displayed)."""
        return self._widget is not None

    def __repr__(self) -> str:
        return self.text()

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(self.text())

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = self.widget._repr_mimebundle_()
        bundle = dict(bundle or {})
        bundle["text/plain"] = self.text()
        return bundle
