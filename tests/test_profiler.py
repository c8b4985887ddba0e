"""gpunb.profiler, CuPy's cupyx.profiler: benchmark's arguments, result and printout; time_range
as a context manager and a decorator; profile. GPU: real runs' host and GPU times."""

import math

import numpy as np
import pytest

import gpunb as gp
from gpunb import profiler

gpu = pytest.mark.gpu


def test_names_and_argument_errors():
    assert gp.profiler is profiler and set(profiler.__all__) == {"benchmark", "time_range", "profile"}
    for kw, what in ((dict(func=3), "callable"), (dict(args=[1]), "tuple"), (dict(kwargs=[]), "dict"),
                     (dict(n_repeat=0), "positive"), (dict(n_warmup=-1), "non-negative")):
        call = dict(func=abs, args=(1,))
        call.update(kw)
        with pytest.raises(ValueError, match=what):
            profiler.benchmark(call.pop("func"), **call)


def test_result_printout():
    r = profiler._PerfCaseResult("f", np.array([[1e-5, 2e-5], [3e-5, 4e-5]]), (0,))
    np.testing.assert_array_equal(r.cpu_times, [1e-5, 2e-5])
    assert r.gpu_times.shape == (1, 2)
    text = str(r)
    assert text.startswith("f ") and "CPU:    15.000 us" in text and "GPU-0:    35.000 us" in text
    assert "min:    10.000 / max:    20.000" in text and "GPU" not in r.to_str()


def test_time_range_forms():
    calls = []

    @profiler.time_range()
    def step(x):
        """Doubles."""
        calls.append(x)
        return 2 * x
    assert step(3) == 6 and calls == [3] and step.__name__ == "step" and step.__doc__ == "Doubles."
    with profiler.time_range("block", color_id=1):
        calls.append("inside")
    assert calls[-1] == "inside"
    with pytest.raises(ValueError, match="cannot be None"):
        with profiler.time_range():
            pass
    with pytest.raises(ValueError, match="Only either"):
        profiler.time_range("x", color_id=1, argb_color=0xFF00FF00)
    with pytest.raises(KeyError):            # an exception inside passes through, range popped
        with profiler.time_range("raises"):
            raise KeyError("k")


@gpu
def test_benchmark_on_the_gpu():
    x = gp.ones(1 << 20, np.float32)
    r = profiler.benchmark(gp.multiply, (x, 2.0), n_repeat=50, n_warmup=3)
    assert r.name == "multiply" and r.cpu_times.shape == (50,) and r.gpu_times.shape == (1, 50)
    assert (r.cpu_times > 0).all() and (r.gpu_times > 0).all()
    assert "GPU-0" in str(r)
    r = profiler.benchmark(lambda a: a.sum(), (x,), n_repeat=10**6, max_duration=0.05, name="sum")
    assert r.name == "sum" and 1 <= r.cpu_times.size < 10**6      # stopped by the duration
    assert math.isfinite(r.gpu_times.mean())
    with profiler.profile():
        y = x + 1
    assert float(y[0]) == 2.0


@pytest.fixture
def shell():
    from IPython.core.interactiveshell import InteractiveShell

    from gpunb.magics.timing import TimingMagics

    sh = InteractiveShell.instance()
    sh.register_magics(TimingMagics(sh))
    return sh


def test_gputimeit_usage_errors(shell):
    from IPython.core.error import UsageError

    for line, what in (("", "needs a statement"), ("-n x a", "integers"), ("-n 0 a", "positive"),
                       ("a +", "does not compile")):
        with pytest.raises(UsageError, match=what):
            shell.run_line_magic("gputimeit", line)
    with pytest.raises(UsageError, match="needs a statement"):
        shell.run_cell_magic("gputimeit", "", "   \n")


def test_gputimeit_runs_the_statement_in_the_namespace(shell, monkeypatch):
    seen = {}

    def fake_benchmark(func, n_repeat, n_warmup, max_duration, name):
        seen.update(n=n_repeat, w=n_warmup, t=max_duration, name=name)
        func()
        return profiler._PerfCaseResult(name, np.array([[1e-6], [2e-6]]), (0,))
    monkeypatch.setattr(profiler, "benchmark", fake_benchmark)
    shell.user_ns.update(calls=[], k=3)
    r = shell.run_line_magic("gputimeit", "-n 5 -w 0 -t 1.5 -o calls.append(k * 2)")
    assert shell.user_ns["calls"] == [6] and seen == dict(n=5, w=0, t=1.5, name="calls.append(k * 2)")
    assert isinstance(r, profiler._PerfCaseResult)
    assert shell.run_line_magic("gputimeit", "calls.append(1)") is None
    r = shell.run_cell_magic("gputimeit", "-o k = 10", "calls.append(k)\ncalls.append(-k)")
    assert shell.user_ns["calls"][-2:] == [10, -10] and seen["n"] == 10000


def test_extension_registers_gputimeit():
    from IPython.core.interactiveshell import InteractiveShell

    from gpunb.magics import load_ipython_extension, unload_ipython_extension

    sh = InteractiveShell.instance()
    load_ipython_extension(sh)
    try:
        assert "gputimeit" in sh.magics_manager.magics["line"]
        assert "gputimeit" in sh.magics_manager.magics["cell"]
    finally:
        unload_ipython_extension(sh)
    assert "gputimeit" not in sh.magics_manager.magics["line"]


@gpu
def test_gputimeit_on_the_gpu(shell):
    shell.user_ns["x"] = gp.ones(1 << 16, np.float32)
    r = shell.run_line_magic("gputimeit", "-n 20 -o x * 2")
    assert r.cpu_times.size == 20 and (r.gpu_times > 0).all()
