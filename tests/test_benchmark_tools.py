"""benchmarks/with_tree.py: a benchmark run against another gpunb tree imports that tree's
package, also where the working tree is installed editable."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_with_tree_imports_the_given_trees_package(tmp_path):
    tree = tmp_path / "tree"
    (tree / "gpunb").mkdir(parents=True)
    (tree / "gpunb" / "__init__.py").write_text("MARK = 'the other tree'\n")
    script = tmp_path / "probe.py"
    script.write_text("import sys, gpunb\nprint(gpunb.MARK, gpunb.__file__, sys.argv[1:])\n")
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "with_tree.py"), str(tree), str(script), "x", "y"],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[:3] == ["the", "other", "tree"]
    assert str(tree / "gpunb" / "__init__.py") in r.stdout and "['x', 'y']" in r.stdout
    usage = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "with_tree.py")],
                           cwd=ROOT, capture_output=True, text=True)
    assert usage.returncode != 0 and "with_tree.py <tree>" in usage.stderr
