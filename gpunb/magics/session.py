"""A session recorder: what the kernel cache did since ``%load_ext gpunb``.

The recorder subscribes to :mod:`gpunb.core.events` and only counts and appends, so a loop of
a thousand cache hits costs a few microseconds each; all formatting happens later, when
``%gpucache`` asks. The hit/miss timeline is kept at a bounded size: it holds at most
``max_samples`` points, and when it fills, every other point goes and the time resolution
doubles, so a session of any length takes constant memory.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from ..core import events


@dataclass(frozen=True)
class CompileRecord:
    """One compile seen in this session (``error`` holds the NVRTC log of a failed one)."""

    time: float
    key: str
    name: str
    arch: str
    seconds: float
    error: str | None = None


class SessionRecorder:
    """Counts cache hits and misses and records compiles, from the moment it is created.

    Parameters
    ----------
    max_samples : int
        Most points kept in the cumulative hit/miss timeline (see :meth:`timeline`).
    start : bool
        Subscribe to gpunb's events now (default); otherwise call :meth:`start`.
    """

    def __init__(self, max_samples: int = 2048, *, start: bool = True):
        if max_samples < 4:
            raise ValueError(f"max_samples must be at least 4, got {max_samples!r}")
        self.max_samples = max_samples
        self.started = time.time()
        self.memory_hits = 0
        self.disk_hits = 0
        self.misses = 0
        self.compiles: list[CompileRecord] = []
        self.in_flight: dict[str, float] = {}     # key -> start time of compiles not finished
        self._samples: list[tuple[float, int, int]] = [(self.started, 0, 0)]
        self._bucket_start = self.started
        self._resolution = 0.001                  # seconds; doubles whenever the timeline fills
        self._lock = threading.Lock()
        self._subscribed = False
        if start:
            self.start()

    # -- subscription ------------------------------------------------------------------------

    def start(self) -> None:
        events.subscribe(self)
        self._subscribed = True

    def close(self) -> None:
        """Stop recording (what was recorded stays readable). Safe to call twice."""
        events.unsubscribe(self)
        self._subscribed = False

    @property
    def recording(self) -> bool:
        return self._subscribed

    # -- the event callback: counting and appending only --------------------------------------

    def __call__(self, ev) -> None:
        kind = type(ev)
        if kind is events.CacheHit:
            with self._lock:
                if ev.level == "memory":
                    self.memory_hits += 1
                else:
                    self.disk_hits += 1
                self._sample(ev.time)
        elif kind is events.CacheMiss:
            with self._lock:
                self.misses += 1
                self._sample(ev.time)
        elif kind is events.CompileStarted:
            self.in_flight[ev.key] = ev.time
        elif kind is events.CompileFinished:
            self.in_flight.pop(ev.key, None)
            self.compiles.append(CompileRecord(ev.time, ev.key, ev.name, ev.arch, ev.seconds, ev.error))

    def _sample(self, t: float) -> None:
        # Events inside one bucket update its last point in place: one point per bucket (the
        # origin point, at index 0, is never overwritten).
        point = (t, self.memory_hits + self.disk_hits, self.misses)
        if t - self._bucket_start < self._resolution and len(self._samples) > 1:
            self._samples[-1] = point
            return
        self._bucket_start = t
        self._samples.append(point)
        if len(self._samples) > self.max_samples:
            last = self._samples[-1]
            self._samples = self._samples[::2]
            if self._samples[-1] is not last:
                self._samples.append(last)
            self._resolution *= 2

    # -- reading -----------------------------------------------------------------------------

    @property
    def hits(self) -> int:
        return self.memory_hits + self.disk_hits

    def summary(self) -> dict:
        """Counters of this session: ``memory_hits``, ``disk_hits``, ``hits``, ``misses``,
        ``compiles``, ``failed_compiles``, ``compile_seconds`` (of the successful compiles, as
        :class:`gpunb.core.events.Counts`), ``started``, ``seconds``."""
        done = list(self.compiles)
        return dict(memory_hits=self.memory_hits, disk_hits=self.disk_hits, hits=self.hits,
                    misses=self.misses, compiles=sum(1 for c in done if c.error is None),
                    failed_compiles=sum(1 for c in done if c.error is not None),
                    compile_seconds=sum(c.seconds for c in done if c.error is None),
                    started=self.started,
                    seconds=time.time() - self.started)

    def timeline(self) -> list[tuple[float, int, int]]:
        """``(seconds since the session started, cumulative hits, cumulative misses)`` points,
        oldest first, starting at ``(0, 0, 0)``."""
        with self._lock:
            samples = list(self._samples)
        return [(t - self.started, h, m) for t, h, m in samples]

    def compile_seconds_by_name(self) -> dict[str, float]:
        """Total seconds of successful compiles per build name, in first-compiled order."""
        out: dict[str, float] = {}
        for c in list(self.compiles):
            if c.error is None:
                out[c.name] = out.get(c.name, 0.0) + c.seconds
        return out

    def __repr__(self) -> str:
        s = self.summary()
        return (f"<gpunb SessionRecorder: {s['hits']} hits, {s['misses']} misses, "
                f"{s['compiles']} compiles{'' if self.recording else ' (closed)'}>")
