"""%gpucache in an IPython InteractiveShell, against a temporary kernel cache; the session
recorder behind it."""

from __future__ import annotations

import builtins
import re

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.lib.pretty import pretty

from gpunb import report
from gpunb.core import events
from gpunb.core.kernels import standard as warm_module
from gpunb.core.build.cached import compile_cached
from gpunb.core.build.cache import KernelCache, kernel_cache, set_kernel_cache
from gpunb.core.build.warm import ModuleSpec
from gpunb.magics.gpucache import GpuCacheMagics
from gpunb.magics.session import SessionRecorder

ARCH = "sm_90"
ALPHA = 'extern "C" __global__ void alpha(float* x) { x[threadIdx.x] *= 2.0f; }\n'
BETA = ('extern "C" __global__ void beta(float* x, int n) {\n'
        '    __shared__ float tile[64];\n'
        '    tile[threadIdx.x % 64] = x[threadIdx.x];\n'
        '    __syncthreads();\n'
        '    if (threadIdx.x < n) x[threadIdx.x] = tile[(threadIdx.x + 1) % 64];\n'
        '}\n')
MAX_BYTES = 64 * 1024**2


@pytest.fixture
def shell(tmp_path):
    old = set_kernel_cache(KernelCache(tmp_path / "kernels", MAX_BYTES))
    events.process_counts.reset()      # "this process" counts from here, for the checks below
    sh = InteractiveShell.instance()
    magics = GpuCacheMagics(sh)
    sh.register_magics(magics)
    yield sh, magics
    magics.close()
    set_kernel_cache(old)


@pytest.fixture
def filled(shell):
    """Two kernels compiled, then alpha again (a memory hit), then alpha from the disk
    through a second cache object (a disk hit that only the session sees)."""
    sh, magics = shell
    a = compile_cached(ALPHA, (), ARCH)
    b = compile_cached(BETA, (), ARCH)
    compile_cached(ALPHA, (), ARCH)
    compile_cached(ALPHA, (), ARCH, cache=KernelCache(kernel_cache().directory, MAX_BYTES))
    return sh, magics, a, b


def gpucache(sh, line=""):
    return sh.run_line_magic("gpucache", line)


def html_rows(html: str) -> int:
    return html.count("<tr>")


# -- status -----------------------------------------------------------------------------------

def test_status_counts_this_process_and_this_session(filled):
    sh, magics, a, b = filled
    status = gpucache(sh)
    assert type(status).__name__ == "CacheStatus" and gpucache(sh, "status").text().split("\n")[:3] == \
        status.text().split("\n")[:3]
    text = status.text()
    assert f"kernel cache: {kernel_cache().directory}" in text
    assert "entries: 2," in text and "of 64.0 MiB cap" in text
    # One set of counters, from the events: the process (counted since the fixture's reset here)
    # and the session saw the same lookups, the second cache's disk hit included.
    seconds = a.meta["compile_seconds"] + b.meta["compile_seconds"]
    line = f"2 hits (1 memory, 1 disk), 2 misses: 2 compiled in {seconds:.2f} s, 0 failed"
    assert f"this process: {line}" in text
    assert re.search(r"this session \(\d+ s\): " + re.escape(line), text)
    html = status._repr_html_()
    assert str(kernel_cache().directory) in html and "64.0 MiB cap" in html
    assert "2 hits (1 memory, 1 disk)" in html and "<table" in html
    assert repr(status) == text and pretty(status) == text


def test_the_result_displays_as_the_cell_output(filled, capsys):
    sh, *_ = filled
    sh.run_cell("%gpucache list")
    out = capsys.readouterr().out
    assert "alpha" in out and "beta" in out and "compile" in out


# -- list -------------------------------------------------------------------------------------

def test_list_sorts_and_limits(filled):
    sh, magics, a, b = filled
    listing = gpucache(sh, "list")
    text = listing.text()
    assert text.split("\n")[0].split() == list(report.ENTRY_COLUMNS)
    assert [r["key"] for r in listing.entries] == [a.key, b.key]        # alpha used last
    assert a.key[:12] in text and b.key[:12] in text and "sm_90" in text
    html = listing._repr_html_()
    assert html_rows(html) == 3 and "alpha" in html and "beta" in html and a.key[:12] in html

    assert [r["key"] for r in gpucache(sh, "list --sort name").entries] == [a.key, b.key]
    assert [r["key"] for r in gpucache(sh, "list --sort created").entries] == [b.key, a.key]
    by_time = gpucache(sh, "list --sort compile_seconds").entries
    assert [r["compile_seconds"] for r in by_time] == sorted(
        [a.meta["compile_seconds"], b.meta["compile_seconds"]], reverse=True)
    by_size = gpucache(sh, "list --sort size").entries
    assert by_size[0]["size"] >= by_size[1]["size"]

    one = gpucache(sh, "list --sort created --limit 1")
    assert [r["key"] for r in one.entries] == [b.key]
    assert "(1 of 2 entries, by created)" in one.text() and a.key[:12] not in one.text()
    assert html_rows(one._repr_html_()) == 2 and "1 of 2 entries" in one._repr_html_()


def test_list_of_an_empty_cache(shell):
    sh, _ = shell
    listing = gpucache(sh, "list")
    assert listing.entries == [] and "empty" in listing.text() and "empty" in listing._repr_html_()


@pytest.mark.parametrize("line, message", [
    ("list --sort colour", "cannot sort by 'colour'"),
    ("list --limit -1", "--limit must be 0 or more"),
    ("list --limit many", "invalid int value"),
    ("frobnicate", "invalid choice: 'frobnicate'"),
    ("list --verbose", "unrecognized arguments: --verbose"),
    ("show", "KEY_OR_KERNEL"),
    ("clear now", "unrecognized arguments: now"),
    ("warm --jobs 0 --arch sm_90", "--jobs must be at least 1"),
    ("warm --arch compute_90", "not a real GPU architecture"),
])
def test_bad_arguments_raise_usage_error(shell, line, message):
    sh, _ = shell
    with pytest.raises(UsageError, match=re.escape(message)):
        gpucache(sh, line)


def test_help_names_every_subcommand_and_option(shell):
    sh, _ = shell
    doc = sh.find_line_magic("gpucache").__doc__
    for word in ("%gpucache status", "%gpucache list [--sort FIELD] [--limit N]",
                 "%gpucache show KEY_OR_KERNEL", "%gpucache clear [--yes]",
                 "%gpucache warm [--arch ARCH] [--jobs N]", "%gpucache plot", "compile_seconds"):
        assert word in doc


# -- show -------------------------------------------------------------------------------------

def test_show_by_key_prefix_and_by_kernel_name(filled):
    sh, magics, a, b = filled
    by_key = gpucache(sh, f"show {b.key[:10]}")
    by_name = gpucache(sh, "show beta")
    assert by_key.record["key"] == by_name.record["key"] == b.key
    text = by_key.text()
    assert f"key:     {b.key}" in text and "kernels: beta" in text and "arch:    sm_90" in text
    assert "--gpu-architecture=sm_90" in text and f"NVRTC:   {b.meta['nvrtc']}" in text
    assert f"{report.format_bytes(len(b.cubin))} cubin" in text
    assert "2 |     __shared__ float tile[64];" in text        # numbered source
    _, _, registers, shared, local = b.meta["kernel_info"]["beta"]
    assert shared == 256
    row = next(line for line in text.split("\n") if line.startswith("beta "))
    assert row.split()[:5] == ["beta", str(registers), "256", "B", "0"]
    html = by_name._repr_html_()
    assert 'class="highlight"' in html and "__shared__" in html          # pygments
    assert b.key in html and "registers" in html and "256 B" in html
    assert pretty(by_name) == by_name.text()


def test_show_a_kernel_in_several_entries_picks_the_most_recent(filled):
    sh, magics, a, b = filled
    other = compile_cached(ALPHA, (), "sm_80")
    shown = gpucache(sh, "show alpha")
    assert shown.record["key"] == other.key and shown.record["arch"] == "sm_80"
    assert [r["key"] for r in shown.others] == [a.key]
    assert f"1 other entry too: {a.key[:12]}" in shown.text()


def test_show_unknown_and_ambiguous(filled):
    sh, magics, a, b = filled
    with pytest.raises(UsageError, match="no kernel cache entry .* 'gamma'"):
        gpucache(sh, "show gamma")
    # Two entries whose keys share a prefix (stored under chosen keys).
    cache = kernel_cache()
    k1, k2 = "abc1" + "0" * 60, "abc2" + "0" * 60
    cache.put(k1, a.cubin, dict(a.meta))
    cache.put(k2, b.cubin, dict(b.meta))
    with pytest.raises(UsageError) as info:
        gpucache(sh, "show abc")
    msg = str(info.value)
    assert "'abc' is ambiguous: 2 entries" in msg and "abc100000000" in msg and "abc200000000" in msg
    assert gpucache(sh, "show abc2").record["key"] == k2
    assert gpucache(sh, f"show {k1}").record["key"] == k1


# -- clear ------------------------------------------------------------------------------------

def test_clear_asks_first_and_a_no_keeps_everything(filled, monkeypatch):
    sh, *_ = filled
    prompts = []
    monkeypatch.setattr(builtins, "input", lambda prompt="": prompts.append(prompt) or "n")
    result = gpucache(sh, "clear")
    assert result.cancelled and result.removed == 0
    assert "nothing removed (2 entries kept" in result.text()
    assert "Remove all 2 entries" in prompts[0] and str(kernel_cache().directory) in prompts[0]
    assert kernel_cache().stats()["entries"] == 2

    monkeypatch.setattr(builtins, "input", lambda prompt="": "y")
    result = gpucache(sh, "clear")
    assert result.removed == 2 and result.text() == f"removed 2 entries from {kernel_cache().directory}"
    assert kernel_cache().stats()["entries"] == 0 and kernel_cache().entries() == []
    assert "removed 2 entries" in result._repr_html_()


def test_clear_yes_does_not_ask(filled, monkeypatch):
    sh, *_ = filled

    def no_input(prompt=""):
        raise AssertionError("asked")

    monkeypatch.setattr(builtins, "input", no_input)
    assert gpucache(sh, "clear --yes").removed == 2
    assert kernel_cache().entries() == []


# -- warm -------------------------------------------------------------------------------------

def _small_standard_set(monkeypatch, *extra):
    specs = [ModuleSpec(f"scale{i}", f'extern "C" __global__ void scale{i}(float* x) '
                                     f'{{ x[threadIdx.x] *= {i + 2}.0f; }}') for i in range(2)]
    monkeypatch.setattr(warm_module, "standard_modules", lambda: specs + list(extra))


def test_warm_compiles_then_finds_everything_cached(shell, monkeypatch, capsys):
    sh, magics = shell
    _small_standard_set(monkeypatch)
    result = gpucache(sh, "warm --arch sm_90 --jobs 1")
    assert sorted(result.report.compiled) == ["scale0", "scale1"] and result.report.failed == {}
    text = result.text()
    assert text.startswith("2 modules for sm_90: 2 compiled, 0 already cached, 0 failed in ")
    assert str(kernel_cache().directory) in text
    assert "warming 2 modules for sm_90" in capsys.readouterr().out     # plain shell: progress
    assert kernel_cache().stats()["entries"] == 2
    assert magics.recorder.summary()["compiles"] == 2                    # jobs=1 compiles here

    again = gpucache(sh, "warm --arch 90")
    assert sorted(again.report.cached) == ["scale0", "scale1"] and again.report.compiled == []
    assert "0 compiled, 2 already cached" in again.text()
    html = again._repr_html_()
    assert "2 for sm_90" in html and "2 already" in html


def test_warm_reports_a_failing_module(shell, monkeypatch):
    sh, magics = shell
    bad = ModuleSpec("broken", 'extern "C" __global__ void broken(float* x) { x[0] = y; }',
                     program_name="broken.cu")
    _small_standard_set(monkeypatch, bad)
    monkeypatch.setattr(magics, "_in_kernel", lambda: True)   # a notebook: widgets show progress
    result = gpucache(sh, "warm --arch sm_90 --jobs 1")
    assert list(result.report.failed) == ["broken"]
    assert "2 compiled, 0 already cached, 1 failed" in result.text()
    assert 'identifier "y" is undefined' in result.text()
    assert "broken" in result._repr_html_() and "identifier &quot;y&quot;" in result._repr_html_()


def test_warm_without_gpu_needs_arch(shell, no_gpu):
    sh, _ = shell
    with pytest.raises(UsageError, match=r"no usable GPU here .*--arch sm_90"):
        gpucache(sh, "warm")


# -- plot -------------------------------------------------------------------------------------

def test_plot_shows_session_compiles_and_hits_against_misses(filled):
    import matplotlib

    matplotlib.use("Agg")
    sh, magics, a, b = filled
    result = gpucache(sh, "plot")
    bars, lookups = result.figure.axes
    assert result.compile_source == "this session"
    shown = {t.get_text(): p.get_width() for t, p in zip(bars.get_yticklabels(), bars.patches)}
    assert shown == pytest.approx({"alpha": a.meta["compile_seconds"], "beta": b.meta["compile_seconds"]})
    hits, misses = lookups.get_lines()
    assert hits.get_label() == "hits" and misses.get_label() == "misses"
    assert list(hits.get_ydata()) == sorted(hits.get_ydata()) and hits.get_ydata()[-1] == 2
    assert misses.get_ydata()[-1] == 2 and hits.get_ydata()[0] == 0
    assert result._repr_png_().startswith(b"\x89PNG")
    assert "alpha" in result.text() and "2 hits, 2 misses" in result.text()


def test_plot_falls_back_to_cache_entries_without_session_compiles(filled):
    sh, magics, a, b = filled
    fresh = GpuCacheMagics(sh)           # a new session: no compiles, no lookups yet
    try:
        sh.register_magics(fresh)
        result = gpucache(sh, "plot")
    finally:
        fresh.close()
        sh.register_magics(magics)
    assert result.compile_source == "cache entries"
    bars, lookups = result.figure.axes
    assert sorted(p.get_width() for p in bars.patches) == pytest.approx(
        sorted([a.meta["compile_seconds"], b.meta["compile_seconds"]]))
    assert "cache entries" in bars.get_title()
    assert all(line.get_ydata()[-1] == 0 for line in lookups.get_lines())


# -- the session recorder ---------------------------------------------------------------------

def test_recorder_counts_and_unsubscribes_on_close(shell):
    sh, magics = shell
    rec = magics.recorder
    assert rec in events._subscribers
    compile_cached(ALPHA, (), ARCH)
    compile_cached(ALPHA, (), ARCH)
    s = rec.summary()
    assert (s["hits"], s["memory_hits"], s["misses"], s["compiles"]) == (1, 1, 1, 1)
    assert rec.compiles[0].name == "alpha" and rec.compiles[0].arch == ARCH and rec.in_flight == {}
    magics.close()
    assert rec not in events._subscribers and not rec.recording
    compile_cached(ALPHA, (), ARCH)
    assert rec.summary()["hits"] == 1
    magics.close()                       # twice is harmless


def test_a_failed_compile_is_recorded(shell):
    from gpunb import CompileError

    sh, magics = shell
    with pytest.raises(CompileError):
        compile_cached('extern "C" __global__ void bad(float* x) { x[0] = y; }', (), ARCH)
    s = magics.recorder.summary()
    assert s["failed_compiles"] == 1 and s["compiles"] == 0 and s["misses"] == 1
    assert "1 failed" in gpucache(sh).text()


def test_a_thousand_hits_are_counted_cheaply():
    with events.subscribed(rec := SessionRecorder(start=False)):
        for i in range(1000):
            events.emit(events.CacheHit("k" * 64, "alpha", "memory" if i % 4 else "disk"))
        events.emit(events.CacheMiss("m" * 64, "beta"))
    assert (rec.memory_hits, rec.disk_hits, rec.misses) == (750, 250, 1)
    timeline = rec.timeline()
    assert timeline[0] == (0.0, 0, 0) and timeline[-1][1:] == (1000, 1)
    assert len(timeline) <= rec.max_samples + 1


def test_the_timeline_stays_bounded_and_monotonic():
    rec = SessionRecorder(max_samples=8, start=False)
    t0 = rec.started
    for i in range(100):
        rec(events.CacheHit("k", "alpha", "memory", time=t0 + i))
        if i % 10 == 0:
            rec(events.CacheMiss("m", "beta", time=t0 + i + 0.5))
    timeline = rec.timeline()
    assert len(timeline) <= 9 and timeline[-1] == (99.0, 100, 10)
    for column in range(3):
        values = [p[column] for p in timeline]
        assert values == sorted(values)
