"""Run the notebooks in a fresh kernel each and store their outputs, as nbval compares them.

Run on the GPU machine, from the repository root::

    python notebooks/execute.py            # every notebook, in place
    python notebooks/execute.py 03         # those whose name starts with 03

Each notebook runs with an empty temporary kernel cache (so 04's cold-against-warm story holds)
and matplotlib's inline backend. Cells tagged ``raises-exception`` may fail; any other error
stops with the cell's traceback.
"""

import os
import sys
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient

here = Path(__file__).resolve().parent
prefixes = sys.argv[1:]
for path in sorted(here.glob("*.ipynb")):
    if prefixes and not path.name.startswith(tuple(prefixes)):
        continue
    nb = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory() as cache:
        os.environ["GPUNB_CACHE_DIR"] = cache
        NotebookClient(nb, timeout=600, kernel_name="python3",
                       resources={"metadata": {"path": str(here)}}).execute()
    # the widgets' saved state (hundreds of kB for the kernel viewer) is a browser's concern:
    # nbval compares the outputs' text forms
    nb.metadata.pop("widgets", None)
    nbformat.write(nb, path)
    print("executed", path.name)
