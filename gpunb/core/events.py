"""Compile and cache events: the core emits, views (logging, widgets, the CLI) subscribe.

The core never imports a view. A subscriber is any callable taking one event; one that raises
is logged and skipped, so a broken display never breaks a compile.
"""

from __future__ import annotations

import contextlib
import logging
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


def _log_slow_build(event: Event) -> None:
    if isinstance(event, SlowBuild):
        where = f" in {event.cache_dir}" if event.cache_dir else " in memory (the cache directory is not writable)"
        logger.warning(
            "gpunb: compiling %s has taken %.1f s so far. This is a one-time cost: the result is "
            "cached%s, and later runs load it in milliseconds. Precompile ahead of time with "
            "`python -m gpunb cache warm`; silence this with GPUNB_SLOW_COMPILE_SECONDS=off.",
            event.what, event.elapsed, where,
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
