"""Plain state behind the widgets: what the kernel cache and the compiler did during one cell.

:class:`ActivityState` consumes :mod:`gpunb.core.events` events and knows nothing of
ipywidgets, so it is tested (and used in terminals) without a frontend. Its text forms are
single lines that start with ``gpunb:``; in a notebook compared by nbval they are masked
whole by a sanitizer entry such as ``regex: gpunb: [^\\n]*`` (their counts and times differ
between a cold and a warm cache).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from ..core import events

# Event types that start a cell's display (everything the build emits).
ACTIVITY = (events.CacheHit, events.CacheMiss, events.CompileStarted, events.CompileFinished,
            events.SlowBuild, events.BatchStarted, events.BatchProgress, events.BatchFinished)


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}{'es' if word.endswith('s') else 's'}"


def seconds_text(s: float) -> str:
    """``0.42 s``, ``3.1 s``, ``75 s``: short, and matched by the usual timing sanitizers."""
    return f"{s:.2f} s" if s < 1 else (f"{s:.1f} s" if s < 10 else f"{s:.0f} s")


@dataclass
class BatchState:
    """One ``Batch*`` sequence (``warm``): totals known from the start."""

    what: str
    total: int
    started: float
    done: int = 0
    failed: int = 0
    cached: int = 0
    current: str | None = None
    seconds: float | None = None        # set by BatchFinished

    @property
    def active(self) -> bool:
        return self.seconds is None


class ActivityState:
    """Counts and names from the events of one cell (or any stretch of time).

    Feed it with :meth:`apply` (thread-safe). Read ``phase``, :meth:`progress`,
    :meth:`current` and :meth:`text`.

    Attributes
    ----------
    memory_hits, disk_hits, misses : int
        Cache lookups.
    compiled : list of (name, seconds)
        Successful compiles, in finishing order.
    failed : list of (name, error log)
        Compiles NVRTC rejected.
    in_flight : dict
        ``key -> (name, start time)`` of compiles started and not finished.
    batch : BatchState or None
        The latest ``Batch*`` sequence.
    slow : SlowBuild or None
        The latest slow-build event (cleared when nothing is building any more).
    collapsed : bool
        Set by :meth:`collapse` when the cell ended.
    """

    def __init__(self):
        self._lock = threading.RLock()
        self.memory_hits = 0
        self.disk_hits = 0
        self.misses = 0
        self.compiled: list[tuple[str, float]] = []
        self.failed: list[tuple[str, str]] = []
        self.in_flight: dict[str, tuple[str, float]] = {}
        self.batch: BatchState | None = None
        self.slow: events.SlowBuild | None = None
        self.busy_since: float | None = None    # start of the current busy stretch
        self.intervals: list[tuple[float, float]] = []   # (start, end) of finished compiles
        self.last_name: str | None = None       # the kernel compiled most recently
        self.collapsed = False
        self.events = 0

    # -- input --------------------------------------------------------------------------------

    def apply(self, event) -> bool:
        """Take one event into account. Returns True when the change deserves an immediate
        redraw (a new phase, an error, a slow build); counter bumps return False."""
        with self._lock:
            before = self.phase
            self.events += 1
            kind = type(event)
            urgent = False
            if kind is events.CacheHit:
                if event.level == "memory":
                    self.memory_hits += 1
                else:
                    self.disk_hits += 1
            elif kind is events.CacheMiss:
                self.misses += 1
            elif kind is events.CompileStarted:
                self.in_flight[event.key] = (event.name, event.time)
                self.last_name = event.name
            elif kind is events.CompileFinished:
                started = self.in_flight.pop(event.key, (None, event.time - event.seconds))[1]
                self.intervals.append((min(started, event.time), event.time))
                self.last_name = event.name
                if event.error is None:
                    self.compiled.append((event.name, event.seconds))
                else:
                    self.failed.append((event.name, event.error))
                    urgent = True
            elif kind is events.SlowBuild:
                self.slow = event
                urgent = True
            elif kind is events.BatchStarted:
                self.batch = BatchState(event.what, event.total, event.time)
            elif kind is events.BatchProgress:
                b = self.batch
                if b is None or b.what != event.what:
                    b = self.batch = BatchState(event.what, event.total, event.time)
                b.done, b.total, b.current = event.done, event.total, event.name
                b.cached += event.cached
                b.failed += not event.ok
                urgent = not event.ok
            elif kind is events.BatchFinished:
                b = self.batch
                if b is None or b.what != event.what:
                    b = self.batch = BatchState(event.what, event.total, event.time - event.seconds)
                b.done, b.total, b.failed, b.seconds = event.done, event.total, event.failed, event.seconds
                b.current = None
            else:
                self.events -= 1
                return False
            if not self.busy:
                self.slow = None
                self.busy_since = None
            elif self.busy_since is None:
                self.busy_since = event.time
            return urgent or self.phase != before

    def collapse(self) -> None:
        """Mark the end of the cell: the display becomes its one-line summary."""
        with self._lock:
            self.collapsed = True

    # -- derived --------------------------------------------------------------------------------

    @property
    def hits(self) -> int:
        return self.memory_hits + self.disk_hits

    @property
    def busy(self) -> bool:
        """Something is compiling now (a compile in flight or a batch not finished)."""
        return bool(self.in_flight) or (self.batch is not None and self.batch.active)

    @property
    def phase(self) -> str:
        """``'idle'`` (no event yet), ``'hits'`` (cache hits only), ``'running'``,
        ``'error'`` (finished, something failed) or ``'done'``."""
        if self.busy:
            return "running"
        if self.failed or (self.batch is not None and self.batch.failed):
            return "error"
        if self.compiled or self.misses or self.batch is not None:
            return "done"
        return "hits" if self.hits else "idle"

    def progress(self) -> tuple[int, int | None]:
        """``(done, total)`` kernels; total is None when unknown (single compiles)."""
        with self._lock:
            if self.batch is not None:
                return self.batch.done, self.batch.total
            return len(self.compiled) + len(self.failed), None

    def current(self) -> str | None:
        """The name of the kernel (or module) being compiled, if any."""
        with self._lock:
            if self.in_flight:
                return next(reversed(self.in_flight.values()))[0]
            if self.batch is not None and self.batch.active:
                return self.batch.current
            return None

    def compile_seconds(self) -> float:
        """Seconds spent compiling: the union of the finished compiles' intervals, so compiles
        in parallel threads count once and the cell's other work between compiles not at all."""
        with self._lock:
            total, end = 0.0, float("-inf")
            for a, b in sorted(self.intervals):
                if b > end:
                    total += b - max(a, end)
                    end = b
            return total

    def elapsed(self, now: float | None = None) -> float:
        """While busy: seconds since the current build began; after: the compile seconds (or a
        batch's own duration)."""
        with self._lock:
            if self.busy and self.busy_since is not None:
                return max(0.0, (time.time() if now is None else now) - self.busy_since)
            if self.batch is not None and self.batch.seconds is not None:
                return self.batch.seconds
            return self.compile_seconds()

    # -- text -----------------------------------------------------------------------------------

    def _compiled_text(self) -> str:
        # A compile builds one module, which may hold many kernels (a %%cuda cell): name a
        # single one (its name says how many kernels it holds), count several.
        if len(self.compiled) == 1:
            return self.compiled[0][0]
        return plural(len(self.compiled), "module")

    def _hits_text(self) -> str:
        return plural(self.hits, "cache hit")

    def status(self, now: float | None = None) -> str:
        """The running line, without the ``gpunb:`` prefix."""
        with self._lock:
            done, total = self.progress()
            name = self.current()
            elapsed = seconds_text(self.elapsed(now))
            if self.batch is not None and self.batch.active:
                b = self.batch
                now_part = f", now {name}" if name else ""
                line = f"building {b.what}: {done} of {b.total} done{now_part}, {elapsed}"
            else:      # no total known: say what and how long, not "1 of ?"
                line = (f"compiling {name or 'kernels'} ({elapsed} so far"
                        + (f", {plural(done, 'module')} done)" if done else ")"))
            if self.failed:
                line += f", {len(self.failed)} failed"
            if self.hits:
                line += f", {self._hits_text()}"
            return line

    def summary(self) -> str:
        """The finished line, without the ``gpunb:`` prefix."""
        with self._lock:
            hits = f", {self._hits_text()}" if self.hits else ""
            b = self.batch
            if b is not None and not b.active:
                compiled = b.done - b.cached - b.failed
                parts = [f"{compiled} compiled", f"{b.cached} already cached"]
                if b.failed:
                    parts.append(f"{b.failed} failed")
                return (f"built {b.what} in {seconds_text(b.seconds)} ({', '.join(parts)})"
                        f"{hits}")
            elapsed = seconds_text(self.elapsed())
            if self.failed:
                names = ", ".join(dict.fromkeys(n for n, _ in self.failed))
                ok = f"; compiled {self._compiled_text()}" if self.compiled else ""
                return f"failed to compile {names} after {elapsed}{ok}{hits}"
            if self.compiled:
                return f"compiled {self._compiled_text()} in {elapsed}{hits}"
            if self.misses:
                return f"{plural(self.misses, 'cache miss')}{hits}"
            return self._hits_text() if self.hits else "no kernel activity"

    def text(self, now: float | None = None) -> str:
        """One line: the status while running, else the summary."""
        with self._lock:
            body = self.status(now) if self.busy else self.summary()
        return f"gpunb: {body}"

    def __repr__(self) -> str:
        return f"<ActivityState {self.phase}: {self.text()}>"
