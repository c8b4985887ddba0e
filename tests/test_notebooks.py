"""The notebooks under notebooks/: their format everywhere; without a GPU, every cell not
tagged ``gpu`` runs in a fresh IPython shell (cells tagged ``raises-exception`` must raise, the
others must not). On the GPU machine, ``pytest --nbval notebooks/`` runs them whole and compares
their outputs (see notebooks/README.md)."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from IPython.core.inputtransformer2 import TransformerManager

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))
TAGS = {"gpu", "raises-exception", "nbval-ignore-output", "nbval-skip"}

# Runs in a subprocess: a fresh InteractiveShell per notebook, as a kernel would give it.
RUNNER = r"""
import json, sys
import nbformat
from IPython.core.interactiveshell import InteractiveShell

nb = nbformat.read(sys.argv[1], as_version=4)
skip = set(sys.argv[2].split(",")) if sys.argv[2] else set()
shell = InteractiveShell.instance()
results = []
for i, cell in enumerate(nb.cells):
    if cell.cell_type != "code":
        continue
    tags = set(cell.metadata.get("tags", ()))
    if tags & skip:
        continue
    r = shell.run_cell(cell.source, store_history=True)
    err = r.error_in_exec or r.error_before_exec
    results.append([i, sorted(tags), None if err is None else f"{type(err).__name__}: {err}"])
print("\n@@RESULTS@@" + json.dumps(results))
"""


def _gpu_present() -> bool:
    from gpunb.core.runtime import driver

    try:
        driver.device_info()
        return True
    except Exception:
        return False


def test_there_are_four_notebooks_at_least():
    names = [p.name for p in NOTEBOOKS]
    for prefix in ("01_", "02_", "03_", "04_"):
        assert any(n.startswith(prefix) for n in names), (prefix, names)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_format(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.cells and nb.cells[0].cell_type == "markdown", "a notebook opens with what it shows"
    for cell in nb.cells:
        tags = set(cell.metadata.get("tags", ()))
        assert tags <= TAGS, (path.name, tags - TAGS)
        if cell.cell_type == "code" and not cell.source.lstrip().startswith("%%"):
            # every cell parses once IPython's syntax (%magics, x = %magic) is translated
            compile(TransformerManager().transform_cell(cell.source), f"{path.name}:cell", "exec")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_cells_that_need_no_gpu_run(path, tmp_path):
    skip = "gpu,nbval-skip" if not _gpu_present() else "nbval-skip"
    root = str(path.parent.parent)
    env = dict(os.environ, GPUNB_CACHE_DIR=str(tmp_path / "cache"), MPLBACKEND="Agg",
               GPUNB_SLOW_COMPILE_SECONDS="off",
               PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-c", RUNNER, str(path), skip], capture_output=True,
                       text=True, env=env, cwd=path.parent, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    results = json.loads(r.stdout.rsplit("@@RESULTS@@", 1)[1])
    assert results, "no cell ran"
    for index, tags, error in results:
        if "raises-exception" in tags:
            assert error is not None, f"{path.name} cell {index} is tagged to raise but did not"
        else:
            assert error is None, f"{path.name} cell {index}: {error}\n{r.stdout[-3000:]}"


# -- what a reader sees before running anything (issue 17) -------------------------------------

@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_says_up_front_what_needs_a_gpu(path):
    nb = nbformat.read(path, as_version=4)
    assert "What needs a GPU" in nb.cells[0].source, "the first cell says what needs a GPU"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_text_about_run_all_is_true(path):
    """A raises-exception cell does not stop Run All (JupyterLab and nbval go on past it): no
    markdown before one may say that Run All stops there."""
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        nxt = next((c for c in nb.cells[i + 1:] if c.cell_type == "code"), None)
        if nxt is not None and "raises-exception" in nxt.metadata.get("tags", ()):
            text = " ".join(cell.source.split())
            assert not re.search(r"Run all\W*(and nbval )?stops? (here|there)", text, re.I), (i, text)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_stored_gpunb_outputs_are_final(path):
    """gpunb's compile display is stored in its finished form (a saved notebook keeps no widget
    state, so a first "compiling ..." state would stay frozen above the result)."""
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", ()):
            text = out.get("data", {}).get("text/plain", "")
            if text.startswith("gpunb:"):
                assert not re.search(r"compiling |building |of \?|\d+ of \d+ done", text), (i, text)
