"""gpunb's notebook UI in a real browser: JupyterLab + headless Chromium, driven by playwright.

A notebook covering every widget and magic (compile, cache hit, compile error, a slow build
with its banner, warm with its progress bar, the kernel viewer's tabs, the cache panel's
refresh, ``%gpucache status``) runs with Run All; the DOM is checked while cells run and after;
the saved notebook is reopened and read; the project's notebooks 01-04 run too (without a GPU
they stop at their first GPU cell, which must show one clear message). Screenshots and a
report.json per test go to ``artifacts/browser/`` (``GPUNB_ARTIFACTS`` to move them).

Run: ``python -m pytest -m browser tests/browser`` (needs ``pip install -e '.[browser]'`` and
Debian's ``chromium``; skipped with the reason otherwise). Nothing here needs a GPU; with one,
the project notebooks run whole.
"""

from __future__ import annotations

import json
import re
import shutil
import time

import pytest

import chromium_lab as L

pytestmark = pytest.mark.browser

_reason = L.missing()
if _reason is not None:
    pytest.skip(f"browser tests skipped: {_reason}", allow_module_level=True)

import nbformat  # noqa: E402
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook  # noqa: E402

NOTEBOOKS = L.REPO / "notebooks"
COUNTS = re.compile(r"(\d+) hits \((\d+) memory, (\d+) disk\), (\d+) misses: (\d+) compiled in "
                    r"[\d.]+ s, (\d+) failed")


def gpu_present() -> bool:
    from gpunb.core.runtime import driver

    try:
        driver.device_info()
        return True
    except Exception:
        return False


# -- the UI notebook --------------------------------------------------------------------------

KERNEL = """%%cuda --arch sm_90
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}"""

BROKEN = """%%cuda --arch sm_90
extern "C" __global__ void broken(float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = undefined_name * 2.0f;
}"""

# 80 small kernels: a first-time build of a second or two, so the slow-build banner shows
SLOW = "%%cuda --arch sm_90\n" + "\n".join(
    f'extern "C" __global__ void k{i}(float* y, int n) {{ int j = blockIdx.x * blockDim.x + threadIdx.x; '
    f'if (j < n) y[j] = sinf(y[j]) * {i}.5f + 1.0f; }}' for i in range(80))

VIEWER = """import numpy as np
import gpunb as gp
from gpunb.widgets import KernelViewer

@gp.fuse
def softmax_denominator(x, m):
    return gp.exp(x - m[:, gp.newaxis]).sum(axis=1)

x = np.random.rand(64, 32).astype(np.float32)
KernelViewer.from_inspection(softmax_denominator.inspect(x, x.max(axis=1), arch="sm_90"))"""


def cell(src: str, *tags: str):
    c = new_code_cell(src)
    c.metadata["tags"] = list(tags)      # the checks find cells by these tags
    return c


def ui_notebook(cache_dir, slow_seconds="0.3", warm=True) -> nbformat.NotebookNode:
    setup = (f"import os\nos.environ['GPUNB_SLOW_COMPILE_SECONDS'] = {slow_seconds!r}  # the banner shows\n"
             f"os.environ['GPUNB_CACHE_DIR'] = {str(cache_dir)!r}   # cold: warm is a first-time build\n"
             "%load_ext gpunb")
    cells = [new_markdown_cell("# gpunb UI check"), cell(setup, "setup"), cell(KERNEL, "compile"),
             cell(KERNEL, "cache-hit"), cell(BROKEN, "compile-error", "raises-exception"),
             cell("%gpucache status", "status"), cell(SLOW, "slow-compile")]
    if warm:
        cells.append(cell("%gpucache warm --arch sm_90", "warm"))
    cells += [cell(VIEWER, "viewer"),
              cell("from gpunb.widgets import CacheStatusPanel\nCacheStatusPanel()", "panel"),
              cell("%gpucache status", "status-after"),
              cell("%gpucache list --limit 5 --sort compile_seconds", "list-after")]
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


# -- fixtures ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    base = tmp_path_factory.mktemp("lab")
    server = L.Lab(base / "root").start(env={"GPUNB_CACHE_DIR": str(base / "cache"),
                                             "MPLBACKEND": "module://matplotlib_inline.backend_inline"})
    yield server
    server.stop()
    assert server.proc.poll() is not None, "the JupyterLab server is still running"


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = L.launch_browser(p)
        yield b
        b.close()


class Checks:
    """Collects failures, so that one run reports every broken check at once."""

    def __init__(self):
        self.failed: list[str] = []
        self.passed: list[str] = []

    def __call__(self, ok, what: str) -> None:
        (self.passed if ok else self.failed).append(what)

    def verdict(self, page: L.NotebookPage, report: dict) -> None:
        page.write_report({"passed": self.passed, "failed": self.failed, **report})
        assert not self.failed, "\n".join(self.failed) + f"\n(report: {page.shots / 'report.json'})"


def finished(text: str) -> bool:
    """Whether a cell's first output line is gpunb's finished summary (not a frozen
    "compiling ..." / "0 of 167 done" state)."""
    first = text.strip().split("\n")[0]
    return (re.search(r"^\W*(gpunb: )?(compiled|\d+ cache hits?|failed to compile|built)\b", first)
            is not None and "compiling" not in first and " done" not in first)


def counts(text: str) -> list[tuple[int, ...]]:
    return [tuple(map(int, m)) for m in COUNTS.findall(text)]


# -- the tests --------------------------------------------------------------------------------

def test_widgets_and_magics_in_chromium(lab, browser):
    shots = L.artifacts_dir("ui")
    name = "ui_check.ipynb"
    nbformat.write(ui_notebook(lab.root.parent / "cache_ui"), lab.root / name)
    lab.shutdown_sessions()
    page = L.NotebookPage(browser, lab, name, shots)
    page.run_all(watch={"slow-compile", "warm"})
    cells = [page.cell_report(i) for i in range(page.cells.count())]
    by = {c["tag"]: c for c in cells}
    check = Checks()

    # the viewer's other tabs (computed when first selected), the panel's refresh
    extra = {}
    viewer = page.cells.nth(page.index("viewer")).locator(".widget-tab")
    code_box = viewer.locator(".gpunb-code").first
    extra["viewer source"] = code_box.inner_text()[:8000]    # (a reduction: its entry ~90 lines in)
    extra["prelude folded"] = viewer.locator("details.gpunb-prelude:not([open])").count() == 1
    viewer.screenshot(path=str(shots / "viewer_source.png"))
    for tab in ("PTX", "Resources"):
        viewer.locator(".lm-TabBar-tab", has_text=re.compile(f"^{tab}$")).click()
        page.page.wait_for_function("el => !/computed when|compiling\\.\\.\\./.test(el.innerText)",
                                    arg=viewer.element_handle(), timeout=60_000)
        extra[f"viewer {tab}"] = viewer.inner_text()[:2000]
        viewer.screenshot(path=str(shots / f"viewer_{tab.lower()}.png"))
    panel_cell = page.cells.nth(page.index("panel"))
    refresh = panel_cell.locator("button.jupyter-button", has_text="Refresh")
    extra["refresh width"] = refresh.evaluate("e => e.getBoundingClientRect().width") if refresh.count() else None
    extra["output width"] = page.output(page.index("panel")).evaluate("e => e.getBoundingClientRect().width")
    if refresh.count():
        refresh.click()
        time.sleep(1.0)
    extra["panel after refresh"] = page.text(page.index("panel"))
    page.screenshot_outputs()
    page.screenshot_pages()
    page.save()
    page.close()

    check(not [e for e in page.errors if e.startswith("pageerror") or e.startswith("timed out")],
          f"no page errors, no timeout: {page.errors[:3]}")
    for c in cells:
        check(not c["error_displaying_widget"], f"{c['tag']}: no 'Error displaying widget'")
        check(not c["raw_widget_repr"], f"{c['tag']}: no raw widget repr")
        check(not c["emoji_only_chars"], f"{c['tag']}: no characters that need an emoji font "
                                         f"({c['emoji_only_chars']!r})")
        if c["tag"] != "compile-error":
            check(c["stderr"] == 0, f"{c['tag']}: no stderr or error output")
    check("compiled" in by["compile"]["text"] and "%%cuda: saxpy" in by["compile"]["text"],
          "compile: the summary says compiled")
    check("cache hit" in by["cache-hit"]["text"], "cache-hit: says cache hit")
    err = by["compile-error"]["text"]
    check("undefined_name" in err and re.search(r"^> *\d+ \|", err, re.M) and "Traceback" not in err,
          "compile-error: the NVRTC message and the marked line, no traceback")

    slow = [s for s in page.samples if s["cell"] == "slow-compile"]
    check(any(s["banner"] for s in slow), "slow-compile: the banner was seen while it ran")
    check(not any("gpucache warm" in s["banner_text"] for s in slow),
          "slow-compile: the banner does not send the user to %gpucache warm (it builds no cell)")
    check(not any("of ?" in s["text"] for s in slow), "slow-compile: no 'kernel 1 of ?'")
    check(any(s["indeterminate"] for s in slow), "slow-compile: a moving bar while the total is unknown")
    done = by["slow-compile"]["text"]
    check("80 kernels" in done and "k0, k1, k2" in done and "and 72 more" in done
          and "k10, k11" not in done, "slow-compile: the summary counts 80 kernels, sorted naturally, elided")

    warm = [s for s in page.samples if s["cell"] == "warm"]
    fills = [max(s["bar_fill"]) for s in warm if s["bar_fill"]]
    check(any(s["progress_visible"] for s in warm), "warm: a progress bar was visible while it ran")
    check(len(fills) > 1 and fills[-1] > fills[0], f"warm: the bar filled up ({fills[:1]} -> {fills[-1:]})")
    check(any(s["banner"] for s in warm), "warm: the slow-build banner was shown for the whole build")
    check(all(s["stderr"] == 0 for s in warm), "warm: no worker log lines in the cell")
    check("built" in by["warm"]["text"], "warm: ends with the 'built ...' summary")

    check(extra["prelude folded"] and "__global__" in extra["viewer source"]
          and "gpunb's prelude" in extra["viewer source"],
          "viewer: opens on the kernel, the prelude folded above it")
    check(".target sm_90" in extra.get("viewer PTX", ""), "viewer: the PTX tab shows .target sm_90")
    check("registers" in extra.get("viewer Resources", ""), "viewer: the Resources tab shows registers")
    check(extra["refresh width"] is not None and extra["refresh width"] < min(240, extra["output width"] / 3),
          f"panel: the Refresh button is button-sized ({extra['refresh width']} of {extra['output width']} px)")
    panel_counts, status_counts = counts(extra["panel after refresh"]), counts(by["status-after"]["text"])
    check(panel_counts and status_counts and panel_counts[0] == status_counts[0],
          f"panel and %gpucache status show the same counters ({panel_counts}, {status_counts})")
    if panel_counts:
        hits, _, _, misses, compiled, failed = panel_counts[0]
        check(misses == compiled + failed and failed >= 1 and compiled > 80,
              f"counters add up: misses = compiled + failed, warm's compiles counted ({panel_counts[0]})")
    page.mark("checked")

    # The saved notebook, reopened on a fresh kernel before running anything, reads correctly.
    lab.shutdown_sessions()
    reopened = L.NotebookPage(browser, lab, name, shots, kernel=False)
    time.sleep(3)
    stored = [reopened.cell_report(i) for i in range(reopened.cells.count())]
    reopened.screenshot_pages(limit=4, prefix="saved_page")
    reopened.close()
    for c in stored:
        if c["tag"] in ("compile", "cache-hit", "compile-error", "slow-compile", "warm"):
            check(finished(c["text"]) and not c["error_displaying_widget"],
                  f"saved {c['tag']}: the final summary, no frozen progress ({c['text'][:80]!r})")
    check.verdict(page, {"cells": cells, "extra": extra, "stored": stored})


def test_executed_notebook_reads_correctly_unopened(lab, browser):
    """A notebook executed as notebooks/execute.py does (nbclient, no widget state saved) and
    opened untrusted, as the project's notebooks are, shows the finished summaries."""
    from nbclient import NotebookClient

    shots = L.artifacts_dir("stored")
    nb = ui_notebook(lab.root.parent / "cache_stored", slow_seconds="off", warm=False)
    nb.cells = nb.cells[:5]          # setup, compile, cache hit, compile error
    NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(lab.root)}}).execute()
    nb.metadata.pop("widgets", None)
    stored_text = [o.get("data", {}).get("text/plain", "") for c in nb.cells if c.cell_type == "code"
                   for o in c.outputs if o.output_type == "display_data"]
    nbformat.write(nb, lab.root / "executed.ipynb")
    page = L.NotebookPage(browser, lab, "executed.ipynb", shots, kernel=False)
    time.sleep(2)
    cells = [page.cell_report(i) for i in range(page.cells.count())]
    page.screenshot_outputs()
    page.close()
    check = Checks()
    gpunb_lines = [t for t in stored_text if t.startswith("gpunb:")]
    check(len(gpunb_lines) == 3 and not [t for t in gpunb_lines if "compiling" in t],
          f"stored text forms are the final summaries: {gpunb_lines}")
    for c in cells[1:]:
        check(finished(c["text"]) and not c["error_displaying_widget"],
              f"{c['tag']}: shows its finished summary ({c['text'][:80]!r})")
    check.verdict(page, {"cells": cells, "stored_text": stored_text})


@pytest.mark.parametrize("prefix", ["01", "02", "03", "04"])
def test_project_notebook_in_chromium(lab, browser, prefix):
    """The project's notebooks, Run All in JupyterLab. With a GPU every cell runs (errors only
    where tagged raises-exception); without one, Run All stops at the first cell tagged gpu,
    which shows GPUUnavailableError as one clear message."""
    if prefix == "04" and not gpu_present():
        pytest.skip("without a GPU, 04 repeats the UI test's cold warm (minutes of CI) before its "
                    "one GPU cell; its stored outputs are read by test_stored_project_notebook")
    src = next(NOTEBOOKS.glob(f"{prefix}_*.ipynb"))
    shutil.copy(src, lab.root / src.name)
    shots = L.artifacts_dir(f"notebook_{prefix}")
    lab.shutdown_sessions()
    page = L.NotebookPage(browser, lab, src.name, shots)
    page.run_all(timeout=400)
    cells = [page.cell_report(i) for i in range(page.cells.count())]
    page.screenshot_outputs()
    page.screenshot_pages(limit=12)
    page.close()
    nb = json.loads(src.read_text())
    check = Checks()
    check("What needs a GPU" in "".join(nb["cells"][0]["source"]), "says up front what needs a GPU")
    check(not [e for e in page.errors if e.startswith(("pageerror", "timed out"))], f"no page errors: {page.errors[:3]}")
    for c in cells:
        check(not c["error_displaying_widget"] and not c["raw_widget_repr"], f"{c['tag']}: widgets render")
    if gpu_present():
        for i, c in enumerate(cells):
            expected = "raises-exception" in page.tags[i]
            check(re.fullmatch(r"\[\d+\]:", c["prompt"]) is not None, f"cell {i} ran")
            check(expected or not c["traceback"], f"cell {i}: no unexpected error")
    else:
        first_gpu = next(i for i, t in enumerate(page.tags) if "gpu" in t)
        stop = cells[first_gpu]
        lines = [ln for ln in stop["text"].splitlines() if ln.strip()]
        check("GPUUnavailableError: No usable CUDA GPU" in stop["text"] and not stop["traceback"]
              and len(lines) <= 6, f"cell {first_gpu}: one clear GPUUnavailableError message ({lines[:8]})")
        for i, c in enumerate(cells[:first_gpu]):
            check(re.fullmatch(r"\[\d+\]:", c["prompt"]) is not None and
                  ("raises-exception" in page.tags[i] or not c["traceback"]), f"cell {i} ran cleanly")
    check.verdict(page, {"cells": cells, "gpu": gpu_present()})


@pytest.mark.parametrize("prefix", ["01", "02", "03", "04"])
def test_stored_project_notebook_reads_correctly(lab, browser, prefix):
    """The project's notebook as stored (untrusted, nothing run): every output reads as what
    happened, with no frozen progress line and no widget error. Run it on the CPU machine after
    `python notebooks/execute.py` on the GPU machine, to check the GPU run's stored outputs."""
    src = next(NOTEBOOKS.glob(f"{prefix}_*.ipynb"))
    name = f"stored_{src.name}"
    shutil.copy(src, lab.root / name)
    shots = L.artifacts_dir(f"stored_{prefix}")
    lab.shutdown_sessions()
    page = L.NotebookPage(browser, lab, name, shots, kernel=False)
    time.sleep(2)
    cells = [page.cell_report(i) for i in range(page.cells.count())]
    page.screenshot_outputs()
    page.close()
    check = Checks()
    for i, c in enumerate(cells):
        check(not c["error_displaying_widget"] and not c["raw_widget_repr"], f"cell {i}: outputs render")
        check(not re.search(r"compiling .*(of \?|so far)|\d+ of \d+ done", c["text"]),
              f"cell {i}: no frozen progress line ({c['text'][:80]!r})")
        check("raises-exception" in page.tags[i] or not c["traceback"], f"cell {i}: no unexpected traceback")
    check.verdict(page, {"cells": cells})
