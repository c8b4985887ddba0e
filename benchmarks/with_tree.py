"""Run a benchmark with gpunb imported from another tree, to measure two versions on one
machine: ``python benchmarks/with_tree.py <tree> benchmarks/host_calls.py [args...]``, where
``<tree>`` holds a ``gpunb`` package (``git archive <rev> gpunb | tar -x -C <tree>``).

``PYTHONPATH=<tree>`` alone does not pick the tree when gpunb is installed editable (``pip
install -e .``, as the README and the GPU machine's set-up do): the install's finder comes
first in ``sys.meta_path`` and imports the working tree's package whatever the path says. This
removes that finder, then puts ``<tree>`` first on ``sys.path``. Print ``gpunb.__file__`` in
what you run to be sure which tree it measured.
"""

import runpy
import sys


def main() -> None:
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
    sys.path.insert(0, sys.argv[1])
    script = sys.argv[2]
    sys.argv = sys.argv[2:]
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
