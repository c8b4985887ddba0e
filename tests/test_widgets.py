"""gpunb.widgets on the CPU: state fed with synthetic events, the ipywidgets views built
without a frontend, the kernel viewer over real NVRTC (sm_90), the cache panel against a
temporary cache, and the display hook in an IPython InteractiveShell."""

from __future__ import annotations

import importlib.util
import sys
import threading
import types

import numpy as np
import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.lib.pretty import pretty
from IPython.utils.capture import capture_output

import gpunb
from gpunb import report
from gpunb.core import events
from gpunb.core.build import cached as build
from gpunb.core.build.cached import compile_cached
from gpunb.core.build.cache import KernelCache, set_kernel_cache
from gpunb.widgets import (ActivityState, CacheStatusPanel, CompileProgress, KernelViewer,
                           SlowBuildBanner, install, installed, quiet_cell, uninstall)
from gpunb.widgets import viewer as viewer_module

ARCH = "sm_90"
ALPHA = 'extern "C" __global__ void alpha(float* x) { x[threadIdx.x] *= 2.0f; }\n'
BAD = 'extern "C" __global__ void broken(float* x) { x[threadIdx.x] = undefined_name; }\n'
HAS_INSPECTION = importlib.util.find_spec("gpunb.core.build.inspection") is not None


def started(key, name, t):
    return events.CompileStarted(key, name, ARCH, time=t)


def finished(key, name, t, seconds, error=None):
    return events.CompileFinished(key, name, ARCH, seconds, error, time=t)


def hit(level="disk"):
    return events.CacheHit("k", "cached", level)


class FakeClock:
    """A monotonic clock that only moves when told (throttling without timing)."""

    def __init__(self, step=0.0):
        self.now, self.step = 100.0, step

    def __call__(self):
        self.now += self.step
        return self.now


# -- ActivityState -----------------------------------------------------------------------------

def test_state_counts_single_compiles_of_unknown_total():
    st = ActivityState()
    assert st.phase == "idle" and st.text() == "gpunb: no kernel activity"
    st.apply(events.CacheMiss("a", "foo"))
    st.apply(started("a", "foo", 10.0))
    assert st.phase == "running" and st.busy
    assert st.current() == "foo"
    assert st.progress() == (0, None)
    # no total is known: say what and for how long, never "kernel 1 of ?"
    assert st.text(now=10.5) == "gpunb: compiling foo (0.50 s so far)"
    st.apply(finished("a", "foo", 10.4, 0.4))
    st.apply(started("b", "bar", 11.0))
    assert st.current() == "bar" and st.progress() == (1, None)
    assert st.text(now=11.0) == "gpunb: compiling bar (0.00 s so far, 1 module done)"
    st.apply(finished("b", "bar", 11.4, 0.4))
    st.apply(started("c", "baz", 20.0))
    st.apply(finished("c", "baz", 20.4, 0.4))
    for _ in range(5):
        st.apply(hit())
    assert st.phase == "done" and not st.busy and st.current() is None
    # 1.2 s of compiling, not the 10.4 s between the first start and the last finish
    assert st.text() == "gpunb: compiled 3 modules in 1.2 s, 5 cache hits"


def test_state_parallel_compiles_count_once():
    st = ActivityState()
    st.apply(started("a", "a", 0.0))
    st.apply(started("b", "b", 0.1))
    assert st.current() == "b"
    st.apply(finished("a", "a", 1.0, 1.0))
    st.apply(finished("b", "b", 1.1, 1.0))
    assert st.compile_seconds() == pytest.approx(1.1)
    assert st.summary() == "compiled 2 modules in 1.1 s"


def test_state_error():
    st = ActivityState()
    st.apply(started("a", "good", 0.0))
    st.apply(finished("a", "good", 0.2, 0.2))
    st.apply(started("b", "broken", 1.0))
    urgent = st.apply(finished("b", "broken", 1.3, 0.3, error="kernel.cu(1): error: oops"))
    assert urgent and st.phase == "error"
    assert st.failed == [("broken", "kernel.cu(1): error: oops")]
    assert st.text() == "gpunb: failed to compile broken after 0.50 s; compiled good"


def test_state_batch_has_totals():
    st = ActivityState()
    what = "3 modules for sm_90"
    st.apply(events.BatchStarted(what, 3, time=0.0))
    st.apply(events.BatchProgress(what, 1, 3, "a", True, True, time=0.1))
    st.apply(events.BatchProgress(what, 2, 3, "b", True, False, time=2.0))
    assert st.phase == "running" and st.progress() == (2, 3) and st.current() == "b"
    assert st.text(now=2.0) == "gpunb: building 3 modules for sm_90: 2 of 3 done, now b, 2.0 s"
    st.apply(events.BatchProgress(what, 3, 3, "c", False, False, time=3.0))
    st.apply(events.BatchFinished(what, 3, 3, 1, 4.0, time=4.0))
    assert st.phase == "error"
    assert st.text() == ("gpunb: built 3 modules for sm_90 in 4.0 s "
                         "(1 compiled, 1 already cached, 1 failed)")


def test_state_hits_only_and_ignores_other_objects():
    st = ActivityState()
    assert st.apply(hit("memory")) is True         # idle -> hits: a new phase
    assert st.apply(hit("disk")) is False          # a counter bump
    assert st.apply(object()) is False
    assert (st.memory_hits, st.disk_hits, st.phase) == (1, 1, "hits")
    assert st.text() == "gpunb: 2 cache hits"


# -- CompileProgress -------------------------------------------------------------------------

def test_progress_hit_badge_not_bar():
    p = CompileProgress()
    p.handle(hit())
    p.widget                                       # built as display() would
    assert p.mode == "badge"
    assert p._badge.layout.display is None and "1 cache hit" in p._badge.value
    assert p._bar.layout.display == "none" and p._label.layout.display == "none"


def test_progress_bar_counts_current_kernel_and_summary():
    p = CompileProgress()
    p.widget
    what = "2 modules for sm_90"
    p.handle(events.BatchStarted(what, 2))
    p.handle(events.BatchProgress(what, 1, 2, "first", True, False))
    p.handle(events.CompileStarted("k", "second", ARCH))
    p.redraw()
    assert p.mode == "bar"
    assert p._bar.layout.display is None and (p._bar.value, p._bar.max) == (1, 2)
    assert p._bar.bar_style == "info"
    assert "second" in p._label.value and "1 of 2 done" in p._label.value
    p.handle(events.CompileFinished("k", "second", ARCH, 0.5))
    p.handle(events.BatchProgress(what, 2, 2, "second", True, False))
    p.handle(events.BatchFinished(what, 2, 2, 0, 1.5))
    p.collapse()
    assert p.mode == "summary" and p._bar.layout.display == "none"
    assert p._label.layout.display is None and "&#10003;" in p._label.value
    assert p.text() == "gpunb: built 2 modules for sm_90 in 1.5 s (2 compiled, 0 already cached)"
    assert p._bar.bar_style == "success"


def test_progress_error_state():
    p = CompileProgress()
    p.widget
    p.handle(events.CompileStarted("k", "broken", ARCH))
    p.handle(events.CompileFinished("k", "broken", ARCH, 0.1, error="kernel.cu(1): error: oops\nmore"))
    p.collapse()
    assert p.state.phase == "error" and p.mode == "summary"
    assert p._bar.bar_style == "danger"
    assert "&#10007;" in p._label.value and "#b00020" in p._label.value
    assert 'title="kernel.cu(1): error: oops"' in p._label.value
    assert p.text().startswith("gpunb: failed to compile broken")


def test_progress_throttles_a_thousand_hits():
    clock = FakeClock()                          # time stands still: only urgent redraws
    p = CompileProgress(clock=clock)
    p.widget
    base = p.redraws
    for _ in range(1000):
        p.handle(hit())
    assert p.state.hits == 1000
    assert p.redraws - base <= 2, p.redraws      # the first hit (a new phase), nothing more
    p.collapse()
    assert "1000 cache hits" in p._badge.value

    clock = FakeClock(step=0.01)                 # 10 ms per event: a redraw per 0.1 s at most
    p = CompileProgress(clock=clock, interval=0.1)
    p.widget
    base = p.redraws
    for _ in range(1000):
        p.handle(hit())
    assert p.redraws - base <= 1000 * 0.01 / 0.1 + 2


def test_progress_without_widget_never_draws():
    p = CompileProgress()
    for _ in range(100):
        p.handle(hit())
    p.collapse()
    assert not p.built and p.redraws == 0 and p.text() == "gpunb: 100 cache hits"


def test_progress_ticker_redraws_while_compiling():
    p = CompileProgress(tick=0.01)
    p.widget
    p.handle(events.CompileStarted("k", "slow", ARCH))
    base = p.redraws
    ticked = threading.Event()
    for _ in range(500):                          # the ticker, not an event, redraws
        if p.redraws > base + 1:
            ticked.set()
            break
        threading.Event().wait(0.01)
    assert ticked.is_set()
    ticker = p._ticker
    p.handle(events.CompileFinished("k", "slow", ARCH, 0.5))
    if ticker is not None:
        ticker.join(10)
        assert not ticker.is_alive()
    p.close()


# -- SlowBuildBanner ---------------------------------------------------------------------------

def test_banner_appears_on_slow_build_and_goes_at_the_end(tmp_path):
    p = CompileProgress()
    p.widget
    p.handle(events.CompileStarted("k", "big", ARCH))
    assert len(p.widget.children) == 1 and not p.banner.visible
    p.handle(events.SlowBuild("big for sm_90", 2.5, tmp_path))
    assert p.banner.visible and len(p.widget.children) == 2
    banner_widget = p.widget.children[0]
    text = p.banner.text()
    for part in ("big for sm_90", "happens once", str(tmp_path), "%gpucache warm"):
        assert part in text
        assert part in p.banner._html()
    assert "&#9203;" not in p.banner._html() and "gpunb-spinner" in p.banner._html()
    assert "\n" not in text and text.startswith("gpunb: building")
    p.handle(events.CompileFinished("k", "big", ARCH, 3.0))
    assert not p.banner.visible and len(p.widget.children) == 1
    assert banner_widget.layout.display == "none" and banner_widget not in p.widget.children
    assert p.banner.text() == "gpunb: finished building big for sm_90 (a one-time build, now cached)"


def test_banner_shows_batch_progress_and_memory_only_cache():
    what = "4 modules for sm_90"
    b = SlowBuildBanner()
    assert b.text() == "gpunb: no long build"
    b.handle(events.BatchStarted(what, 4))
    b.handle(events.BatchProgress(what, 1, 4, "a", True, False))
    b.handle(events.SlowBuild(what, 2.0, None))
    b.widget
    assert b.visible and b._bar.layout.display is None and (b._bar.value, b._bar.max) == (1, 4)
    assert "1 of 4 done" in b.text() and "memory only" in b.text()
    b.handle(events.BatchFinished(what, 4, 4, 0, 3.0))
    assert not b.visible and not b.built


def test_banner_not_shown_after_the_build_ended():
    p = CompileProgress()
    p.widget
    p.handle(events.CompileStarted("k", "quick", ARCH))
    p.handle(events.CompileFinished("k", "quick", ARCH, 0.1))
    p.handle(events.SlowBuild("quick", 2.0, None))   # a timer that fired as the build ended
    assert not p.banner.visible and len(p.widget.children) == 1


# -- text forms --------------------------------------------------------------------------------

def test_text_forms(tmp_path):
    p = CompileProgress()
    p.handle(hit())
    b = SlowBuildBanner(events.SlowBuild("x", 2.0, tmp_path))
    panel = CacheStatusPanel(KernelCache(tmp_path / "c"))
    v = KernelViewer(ALPHA, arch=ARCH)
    for view in (p, b, panel, v):
        assert repr(view) == view.text() == pretty(view)
        bundle = view._repr_mimebundle_()
        assert bundle["text/plain"] == view.text()
        assert "application/vnd.jupyter.widget-view+json" in bundle
    assert p.text() == "gpunb: 1 cache hit"
    assert v.text() == "kernel alpha (sm_90)\n\n" + report.numbered_source(ALPHA)


# -- KernelViewer ------------------------------------------------------------------------------

def test_viewer_source_highlighted_and_tabs_lazy():
    v = KernelViewer(ALPHA, arch=ARCH)
    assert v.name == "alpha"
    tab = v.tab
    assert tab.titles == ("Source", "PTX", "Resources")
    src = tab.children[0].value
    assert '<span style="' in src and "__global__" in src and "alpha" in src
    assert v.computed == []                        # nothing compiled for the source tab
    v.select("PTX")
    assert v.computed == ["ptx"]
    assert ".entry" in tab.children[1].value and "alpha" in tab.children[1].value
    v.select("Resources")
    assert v.computed == ["ptx", "resources"]
    assert "alpha" in tab.children[2].value
    res = v.resources()
    assert set(res) == {"alpha"} and res["alpha"]["registers"] > 0
    full = v.text(("source", "ptx", "resources"))
    assert ".entry alpha" in full and "registers" in full.lower()
    v.select("Source")
    v.select("PTX")                                # computed once
    assert v.computed == ["ptx", "resources"]


def test_viewer_fallback_without_inspection(monkeypatch):
    monkeypatch.setattr(viewer_module, "_inspection", lambda: None)
    v = KernelViewer(ALPHA, arch=ARCH)
    assert ".entry alpha" in v.ptx()
    res = v.resources()
    assert res["alpha"]["registers"] > 0 and res["alpha"]["spill_stores"] is None
    text = v.resources_text()
    assert "alpha" in text and "registers" in text and "?" in text


def test_viewer_uses_the_inspection_module(monkeypatch):
    calls = []
    fake = types.ModuleType("gpunb.core.build.inspection")
    fake.ptx = lambda source, options=(), arch=None, name_expressions=(): calls.append("ptx") or "FAKE PTX"
    fake.resources = lambda source, options=(), arch=None, name_expressions=(): (
        calls.append("res") or {"alpha": dict(registers=7, shared_bytes=0, local_bytes=0,
                                              spill_stores=0, spill_loads=0)})
    fake.resources_text = lambda res: f"FAKE TABLE {sorted(res)}"
    monkeypatch.setitem(sys.modules, "gpunb.core.build.inspection", fake)
    monkeypatch.setattr(gpunb.core.build, "inspection", fake, raising=False)
    v = KernelViewer(ALPHA, arch=ARCH)
    v.select("PTX")
    v.select("Resources")
    assert calls == ["ptx", "res"]
    assert v.ptx() == "FAKE PTX" and calls == ["ptx", "res"]      # kept, not recomputed
    assert "FAKE" in v.tab.children[1].value and "FAKE TABLE" in v.tab.children[2].value


@pytest.mark.skipif(not HAS_INSPECTION, reason="gpunb.core.build.inspection is not there yet")
def test_viewer_with_real_inspection():
    v = KernelViewer(ALPHA, arch=ARCH)
    assert ".entry alpha" in v.ptx()
    assert v.resources()["alpha"]["registers"] > 0


def test_viewer_shows_errors_in_the_tab():
    v = KernelViewer(BAD, arch=ARCH)
    v.select("PTX")
    assert "could not compute PTX" in v.tab.children[1].value
    assert "CompileError" in v.tab.children[1].value


def test_viewer_from_fused_inspection():
    @gpunb.fuse
    def axpy(a, x, y):
        return a * x + y

    x = np.zeros(100, np.float32)
    ins = axpy.inspect(2.0, x, x, arch=ARCH)
    v = KernelViewer.from_inspection(ins)
    assert v.name == ins.name and v.arch == ARCH and v.kind == ins.kind
    assert v.text().startswith(f"kernel {ins.name} ({ins.kind}, sm_90)")
    assert "__global__" in v.tab.children[0].value
    v.select("PTX")
    assert ".entry" in v.tab.children[1].value
    v.select("Resources")
    assert "could not" not in v.tab.children[2].value


def test_viewer_from_cache_entry(tmp_path):
    cache = KernelCache(tmp_path)
    entry = compile_cached(ALPHA, ("-DSCALE=2",), ARCH, cache=cache)
    v = KernelViewer.from_entry(entry)
    assert (v.name, v.arch, v.kind) == ("alpha", ARCH, "cache entry")
    assert "-DSCALE=2" in v.options
    assert ".entry alpha" in v.ptx()
    record = cache.entries()[0]
    v2 = KernelViewer.from_entry(record)
    assert v2.source == ALPHA and v2.resources()["alpha"]["registers"] > 0
    with pytest.raises(ValueError, match="no source"):
        KernelViewer.from_entry({"key": "abc"})


# -- CacheStatusPanel --------------------------------------------------------------------------

def test_panel_refresh_reflects_a_changed_cache(tmp_path):
    cache = KernelCache(tmp_path)
    panel = CacheStatusPanel(cache)
    assert panel.stats["entries"] == 0 and panel.refreshes == 1
    w = panel.widget
    assert "<td" in panel._table.value and w.children[1] is panel.button
    compile_cached(ALPHA, (), ARCH, cache=cache)
    assert panel.stats["entries"] == 0             # not until refreshed
    panel.button.click()
    assert panel.refreshes == 2 and panel.stats["entries"] == 1 and panel.stats["compiles"] == 1
    assert panel.counts == events.process_counts.as_dict() | {"seconds": panel.counts["seconds"]}
    assert events.counts_text(panel.counts) in panel._table.value
    assert str(tmp_path) in panel.text() and events.counts_text(panel.counts) in panel.text()


def test_panel_follows_the_default_cache(tmp_path):
    old = set_kernel_cache(KernelCache(tmp_path / "a"))
    try:
        panel = CacheStatusPanel()
        assert panel.stats["directory"] == str(tmp_path / "a")
        set_kernel_cache(KernelCache(tmp_path / "b"))
        panel.refresh()
        assert panel.stats["directory"] == str(tmp_path / "b")
    finally:
        set_kernel_cache(old)


# -- the display hook in an InteractiveShell ---------------------------------------------------

@pytest.fixture
def shell(tmp_path):
    old = set_kernel_cache(KernelCache(tmp_path / "kernels"))
    sh = InteractiveShell.instance()
    sh.user_ns.update(compile_cached=compile_cached, ALPHA=ALPHA, BAD=BAD, ARCH=ARCH)
    uninstall(sh)
    yield sh
    uninstall(sh)
    set_kernel_cache(old)


def stored(outputs) -> list[dict]:
    """The outputs as a notebook keeps them: an update replaces the output with its display id
    (as JupyterLab and nbclient do with update_display_data)."""
    kept, where = [], {}
    for o in outputs:
        display_id = (o.transient or {}).get("display_id")
        if o.update:
            if display_id in where:
                kept[where[display_id]] = o.data
            continue
        if display_id is not None:
            where[display_id] = len(kept)
        kept.append(o.data)
    return kept


def ours(sh):
    return ([s for s in events._subscribers if type(s).__name__ == "CellDisplay"],
            [cb for name in ("pre_run_cell", "post_run_cell") for cb in sh.events.callbacks[name]
             if type(getattr(cb, "__self__", None)).__name__ == "CellDisplay"])


def test_install_text_mode_prints_summary_lines(shell):
    hook = install(shell)                          # no kernel: text mode
    assert hook.mode == "text" and installed(shell) is hook
    with capture_output() as out:
        shell.run_cell("e = compile_cached(ALPHA, (), ARCH)")
    assert out.outputs == []
    lines = out.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpunb: compiled alpha in ")
    with capture_output() as out:
        shell.run_cell("e = compile_cached(ALPHA, (), ARCH)")   # a hit only: quiet
    assert out.stdout == "" and hook.shown[-1].text() == "gpunb: 1 cache hit"
    with capture_output() as out:
        r = shell.run_cell("compile_cached(BAD, (), ARCH)")
    assert isinstance(r.error_in_exec, gpunb.CompileError)
    assert "gpunb: failed to compile broken" in out.stdout
    with capture_output() as out:
        shell.run_cell("x = 1")                    # no kernel activity: nothing at all
    assert out.stdout == "" and out.outputs == []


def test_install_widget_mode_displays_once_per_cell(shell):
    hook = install(shell, mode="widget")
    with capture_output() as out:
        shell.run_cell("e = compile_cached(ALPHA, (), ARCH)\ne = compile_cached(ALPHA, (), ARCH)")
    assert len(stored(out.outputs)) == 1 and not out.outputs[0].update
    data = out.outputs[0].data
    assert "application/vnd.jupyter.widget-view+json" in data
    assert data["text/plain"].startswith("gpunb: compiling alpha")
    p = hook.shown[-1]
    assert p.state.collapsed and p.mode == "summary"
    assert p.text().startswith("gpunb: compiled alpha in ") and p.text().endswith(", 1 cache hit")
    assert "compiled alpha" in p._label.value
    # the end of the cell replaced the widget by the summary: what a saved notebook shows
    final = stored(out.outputs)[0]
    assert "application/vnd.jupyter.widget-view+json" not in final
    assert final["text/plain"] == p.text() and "compiled alpha" in final["text/html"]
    with capture_output() as out:
        shell.run_cell("e = compile_cached(ALPHA, (), ARCH)")
    assert [o["text/plain"] for o in stored(out.outputs)] == ["gpunb: 1 cache hit"]
    assert hook.shown[-1].mode == "badge" and out.stdout == ""


def test_widget_mode_banner_from_the_timer_thread(shell, monkeypatch):
    monkeypatch.setenv("GPUNB_SLOW_COMPILE_SECONDS", "0.01")
    seen = threading.Event()
    real = build.compile_program

    def slow_compile(*args, **kwargs):
        assert seen.wait(30), "no SlowBuild event"   # block until the timer thread fired
        return real(*args, **kwargs)

    monkeypatch.setattr(build, "compile_program", slow_compile)
    hook = install(shell, mode="widget")
    assert events._log_slow_build not in events._subscribers   # the banner replaces the log line
    watcher = events.subscribe(lambda ev: isinstance(ev, events.SlowBuild) and seen.set())
    try:
        with capture_output() as out:
            shell.run_cell("e = compile_cached(ALPHA + '// slow', (), ARCH)")
    finally:
        events.unsubscribe(watcher)
    p = hook.shown[-1]
    assert p.banner.event is not None and "alpha for sm_90" in p.banner.event.what
    assert not p.banner.visible and len(p.widget.children) == 1   # gone with the build
    assert len(stored(out.outputs)) == 1
    uninstall(shell)
    assert events._log_slow_build in events._subscribers


def test_install_twice_and_uninstall_leave_nothing(shell):
    before = list(events._subscribers)
    a = install(shell)
    assert install(shell) is a
    subs, callbacks = ours(shell)
    assert subs == [a] and len(callbacks) == 2
    b = install(shell, mode="widget")              # another mode replaces the first
    subs, callbacks = ours(shell)
    assert b is not a and subs == [b] and len(callbacks) == 2
    uninstall(shell)
    uninstall(shell)                               # twice is harmless
    assert ours(shell) == ([], []) and installed(shell) is None
    assert events._subscribers == before
    with capture_output() as out:
        shell.run_cell("e = compile_cached(ALPHA + '// after', (), ARCH)")
    assert out.stdout == "" and out.outputs == []
    with pytest.raises(ValueError, match="mode"):
        install(shell, mode="browser")


@pytest.mark.parametrize("mode", ["text", "widget"])
def test_quiet_cell_keeps_no_summary_but_shows_failures(shell, mode):
    hook = install(shell, mode=mode)
    shell.user_ns["quiet_cell"] = quiet_cell
    with capture_output() as out:
        shell.run_cell("quiet_cell()\ne = compile_cached(ALPHA + '// quiet', (), ARCH)")
    assert out.stdout == "" and out.outputs == []
    assert hook.shown[-1].state.compiled
    with capture_output() as out:
        shell.run_cell("quiet_cell()\ncompile_cached(BAD, (), ARCH)")
    shown = (out.stdout.splitlines()[-1] if mode == "text"      # after the error's render
             else "".join(o.data["text/plain"] for o in out.outputs))
    assert shown.startswith("gpunb: failed to compile broken")
    with capture_output() as out:                  # the next cell is not quiet
        shell.run_cell("e = compile_cached(ALPHA + '// loud', (), ARCH)")
    assert (out.stdout if mode == "text" else out.outputs[0].data["text/plain"]).startswith("gpunb: ")


def test_events_outside_a_cell_are_not_shown(shell):
    hook = install(shell)
    events.emit(events.CompileStarted("k", "outside", ARCH))
    events.emit(events.CompileFinished("k", "outside", ARCH, 0.1))
    assert hook.progress is None and hook.shown == []


def test_load_ext_installs_the_display(shell):
    if (importlib.util.find_spec("gpunb.magics.cuda") is None
            or not hasattr(gpunb, "load_ipython_extension")):
        pytest.skip("the extension (gpunb.magics) is not complete yet")
    shell.run_line_magic("load_ext", "gpunb")
    try:
        assert installed(shell) is not None and len(ours(shell)[0]) == 1
        shell.run_line_magic("reload_ext", "gpunb")
        assert len(ours(shell)[0]) == 1 and len(ours(shell)[1]) == 2
    finally:
        shell.run_line_magic("unload_ext", "gpunb")
    assert ours(shell) == ([], [])
