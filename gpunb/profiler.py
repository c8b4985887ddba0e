"""Timing and profiling, CuPy's ``cupyx.profiler``: ``benchmark`` (a call's host and GPU time
over many runs), ``time_range`` (an NVTX range, as a context manager or decorator) and
``profile`` (the CUDA profiler's collection on inside a block).

Code written for CuPy changes one import: ``from cupyx.profiler import benchmark`` becomes
``from gpunb.profiler import benchmark``; the call and its printed result are the same.
"""

from __future__ import annotations

import contextlib
import functools
import math
import time

import numpy as np

__all__ = ["benchmark", "time_range", "profile"]


class _PerfCaseResult:
    """What :func:`benchmark` measured: ``cpu_times`` (seconds, one per run) and
    ``gpu_times`` (seconds, one row per device, one column per run); printing it gives the
    means, standard deviations, minimums and maximums in microseconds, as CuPy prints them."""

    def __init__(self, name: str, ts: np.ndarray, devices: tuple):
        self.name = name
        self._ts = ts
        self._devices = devices

    @property
    def cpu_times(self) -> np.ndarray:
        return self._ts[0]

    @property
    def gpu_times(self) -> np.ndarray:
        return self._ts[1:]

    @staticmethod
    def _to_str_per_item(device_name: str, t: np.ndarray) -> str:
        t_us = t * 1e6
        s = f"    {device_name}: {t_us.mean():9.3f} us"
        if t.size > 1:
            s += f"   +/- {t_us.std():6.3f} (min: {t_us.min():9.3f} / max: {t_us.max():9.3f}) us"
        return s

    def to_str(self, show_gpu: bool = False) -> str:
        results = [self._to_str_per_item("CPU", self._ts[0])]
        if show_gpu:
            for i, d in enumerate(self._devices):
                results.append(self._to_str_per_item(f"GPU-{d}", self._ts[1 + i]))
        return f"{self.name:<20s}:" + " ".join(results)

    def __str__(self) -> str:
        return self.to_str(show_gpu=True)

    __repr__ = __str__


def benchmark(func, args=(), kwargs={}, n_repeat=10000, *, name=None, n_warmup=10,  # noqa: B006 (CuPy's signature)
              max_duration=math.inf, devices=None):
    """Time ``func(*args, **kwargs)``: its host time and the GPU time of the work it queues
    (``cupyx.profiler.benchmark``).

    Parameters
    ----------
    func : callable
    args : tuple, optional
    kwargs : dict, optional
    n_repeat : int, optional
        Runs timed (after ``n_warmup`` untimed ones).
    name : str, optional
        The label printed (default: the function's name).
    n_warmup : int, optional
    max_duration : float, optional
        Stop the timed runs once this many seconds have passed.
    devices : tuple of ints, optional
        Devices whose GPU time is recorded (default: the current device).

    Returns
    -------
    result
        ``cpu_times`` and ``gpu_times`` arrays in seconds; ``print(result)`` gives the summary.

    Notes
    -----
    Each run records an event on each device's current stream before and after the call and
    waits for the last, so the GPU time is that of the work the call queued there and the
    runs do not overlap.
    """
    from .core.runtime import devices as _devices
    from .core.runtime.stream import Event, get_current_stream

    if not callable(func):
        raise ValueError("`func` should be a callable object.")
    if not isinstance(args, tuple):
        raise ValueError("`args` should be of tuple type.")
    if not isinstance(kwargs, dict):
        raise ValueError("`kwargs` should be of dict type.")
    if not isinstance(n_repeat, int) or n_repeat < 1:
        raise ValueError("`n_repeat` should be a positive integer.")
    if not isinstance(n_warmup, int) or n_warmup < 0:
        raise ValueError("`n_warmup` should be a non-negative integer.")
    name = func.__name__ if name is None else str(name)
    devices = (_devices.current(),) if devices is None else tuple(int(d) for d in devices)

    here = _devices.current()
    events = []
    for d in devices:
        _devices.use(d)
        events.append((d, Event(), Event(), get_current_stream()))
    _devices.use(here)

    def record(which: int) -> None:
        for d, *pair, stream in events:
            if d != here:
                _devices.use(d)
            pair[which].record(stream)
        if len(events) > 1 or events[0][0] != here:
            _devices.use(here)

    for _ in range(n_warmup):
        func(*args, **kwargs)
    cpu, gpu = [], [[] for _ in devices]
    start_all = time.perf_counter()
    for _ in range(n_repeat):
        record(0)
        t0 = time.perf_counter()
        func(*args, **kwargs)
        t1 = time.perf_counter()
        record(1)
        for i, (_d, s, e, _stream) in enumerate(events):
            e.synchronize()
            gpu[i].append((e - s) / 1e3)          # milliseconds
        cpu.append(t1 - t0)
        if time.perf_counter() - start_all > max_duration:
            break
    ts = np.asarray([cpu] + gpu, dtype=np.float64)
    return _PerfCaseResult(name, ts, devices)


@contextlib.contextmanager
def _range(message: str, color_id: int | None, argb_color: int | None, sync: bool):
    from .cuda import nvtx

    if sync:
        from .core.runtime import driver
        driver.synchronize()
    if argb_color is not None:
        nvtx.RangePushC(message, argb_color)
    else:
        nvtx.RangePush(message, -1 if color_id is None else color_id)
    try:
        yield
    finally:
        if sync:
            from .core.runtime import driver
            driver.synchronize()
        nvtx.RangePop()


class time_range:
    """An NVTX range on Nsight Systems' timeline around a block or each call of a function
    (``cupyx.profiler.time_range``): ``with time_range("step"):`` or ``@time_range()``
    (the function's name by default). ``sync=True`` waits for the GPU at both ends."""

    def __init__(self, message=None, color_id=None, argb_color=None, *, sync=False):
        if color_id is not None and argb_color is not None:
            raise ValueError("Only either color_id or argb_color can be specified")
        self.message, self.color_id, self.argb_color, self.sync = message, color_id, argb_color, sync
        self._cm = None

    def __enter__(self):
        if self.message is None:
            raise ValueError("when used as a context manager, the message argument cannot be None")
        self._cm = _range(self.message, self.color_id, self.argb_color, self.sync)
        self._cm.__enter__()
        return self

    def __exit__(self, *exc):
        cm, self._cm = self._cm, None
        return cm.__exit__(*exc)

    def __call__(self, func):
        message = func.__name__ if self.message is None else self.message

        @functools.wraps(func)
        def inner(*args, **kwargs):
            with _range(message, self.color_id, self.argb_color, self.sync):
                return func(*args, **kwargs)
        return inner


@contextlib.contextmanager
def profile():
    """The CUDA profiler's collection on inside the block (``cupyx.profiler.profile``, for
    Nsight Systems' ``--capture-range=cudaProfilerApi``)."""
    from .core.runtime import devices as _devices

    _devices.profiler(True)
    try:
        yield
    finally:
        _devices.profiler(False)
