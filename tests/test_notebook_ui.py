"""The notebook UI defects found in a real browser (issue 17), each checked here without one:
warm's worker events reach the notebook (progress, one banner, no log lines), the banner's
advice fits what is built, single compiles show no "1 of ?", module/kernel counts and natural
order in summaries, the kernel viewer opens on the kernel, saved outputs read correctly, one
set of counters, emoji-free icons and a button-sized Refresh, GPUUnavailableError as one
message. tests/browser/ checks the same in JupyterLab + Chromium."""

from __future__ import annotations

import logging
import re

import numpy as np
import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from gpunb.core import events
from gpunb.core.build.cache import KernelCache, kernel_cache, set_kernel_cache
from gpunb.core.build.warm import ModuleSpec, warm_modules
from gpunb.core.errors import GPUUnavailableError
from gpunb.widgets import CacheStatusPanel, CompileProgress, KernelViewer, install, uninstall

ARCH = "sm_90"
# characters only an emoji font draws (boxes without one): hourglasses, watches, media symbols,
# anything past the Basic Multilingual Plane, as code points or HTML entities
EMOJI_ONLY = re.compile(r"[\u231A\u231B\u23E9-\u23F3\u23F8-\u23FA\U00010000-\U0010FFFF]|"
                        r"&#(8986|8987|9193|9194|9195|9196|9197|9198|9199|9200|9201|9202|9203|"
                        r"9208|9209|9210|1[0-9]{5});")


def spec(i, body="x[threadIdx.x] *= {f}.0f;"):
    return ModuleSpec(f"scale{i}", f'extern "C" __global__ void scale{i}(float* x) '
                                   f'{{ {body.format(f=i + 2)} }}')


BAD = ModuleSpec("bad", 'extern "C" __global__ void bad(float* x) { x[0] = y; }', program_name="bad.cu")


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUNB_CACHE_DIR", str(tmp_path / "kernels"))
    old = set_kernel_cache(KernelCache(tmp_path / "kernels"))
    events.process_counts.reset()      # the process's counters, counted from here
    yield kernel_cache()
    set_kernel_cache(old)


# -- defect 1: warm's worker processes -------------------------------------------------------

def test_warm_forwards_worker_events_and_one_banner_covers_the_batch(fresh_cache, monkeypatch, caplog):
    monkeypatch.setenv("GPUNB_SLOW_COMPILE_SECONDS", "0.001")   # every compile is "slow"
    seen = []
    with caplog.at_level(logging.WARNING, logger="gpunb"), events.subscribed(seen.append):
        report = warm_modules([spec(0), spec(1), BAD, spec(2)], ARCH, jobs=2)
    assert sorted(report.compiled) == ["scale0", "scale1", "scale2"] and list(report.failed) == ["bad"]
    kinds = [type(e).__name__ for e in seen]
    # every worker's lookup and compile reached this process, each before its module's progress
    finished = [e for e in seen if isinstance(e, events.CompileFinished)]
    assert sorted(e.name for e in finished) == ["bad", "scale0", "scale1", "scale2"]
    assert [e.name for e in finished if e.error] == ["bad"] and kinds.count("CacheMiss") == 4
    for e in finished:
        progress = next(i for i, p in enumerate(seen) if isinstance(p, events.BatchProgress) and p.name == e.name)
        assert seen.index(e) < progress
    # one slow-build notice, naming the batch (the workers emit and log none)
    slow = [e for e in seen if isinstance(e, events.SlowBuild)]
    assert [e.what for e in slow] == [f"4 modules for {ARCH}"]
    assert len([r for r in caplog.records if "has taken" in r.getMessage()]) == 1
    assert "ahead-of-time build" in caplog.text and "cache warm`" not in caplog.text


def test_warm_in_a_notebook_cell_shows_progress_and_the_banner(fresh_cache, monkeypatch):
    monkeypatch.setenv("GPUNB_SLOW_COMPILE_SECONDS", "0.001")
    p = CompileProgress()
    p.widget
    with events.subscribed(p.handle):
        warm_modules([spec(0), spec(1), spec(2)], ARCH, jobs=2)
    st = p.state
    assert st.batch is not None and (st.batch.done, st.batch.total) == (3, 3)
    assert p.banner.event is not None and p.banner.event.what == f"3 modules for {ARCH}"
    assert len(st.compiled) == 3 and st.misses == 3           # forwarded compiles, counted once
    assert p.text().startswith(f"gpunb: built 3 modules for {ARCH}")
    assert not p.banner.visible                                # gone with the build


# -- defect 2: what the banner advises ---------------------------------------------------------

@pytest.mark.parametrize("what, good, bad", [
    ("%%cuda saxpy for sm_90", "Running this cell again", "gpucache warm"),
    ("167 modules for sm_90", "ahead-of-time build", "gpucache warm"),
    ("reduce_sum_afloat32 for sm_90", "%gpucache warm", "this cell"),
])
def test_banner_advice_fits_what_is_built(what, good, bad, tmp_path):
    p = CompileProgress()
    p.widget
    p.handle(events.CompileStarted("k", what, ARCH))
    p.handle(events.SlowBuild(what, 1.0, tmp_path))
    for text in (p.banner.text(), p.banner._html()):
        assert good in text and bad not in text
    p.handle(events.CompileFinished("k", what, ARCH, 1.0))


# -- defect 3: single compiles, counts, order ------------------------------------------------

def test_a_single_compile_shows_a_moving_bar_and_elapsed_time_not_one_of_unknown():
    p = CompileProgress()
    p.widget
    p.handle(events.CompileStarted("k", "%%cuda k0, k1, k2, k3, ... (80 kernels)", ARCH, time=0.0))
    assert "of ?" not in p.text() and "so far" in p.text()
    assert p._busy.layout.display is None and p._bar.layout.display == "none"
    assert "gpunb-indeterminate" in p._busy.value
    p.handle(events.CompileFinished("k", "%%cuda k0, k1, k2, k3, ... (80 kernels)", ARCH, 2.0, time=2.0))
    assert p.text() == "gpunb: compiled %%cuda k0, k1, k2, k3, ... (80 kernels) in 2.0 s"
    assert p._busy.layout.display == "none"


def test_batch_progress_shows_a_real_bar():
    p = CompileProgress()
    p.widget
    p.handle(events.BatchStarted("2 modules for sm_90", 2))
    p.handle(events.BatchProgress("2 modules for sm_90", 1, 2, "a", True, False))
    p.redraw()                       # handle() throttles redraws
    assert p._bar.layout.display is None and p._busy.layout.display == "none"
    assert (p._bar.value, p._bar.max) == (1, 2)


def test_cuda_cell_of_many_kernels_counts_them_sorted_naturally_and_elided(fresh_cache):
    sh = InteractiveShell.instance()
    sh.run_line_magic("load_ext", "gpunb")
    try:
        body = "\n".join(f'extern "C" __global__ void k{i}(float* y) {{ y[0] = {i}.0f; }}' for i in range(80))
        with capture_output() as out:
            r = sh.run_cell(f"%%cuda --arch {ARCH}\n{body}")
        assert r.error_in_exec is None, r.error_in_exec
        summary = sh.magics_manager.registry["CudaMagics"].last
        text = summary.text()
        assert text.startswith("%%cuda: k0, k1, k2, k3, k4, k5, k6, k7, ... and 72 more (80 kernels);")
        assert len(summary._repr_html_()) < 400
        assert all(f"k{i}" in sh.user_ns for i in range(80))        # every kernel still bound
        assert "80 kernels" in out.stdout                           # text mode's progress line
    finally:
        sh.run_line_magic("unload_ext", "gpunb")


def test_cache_listing_orders_kernels_naturally_and_counts_them():
    from gpunb import report

    row = report.entry_rows([{"key": "a" * 64, "kernels": [f"k{i}" for i in (10, 2, 1, 0, 11, 3)]}], 0.0)[0]
    assert row[1] == "k0, k1, k2, k3, k10, k11"
    many = report.entry_rows([{"key": "a" * 64, "kernels": sorted(f"k{i}" for i in range(80))}], 0.0)[0]
    assert many[1].startswith("k0, k1, k2, k3") and many[1].endswith("... (80 kernels)")


# -- defect 4: the kernel viewer opens on the kernel -------------------------------------------

def test_viewer_folds_the_prelude_and_opens_on_the_kernel():
    import gpunb as gp
    from gpunb.core.kernels.prelude import prelude

    @gp.fuse
    def softmax_denominator(x, m):
        return gp.exp(x - m[:, gp.newaxis]).sum(axis=1)

    x = np.random.rand(8, 4).astype(np.float32)
    v = KernelViewer.from_inspection(softmax_denominator.inspect(x, x.max(axis=1), arch=ARCH))
    n = prelude().count("\n")
    assert v.source.startswith(prelude()) and v.source.count("\n") > n + 10
    html = v.source_html()
    head, kernel = html.split("</details>", 1)
    assert '<details class="gpunb-prelude">' in head and "<details open" not in head
    assert "__global__" in kernel and f"line {n + 1}" in head
    assert re.search(rf">\s*{n + 1}\s*<", kernel)           # numbered as in the whole source
    text = v.text()
    assert f"lines 1-{n}: gpunb's prelude, not shown" in text and "__global__" in text
    assert len(text.splitlines()) < v.source.count("\n") - n + 10
    plain = KernelViewer('extern "C" __global__ void f(float* x) {}\n', arch=ARCH)
    assert "<details" not in plain.source_html() and "prelude" not in plain.text()


# -- defect 5: saved outputs read correctly ----------------------------------------------------

def sanitized(text: str) -> str:
    import configparser
    from pathlib import Path

    cfg = configparser.ConfigParser()
    cfg.read(Path(__file__).resolve().parent.parent / "notebooks" / "sanitize.cfg")
    for section in cfg.sections():
        text = re.sub(cfg[section]["regex"], cfg[section]["replace"], text)
    return text


class FakeKernel:
    """Makes the display hook pick widget mode (as in a Jupyter kernel)."""


def test_saved_outputs_hold_the_final_summary_not_the_first_state(fresh_cache):
    sh = InteractiveShell.instance()
    sh.kernel = FakeKernel()
    try:
        hook = install(sh)
        assert hook.mode == "widget"
        sh.user_ns.update(compile_cached=__import__("gpunb.core.build.cached", fromlist=["x"]).compile_cached)
        with capture_output() as out:
            sh.run_cell(f"compile_cached('extern \"C\" __global__ void saved(float* x) {{}}', (), {ARCH!r})")
        first, *updates = out.outputs
        assert first.data["text/plain"].startswith("gpunb: compiling saved")       # while running
        display_id = first.transient["display_id"]
        assert [u.transient["display_id"] for u in updates] == [display_id] and updates[-1].update
        final = updates[-1].data
        assert final["text/plain"].startswith("gpunb: compiled saved in ")
        assert "application/vnd.jupyter.widget-view+json" not in final   # no widget state needed
        assert "compiled saved" in final["text/html"]
        # nbval sees only the first state (it ignores display updates) and compares it with the
        # stored final one: the same keys, equal once notebooks/sanitize.cfg has masked them
        widget = "application/vnd.jupyter.widget-view+json"
        assert set(first.data) - {widget} == set(final)
        assert [sanitized(first.data[k]) for k in final] == [sanitized(final[k]) for k in final]
    finally:
        uninstall(sh)
        del sh.kernel


# -- defect 6: one set of counters -------------------------------------------------------------

def test_counters_agree_between_the_panel_and_status_and_add_up(fresh_cache):
    from gpunb.magics.gpucache import GpuCacheMagics
    from gpunb.core.build.cached import compile_cached
    from gpunb.core.errors import CompileError

    sh = InteractiveShell.instance()
    magics = GpuCacheMagics(sh)
    sh.register_magics(magics)
    try:
        compile_cached(spec(9).source, (), ARCH)
        compile_cached(spec(9).source, (), ARCH)                    # a memory hit
        with pytest.raises(CompileError):
            compile_cached(BAD.source, (), ARCH)
        warm_modules([spec(0), spec(1)], ARCH, jobs=2)              # compiled by workers
        status = sh.run_line_magic("gpucache", "status")
        panel = CacheStatusPanel()
    finally:
        magics.close()
    c = panel.counts
    assert (c["hits"], c["misses"], c["compiled"], c["failed"]) == (1, 4, 3, 1)
    assert c["misses"] == c["compiled"] + c["failed"]
    line = events.counts_text(c)
    assert line.startswith("1 hits (1 memory, 0 disk), 4 misses: 3 compiled in ") and line.endswith(", 1 failed")
    assert f"this process: {line}" in status.text() and line in panel.text()
    assert re.search(r"this session \(\d+ s\): " + re.escape(line), status.text())   # same words
    assert line in status._repr_html_() and line in panel.html()


# -- defect 7: icons and the Refresh button ----------------------------------------------------

def test_widget_html_needs_no_emoji_font(tmp_path):
    htmls = []
    p = CompileProgress()
    p.widget
    p.handle(events.CacheHit("h", "x", "memory"))
    htmls.append(p._badge.value)
    p.handle(events.CompileStarted("k", "x", ARCH))
    p.handle(events.SlowBuild("x for sm_90", 1.0, tmp_path))
    htmls += [p._label.value, p._busy.value, p.banner._html()]
    p.handle(events.CompileFinished("k", "x", ARCH, 1.0, error="cell.cu(1): error: no"))
    htmls += [p._label.value, p.final_html()]
    for html in htmls:
        assert not EMOJI_ONLY.search(html), html


def test_refresh_button_is_button_sized(fresh_cache):
    panel = CacheStatusPanel()
    layout = panel.widget.children[1].layout
    assert panel.widget.children[1] is panel.button
    assert layout.width == "auto" and layout.align_self == "flex-start"   # a VBox stretches it otherwise


def test_cuda_magic_documents_its_highlighting():
    import gpunb.magics.cuda as cuda

    assert "highlighted as Python" in cuda.__doc__ and "--show source" in cuda.__doc__


# -- defect 8: no GPU, one message -------------------------------------------------------------

def test_gpu_unavailable_renders_as_its_message_in_ipython():
    sh = InteractiveShell.instance()
    sh.user_ns["GPUUnavailableError"] = GPUUnavailableError

    def deep(n):
        if n == 0:
            raise GPUUnavailableError("no NVIDIA driver library (libcuda.so.1) was found")
        deep(n - 1)

    sh.user_ns["deep"] = deep
    with capture_output() as out:
        sh.run_cell("deep(30)")
    lines = [ln for ln in out.stdout.splitlines() if ln.strip()]
    assert lines[0] == "GPUUnavailableError: No usable CUDA GPU: no NVIDIA driver library (libcuda.so.1) was found"
    assert len(lines) == 2 and "Traceback" not in out.stdout and "deep(n - 1)" not in out.stdout
    assert isinstance(GPUUnavailableError("x"), RuntimeError)    # still catchable as before
