"""Precompiling: gpunb.warm compiles modules in parallel worker processes into the cache."""

import gpunb
from gpunb.core import events
from gpunb.core.build import compile_cached
from gpunb.core.warm import ModuleSpec, warm

ARCH = "sm_90"


def _spec(i):
    return ModuleSpec(f"scale{i}", f'extern "C" __global__ void scale{i}(float* x) '
                                   f'{{ x[threadIdx.x] *= {i + 2}.0f; }}')


def test_parallel_warm_fills_the_cache_then_finds_everything_cached(cache_dir):
    seen = []
    with events.subscribed(seen.append):
        report = warm([_spec(i) for i in range(4)], ARCH, jobs=2)
    assert sorted(report.compiled) == ["demo", "scale0", "scale1", "scale2", "scale3"]
    assert report.failed == {} and report.cached == []
    progress = [e for e in seen if isinstance(e, events.BatchProgress)]
    assert [e.done for e in progress] == [1, 2, 3, 4, 5] and all(e.total == 5 for e in progress)
    assert isinstance(seen[0], events.BatchStarted) and isinstance(seen[-1], events.BatchFinished)
    # The workers wrote to the shared directory: this process now gets disk hits, no compile.
    entry = compile_cached(_spec(3).source, (), ARCH)
    stats = gpunb.kernel_cache().stats()
    assert stats["disk_hits"] == 1 and stats["compiles"] == 0 and stats["entries"] == 5
    assert entry.meta["kernels"] == ["scale3"]
    again = warm([_spec(i) for i in range(4)], ARCH, jobs=2)
    assert sorted(again.cached) == sorted(report.compiled) and again.compiled == []


def test_a_failing_module_is_reported_and_the_others_compile(cache_dir):
    bad = ModuleSpec("bad", 'extern "C" __global__ void bad(float* x) { x[0] = y; }',
                     program_name="bad.cu")
    report = warm([_spec(0), bad, _spec(1)], ARCH, jobs=2, standard=False)
    assert sorted(report.compiled) == ["scale0", "scale1"]
    assert list(report.failed) == ["bad"]
    assert "bad.cu(1): error" in report.failed["bad"] and 'identifier "y" is undefined' in report.failed["bad"]
