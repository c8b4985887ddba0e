"""Precompiling: gpunb.warm compiles modules in parallel worker processes into the cache."""

import pytest

import gpunb
from gpunb.core import events
from gpunb.core.build.cached import compile_cached
from gpunb.core.build.warm import ModuleSpec
from gpunb.core.kernels.standard import warm

ARCH = "sm_90"


def _spec(i):
    return ModuleSpec(f"scale{i}", f'extern "C" __global__ void scale{i}(float* x) '
                                   f'{{ x[threadIdx.x] *= {i + 2}.0f; }}')


def test_parallel_warm_fills_the_cache_then_finds_everything_cached(cache_dir):
    seen = []
    with events.subscribed(seen.append):
        report = warm([_spec(i) for i in range(4)], ARCH, jobs=2, standard=False)
    assert sorted(report.compiled) == ["scale0", "scale1", "scale2", "scale3"]
    assert report.failed == {} and report.cached == []
    progress = [e for e in seen if isinstance(e, events.BatchProgress)]
    assert [e.done for e in progress] == [1, 2, 3, 4] and all(e.total == 4 for e in progress)
    assert isinstance(seen[0], events.BatchStarted) and isinstance(seen[-1], events.BatchFinished)
    # The workers wrote to the shared directory: this process now gets disk hits, no compile.
    entry = compile_cached(_spec(3).source, (), ARCH)
    stats = gpunb.kernel_cache().stats()
    assert stats["disk_hits"] == 1 and stats["compiles"] == 0 and stats["entries"] == 4
    assert entry.meta["kernels"] == ["scale3"]
    again = warm([_spec(i) for i in range(4)], ARCH, jobs=2, standard=False)
    assert sorted(again.cached) == sorted(report.compiled) and again.compiled == []


def test_a_failing_module_is_reported_and_the_others_compile(cache_dir):
    bad = ModuleSpec("bad", 'extern "C" __global__ void bad(float* x) { x[0] = y; }',
                     program_name="bad.cu")
    report = warm([_spec(0), bad, _spec(1)], ARCH, jobs=2, standard=False)
    assert sorted(report.compiled) == ["scale0", "scale1"]
    assert list(report.failed) == ["bad"]
    assert "bad.cu(1): error" in report.failed["bad"] and 'identifier "y" is undefined' in report.failed["bad"]


def test_standard_set_renders_the_runtime_kernels():
    """The standard array kernels are rendered by the runtime's own codegen: every name is a
    kernel the runtime would build, and none repeats."""
    from gpunb.core.kernels import standard

    names = [n for n, _ in standard.array_kernels()]
    assert len(names) == len(set(names)) > 100
    assert "add_afloat32_afloat32_to_float32_contiguous" in names
    assert "reduce_sum_afloat32_to_float32_o1r1" in names
    assert any(n.startswith("transpose") for n in names)
    assert {f"gpunb_join_w{w}" for w in (1, 2, 4, 8, 16)} <= set(names)


@pytest.mark.gpu
def test_after_warm_a_first_session_compiles_nothing(cache_dir):
    """With the standard set warm, the everyday array operations are all cache hits."""
    import numpy as np

    gpunb.warm(jobs=4)
    compiled = []
    with events.subscribed(lambda ev: compiled.append(ev.name) if isinstance(ev, events.CompileStarted) else None):
        x = gpunb.asarray(np.random.default_rng(0).standard_normal((300, 200)).astype(np.float32))
        y = (x * 2.0 + 1.0) / x.max()
        s = gpunb.sqrt(gpunb.abs(y)).sum(axis=0)
        m = x.mean(), x.std(), y.argmax(), gpunb.ascontiguousarray(x.T), x.astype(np.float64).sum()
        joined = gpunb.concatenate([x[:3], x[7:9], x[20:21]])          # one join launch
        gpunb.synchronize()
    assert s.shape == (200,) and m[3].shape == (200, 300) and joined.shape == (6, 200)
    assert compiled == []
