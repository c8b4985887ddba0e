"""Import direction: every module imports alone, the engine (gpunb/core) never imports the
public functions or the package face, module-level imports have no cycle, and importing
gpunb (or any module) loads no CUDA library."""

import ast
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "gpunb"
API = ("gpunb._creation", "gpunb._manipulation", "gpunb._indexing", "gpunb._math",
       "gpunb._logic", "gpunb._sorting", "gpunb._statistics", "gpunb.linalg", "gpunb.fft",
       "gpunb.random", "gpunb.magics", "gpunb.widgets", "gpunb.cli", "gpunb.demo", "gpunb.report")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PKG.rglob("*.py")) if p.name != "__main__.py"}


def _is_module(name: str) -> bool:
    return name in MODULES


def _imports(path: Path, top_level_only: bool) -> set[str]:
    """The gpunb modules a file imports (``from pkg import name`` counts as ``pkg.name`` when
    that is a module, else as ``pkg``)."""
    tree = ast.parse(path.read_text())
    me = _module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "gpunb"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] != "gpunb":
                continue
            for a in node.names:
                full = f"{mod}.{a.name}"
                found.add(full if _is_module(full) else mod)
    return found


def test_the_engine_never_imports_the_api_or_the_face():
    bad = []
    for name, path in MODULES.items():
        if not name.startswith("gpunb.core"):
            continue
        for imported in _imports(path, top_level_only=False):
            if imported == "gpunb" or imported.startswith(API):
                bad.append(f"{name} imports {imported}")
    assert not bad, "\n".join(bad)


def test_module_level_imports_have_no_cycle():
    graph = {name: {m for m in _imports(path, top_level_only=True) if m in MODULES and m != name}
             for name, path in MODULES.items()}
    state: dict[str, int] = {}      # 1: on the stack, 2: done
    stack: list[str] = []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph[n]):
            if state.get(m) == 1:
                cycle = stack[stack.index(m):] + [m]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if m not in state:
                visit(m)
        stack.pop()
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n)


def _import_alone(name: str) -> tuple[str, int, str]:
    code = (f"import sys, importlib; importlib.import_module({name!r}); "
            "c = sorted(m for m in sys.modules if m == 'cuda' or m.startswith(('cuda.', 'cupy'))); "
            "assert not c, c")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    return name, r.returncode, r.stderr[-2000:]


def test_every_module_imports_alone_in_a_fresh_interpreter_without_cuda():
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(_import_alone, sorted(MODULES)))
    failed = [f"{name}:\n{err}" for name, rc, err in results if rc]
    assert not failed, "\n".join(failed)
    assert len(results) > 60


def test_import_gpunb_loads_only_the_face():
    code = ("import sys, gpunb; print(sorted(m for m in sys.modules if m.startswith('gpunb'))); "
            "print('numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out[0] == str(["gpunb", "gpunb._registry", "gpunb._table", "gpunb._table_sub", "gpunb._version",
                          "gpunb.core", "gpunb.core.errors"])
    assert out[1] == "False"


@pytest.mark.parametrize("code, begun", [
    ("import gpunb; gpunb.asarray", True),
    ("import gpunb as cp\ndef f():\n    return cp.zeros\nf()", True),
    ("import gpunb; getattr(gpunb, 'arange')", True),
    ("import gpunb; gpunb.sin; gpunb.asnumpy; gpunb.float32", False),   # not array-making names
    ("from gpunb import asarray", False),
    ("from gpunb import zeros as z, ones", False),
    ("from gpunb import *", False),
])
def test_the_driver_start_begins_only_where_an_array_is_about_to_be_made(code, begun):
    """An array-making name read in an expression begins cuInit and the context on a thread
    (core/runtime/early.py) while its modules load; an import statement never does (a fork
    after it must leave children able to use CUDA). Without a driver the thread just ends."""
    probe = code + ("\nimport sys\ne = sys.modules.get('gpunb.core.runtime.early')\n"
                    "print(e is not None and e._thread is not None)")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out[-1] == str(begun)


def test_the_start_up_fills_the_drivers_time(tmp_path):
    """early.wait (fake driver calls, no GPU): the warm modules are imported on the caller's
    thread while the start-up thread is still in the driver, the binding's import is begun
    before the context is made and let go only as the context's creation starts (its long
    stretches under the GIL must not delay that driver call), and wait returns only when the
    start-up is done."""
    (tmp_path / "warm_probe.py").write_text(
        "from gpunb.core.runtime import early\nALIVE = early._thread.is_alive()\n")
    code = f"""
import sys, threading, time
sys.path.insert(0, {str(tmp_path)!r})
from gpunb.core.runtime import early, libcuda
gate, calls = threading.Event(), []
libcuda.lib = lambda: None
libcuda.init = lambda: (gate.wait(10), ("CUDA_SUCCESS", (13, 0), 1))[1]
libcuda.any_context_active = lambda: False
GO = []
early.preload = lambda go=None: (GO.append(go), calls.append(("preload", go is not None and not go.is_set())))
def retain(ordinal, before=None):
    before()
    calls.append(("go set before the context", GO[0].is_set()))
    calls.append(("retain", ordinal))
libcuda.retain_primary = retain
def access():
    early.start(("warm_probe",))
access()
time.sleep(0.05)        # (the first array's own imports, in the real sequence)
threading.Timer(0.5, gate.set).start()
t = time.perf_counter()
early.wait()
import warm_probe
print(calls == [("preload", True), ("go set before the context", True), ("retain", 0)], warm_probe.ALIVE, time.perf_counter() - t > 0.4,
      early._thread.is_alive())
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == ["True", "True", "True", "False"]


def test_the_start_up_leaves_a_cuda_already_in_use_alone():
    """early (fake driver calls, no GPU): where some device's primary context is active (another
    library uses CUDA in this process), the start-up retains no context and imports nothing;
    two threads reading an array-making name at once begin one start-up."""
    code = """
import threading
from gpunb.core.runtime import early, libcuda
calls = []
libcuda.lib = lambda: None
libcuda.init = lambda: ("CUDA_SUCCESS", (13, 0), 2)
libcuda.any_context_active = lambda: True
libcuda.retain_primary = lambda ordinal, before=None: calls.append(("retain", ordinal))
early.preload = lambda go=None: calls.append("preload")
starts = []
make = threading.Thread
early.threading.Thread = lambda *a, **k: (starts.append(k.get("name")), make(*a, **k))[1]
def access():
    early.start(("json",))
readers = [make(target=access) for _ in range(4)]
for r in readers: r.start()
for r in readers: r.join()
early.wait()
print(calls == [], starts == ["gpunb-driver-start"])
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == ["True", "True"]
