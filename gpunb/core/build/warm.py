"""Precompile modules into the kernel cache, in parallel, with progress events.

Two NVRTC compiles in two threads take as long as in series (measured on NVRTC 13.5), so the
work goes to worker processes, started with ``spawn`` so that a parent holding a CUDA context
(a notebook) stays safe. Entries already in the cache are skipped without starting a worker.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from .. import events
from ..errors import CompileError
from .cache import kernel_cache
from .cached import cache_key, compile_cached, manifest_holds
from .compiler import check_options, normalize_arch, nvrtc_options


@dataclass(frozen=True)
class ModuleSpec:
    """A module to precompile: a name for progress displays, the source and its options."""

    name: str
    source: str
    options: tuple[str, ...] = ()
    name_expressions: tuple[str, ...] = ()
    program_name: str = "kernel.cu"   # what NVRTC's log lines start with

    def __post_init__(self):
        object.__setattr__(self, "options", check_options(self.options))
        object.__setattr__(self, "name_expressions", tuple(self.name_expressions))

    @classmethod
    def from_file(cls, path, options=()) -> "ModuleSpec":
        p = Path(path)
        try:
            source = p.read_bytes().decode()
        except UnicodeDecodeError as e:
            raise ValueError(f"{p}: not a CUDA C++ source file (not UTF-8 text: byte "
                             f"{e.object[e.start]:#04x} at offset {e.start})") from None
        return cls(p.name, source, tuple(options) + (f"-I{p.parent}",), program_name=p.name)


@dataclass
class WarmReport:
    arch: str
    total: int = 0
    compiled: list[str] = field(default_factory=list)
    cached: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    compile_seconds: float = 0.0

    def as_dict(self) -> dict:
        return dict(arch=self.arch, total=self.total, compiled=self.compiled, cached=self.cached,
                    failed=self.failed, seconds=self.seconds, compile_seconds=self.compile_seconds)


def _compile_one(spec: ModuleSpec, arch: str, cache_dir: str, max_bytes: int, forward: bool = False):
    from .cache import KernelCache

    cache = KernelCache(cache_dir, max_bytes)
    seen: list = []
    if forward:
        # A worker process: its lookups and compiles are forwarded to the parent (progress,
        # counters), and the parent's one slow-build notice covers the whole batch, so no
        # worker logs its own (it would land in the notebook cell as stderr).
        events.unsubscribe(events._log_slow_build)
        events.subscribe(seen.append)
    try:
        entry = compile_cached(spec.source, spec.options, arch, name_expressions=spec.name_expressions,
                               display_name=spec.name, cache=cache, name=spec.program_name)
    except CompileError as e:
        return spec.name, False, 0.0, str(e), _forwardable(seen)
    finally:
        if forward:
            events.unsubscribe(seen.append)
    return spec.name, True, float(entry.meta.get("compile_seconds", 0.0)), None, _forwardable(seen)


def _forwardable(seen: list) -> list:
    return [e for e in seen if isinstance(e, (events.CacheHit, events.CacheMiss, events.CompileStarted,
                                              events.CompileFinished))]


def warm_modules(specs, arch=None, *, jobs: int | None = None) -> WarmReport:
    """Compile ``specs`` (ModuleSpecs) into the kernel cache for ``arch`` (default: the
    current device's), in parallel worker processes; :func:`gpunb.warm` adds gpunb's
    standard kernels (:mod:`gpunb.core.kernels.standard`).

    Emits BatchStarted, one BatchProgress per module and BatchFinished. A module that fails to
    compile is reported in ``WarmReport.failed``; the others still compile.
    """
    from ..runtime import driver

    arch = normalize_arch(arch) if arch is not None else driver.current_arch()
    specs = list(specs)
    cache = kernel_cache()
    report = WarmReport(arch, total=len(specs))
    start = time.perf_counter()
    what = f"{len(specs)} module{'' if len(specs) == 1 else 's'} for {arch}"
    events.emit(events.BatchStarted(what, len(specs)))
    todo = []
    for spec in specs:
        final, _ = nvrtc_options(spec.options, arch)
        key = cache_key(spec.source, final, arch, spec.name_expressions, name=spec.program_name)
        found = cache.get(key)
        if found is not None and manifest_holds(found.meta.get("manifest") or {}):
            report.cached.append(spec.name)
            events.emit(events.BatchProgress(what, len(report.cached), len(specs), spec.name, True, True))
        else:
            todo.append(spec)
    done = len(report.cached)

    def record(name, ok, seconds, error, forwarded=()):
        nonlocal done
        done += 1
        for ev in forwarded:       # a worker's events, as if this process had compiled
            events.emit(ev)
        if ok:
            report.compiled.append(name)
            report.compile_seconds += seconds
        else:
            report.failed[name] = error
        events.emit(events.BatchProgress(what, done, len(specs), name, ok, False))

    jobs = max(1, min(jobs or os.cpu_count() or 1, len(todo))) if todo else 0
    # one slow-build notice for the whole batch, from this process (workers log none)
    from ..config import Config

    with events.build_scope(what, Config.from_env().slow_compile_seconds,
                            None if cache.memory_only else cache.directory):
        if jobs == 1:
            for spec in todo:
                record(*_compile_one(spec, arch, str(cache.directory), cache.max_bytes)[:4])
        elif jobs > 1:
            import multiprocessing

            ctx = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(jobs, mp_context=ctx) as pool:
                futures = [pool.submit(_compile_one, s, arch, str(cache.directory), cache.max_bytes,
                                       True) for s in todo]
                for f in as_completed(futures):
                    record(*f.result())
    report.seconds = time.perf_counter() - start
    events.emit(events.BatchFinished(what, done, len(specs), len(report.failed), report.seconds))
    return report
