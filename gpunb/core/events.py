"""Compile and cache events: the core emits, views (logging, widgets, the CLI) subscribe.

The core never imports a view. A subscriber is any callable taking one event; one that raises
is logged and skipped, so a broken display never breaks a compile.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

logger = logging.getLogger("gpunb")


@dataclass(frozen=True)
class Event:
    time: float = field(default_factory=time.time, kw_only=True)


@dataclass(frozen=True)
class CompileStarted(Event):
    key: str
    name: str
    arch: str


@dataclass(frozen=True)
class CompileFinished(Event):
    key: str
    name: str
    arch: str
    seconds: float
    error: str | None = None


@dataclass(frozen=True)
class CacheHit(Event):
    key: str
    name: str
    level: str  # "memory" or "disk"


@dataclass(frozen=True)
class CacheMiss(Event):
    key: str
    name: str


@dataclass(frozen=True)
class SlowBuild(Event):
    what: str
    elapsed: float
    cache_dir: Path | None


@dataclass(frozen=True)
class BatchStarted(Event):
    what: str
    total: int


@dataclass(frozen=True)
class BatchProgress(Event):
    what: str
    done: int
    total: int
    name: str
    ok: bool
    cached: bool


@dataclass(frozen=True)
class BatchFinished(Event):
    what: str
    done: int
    total: int
    failed: int
    seconds: float


_subscribers: list = []
_lock = threading.Lock()


def subscribe(callback):
    """Call ``callback(event)`` for every event from now on; returns ``callback``."""
    with _lock:
        if callback not in _subscribers:
            _subscribers.append(callback)
    return callback


def unsubscribe(callback) -> None:
    """Stop calling ``callback``; unknown callbacks are ignored."""
    with _lock:
        if callback in _subscribers:
            _subscribers.remove(callback)


@contextlib.contextmanager
def subscribed(callback):
    """Context manager form of :func:`subscribe`."""
    subscribe(callback)
    try:
        yield callback
    finally:
        unsubscribe(callback)


def emit(event: Event) -> None:
    for callback in tuple(_subscribers):
        try:
            callback(event)
        except Exception:  # a view's bug must not break the build; say so in the log
            logger.exception("gpunb event subscriber %r failed on %s", callback, type(event).__name__)


def precompile_advice(what: str) -> str:
    """What actually helps a long build named ``what`` next time, in one sentence.

    A ``%%cuda`` cell's module is cached under the cell's own source: running the cell again
    loads it, and ``gpunb cache warm`` (which builds gpunb's standard kernels) would not help.
    A batch (``warm`` itself) is the ahead-of-time build. Anything else is gpunb's own kernels,
    which ``warm`` precompiles.
    """
    if what.startswith("%%cuda"):
        return "Running this cell again, now or in a later session, loads it in milliseconds."
    if _BATCH_RE.match(what):
        return ("This is the ahead-of-time build: later sessions load these kernels in "
                "milliseconds.")
    return ("Later runs load it in milliseconds. To build gpunb's standard kernels ahead of time, "
            "run `%gpucache warm` (in a terminal: `python -m gpunb cache warm`).")


_BATCH_RE = re.compile(r"^\d+ modules? for ")


def _log_slow_build(event: Event) -> None:
    if isinstance(event, SlowBuild):
        where = f" in {event.cache_dir}" if event.cache_dir else " in memory (the cache directory is not writable)"
        logger.warning(
            "gpunb: compiling %s has taken %.1f s so far. This is a one-time cost: the result is "
            "cached%s. %s Silence this with GPUNB_SLOW_COMPILE_SECONDS=off.",
            event.what, event.elapsed, where, precompile_advice(event.what),
        )


subscribe(_log_slow_build)

# The outermost build scope of a thread owns the slow-build timer, so a batch of many kernels
# warns once, naming the batch, rather than once per kernel.
_scope = threading.local()


@contextlib.contextmanager
def build_scope(what: str, threshold: float | None, cache_dir: Path | None):
    """Emit one :class:`SlowBuild` if the body runs longer than ``threshold`` seconds."""
    if getattr(_scope, "active", False) or threshold is None:
        yield
        return
    _scope.active = True
    start = time.perf_counter()
    timer = threading.Timer(
        threshold, lambda: emit(SlowBuild(what, time.perf_counter() - start, cache_dir)))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        _scope.active = False


# -- one set of counters, from the events --------------------------------------------------------

class Counts:
    """Cache lookups and compiles counted from the events (a subscriber), from ``started`` on.

    One set of counters, the same wherever gpunb shows them (``%gpucache status``, the cache
    panel): ``hits`` (``memory_hits`` + ``disk_hits``: lookups the cache answered), ``misses``
    (lookups it could not answer: each one is compiled), ``compiled`` (compiles NVRTC
    finished, with ``compile_seconds``) and ``failed`` (compiles NVRTC rejected), so that
    ``misses == compiled + failed`` once nothing is compiling. ``%gpucache warm``'s worker
    processes count here too: their events are forwarded to this process.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        with self._lock:
            self.started = time.time()
            self.memory_hits = self.disk_hits = self.misses = self.compiled = self.failed = 0
            self.compile_seconds = 0.0

    def __call__(self, event) -> None:
        kind = type(event)
        if kind is CacheHit:
            with self._lock:
                if event.level == "memory":
                    self.memory_hits += 1
                else:
                    self.disk_hits += 1
        elif kind is CacheMiss:
            with self._lock:
                self.misses += 1
        elif kind is CompileFinished:
            with self._lock:
                if event.error is None:
                    self.compiled += 1
                    self.compile_seconds += event.seconds
                else:
                    self.failed += 1

    def as_dict(self) -> dict:
        """``memory_hits``, ``disk_hits``, ``hits``, ``misses``, ``compiled``, ``failed``,
        ``compile_seconds``, ``started``, ``seconds`` (since ``started``)."""
        with self._lock:
            return dict(memory_hits=self.memory_hits, disk_hits=self.disk_hits,
                        hits=self.memory_hits + self.disk_hits, misses=self.misses,
                        compiled=self.compiled, failed=self.failed,
                        compile_seconds=self.compile_seconds, started=self.started,
                        seconds=time.time() - self.started)


def counts_text(c: dict) -> str:
    """One line of :meth:`Counts.as_dict` counters, in the words every view uses."""
    return (f"{c['hits']} hits ({c['memory_hits']} memory, {c['disk_hits']} disk), "
            f"{c['misses']} misses: {c['compiled']} compiled in {c['compile_seconds']:.2f} s, "
            f"{c['failed']} failed")


process_counts = Counts()     # since gpunb was imported: what %gpucache status and the panel show
subscribe(process_counts)
