"""The cache status panel: ``%gpucache`` status as a widget with a refresh button."""

from __future__ import annotations

from .. import report
from ..core import events
from .base import View, escape

_CELL = 'style="text-align:left;padding:1px 8px"'


class CacheStatusPanel(View):
    """The kernel cache's directory, size and this process's counters, refreshable.

    Parameters
    ----------
    cache : KernelCache, optional
        The cache to show (default: :func:`gpunb.core.build.cache.kernel_cache` at each refresh, so a
        cache swapped with ``set_kernel_cache`` shows too).

    ``stats`` holds the cache's numbers of the last :meth:`refresh` (``KernelCache.stats()``:
    directory, entries, size) and ``counts`` the lookups and compiles of this process
    (:data:`gpunb.core.events.process_counts`, the counters ``%gpucache status`` shows too, in
    the same words); ``refreshes`` counts refreshes.
    """

    def __init__(self, cache=None):
        super().__init__()
        self.cache = cache
        self.refreshes = 0
        self.stats: dict = {}
        self.counts: dict = {}
        self.refresh()

    def _cache(self):
        if self.cache is not None:
            return self.cache
        from ..core.build.cache import kernel_cache

        return kernel_cache()

    def refresh(self, _button=None) -> dict:
        """Read the cache's stats again and redraw; returns them."""
        self.stats = self._cache().stats()
        self.counts = events.process_counts.as_dict()
        self.refreshes += 1
        if self._widget is not None:
            self._table.value = self.html()
        return self.stats

    def fields(self) -> list[tuple[str, str]]:
        s, c = self.stats, self.counts
        where = "memory only (the directory is not writable)" if s.get("memory_only") else "disk"
        return [
            ("directory", f"{s['directory']} ({where})"),
            ("entries", str(s["entries"])),
            ("size", f"{report.format_bytes(s['bytes'])} of {report.format_bytes(s['max_bytes'])} cap"),
            ("this process", events.counts_text(c)),
        ] + ([("corrupted", f"{s['corrupted']} entries dropped")] if s.get("corrupted") else [])

    def html(self) -> str:
        rows = "".join(f"<tr><th {_CELL}>{escape(k)}</th><td {_CELL}>{escape(v)}</td></tr>"
                       for k, v in self.fields())
        return (f'<table class="gpunb-table" style="border-collapse:collapse"><caption '
                f"style='text-align:left'><b>gpunb kernel cache</b></caption><tbody>{rows}"
                "</tbody></table>")

    def text(self) -> str:
        return "\n".join(f"{k}: {v}" for k, v in self.fields())

    def _build(self):
        import ipywidgets as w

        self._table = w.HTML(self.html())
        # width auto and flex-start: a VBox stretches its children to the output's full width
        self.button = w.Button(description="Refresh", icon="refresh", tooltip="read the cache again",
                               layout=w.Layout(width="auto", align_self="flex-start"))
        self.button.on_click(self.refresh)
        return w.VBox([self._table, self.button])
