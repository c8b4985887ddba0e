"""The driver's start-up begun while the first array's modules are imported.

``cuInit`` and the primary context take about 230 ms on an H100 host, in the driver with the
GIL released; the Python around them ran one piece after another: the modules behind
``gpunb.asarray`` (12-14 ms), the first ufunc's and reduction's modules (~30 ms) and
cuda.bindings' driver module (the launches' binding, ~78 ms). So the first access to an
array-making name (``gpunb.asarray``, ``gpunb.zeros``...: :data:`gpunb._registry.EARLY`) in
an expression starts ``cuInit`` and device 0's primary context on a thread, and the Python
fills the driver's time, each piece alone so that none waits for the GIL: the name's modules
and then the ``warm`` modules (the caller's thread, during ``cuInit``), then the binding (its
own thread, during the context's creation).

Not from an import statement (``from gpunb import asarray`` at the top of a script): a
process that initialises CUDA and then forks has children that cannot use it, and CuPy,
torch and ``import gpunb`` never initialise CUDA at import, so a name imported is not a
promise of a GPU call soon. Not when CUDA is already in use in the process (another library
made a context): the device gpunb will pick is then that context's, not device 0.
"""

from __future__ import annotations

import sys
import threading

from . import libcuda

_thread: threading.Thread | None = None
_IMPORT_OPS = None      # the opcodes of `from m import x` and `from m import *`
_warm: tuple[str, ...] = ()
_found = False                      # the start-up thread loaded the driver library
_lock = threading.Lock()            # two threads reading gpunb.asarray at once start one


def start(warm: tuple[str, ...] = ()) -> None:
    """Begin the driver's start-up on a thread, once, unless the caller's caller is an import.
    ``warm``: modules for :func:`wait` to import while ``cuInit`` runs."""
    global _thread, _IMPORT_OPS, _warm
    if _thread is not None:
        return
    try:
        frame = sys._getframe(2)        # the frame reading the attribute (gpunb.__getattr__'s caller)
    except (AttributeError, ValueError):
        return
    if _IMPORT_OPS is None:
        import dis

        _IMPORT_OPS = {dis.opmap["IMPORT_FROM"], dis.opmap.get("IMPORT_STAR", -1)}
    code = frame.f_code
    # `from gpunb import x` asks hasattr() from importlib's _handle_fromlist first
    if code.co_name == "_handle_fromlist" or code.co_code[frame.f_lasti] in _IMPORT_OPS:
        return
    with _lock:
        if _thread is None:
            _warm = warm
            _thread = threading.Thread(target=_run, name="gpunb-driver-start", daemon=True)
            _thread.start()


def _run() -> None:
    global _found
    try:
        libcuda.lib()
        _found = True
        if libcuda.init()[0] != "CUDA_SUCCESS" or libcuda.any_context_active():
            return
        # The binding's import holds the GIL for long stretches of C (its modules' set-up):
        # it starts once the context's creation is under way in the driver, GIL released,
        # never while this thread waits for the GIL to make a driver call.
        started = threading.Event()
        preload(started)
        libcuda.retain_primary(0, started.set)
    except Exception:   # no driver, no device...: the driver's own probe says so, on its thread
        pass


_preloading = []


def preload(go: threading.Event | None = None) -> None:
    """Import cuda.bindings' driver module (the launches' binding) on a background thread,
    once: from the start-up thread (when ``go`` is set), else once the context exists
    (:mod:`.driver`). Its import overlaps the context's creation, or what the caller does
    next, instead of delaying the first launch. Not cuda.core, which a second thread must
    not import meanwhile (``driver.cuda_core``)."""
    if _preloading:
        return

    def run():
        if go is not None:
            go.wait(5.0)
        try:
            import cuda.bindings.driver  # noqa: F401
        except Exception:       # the import on first use raises it where it matters
            pass

    t = threading.Thread(target=run, name="gpunb-import-cuda", daemon=True)
    _preloading.append(t)
    t.start()


def wait() -> None:
    """Until the start-up thread, if one was begun, is done. Called once the first array's
    modules are imported (the driver's first probe): the ``warm`` modules are imported here
    first, while ``cuInit`` runs (the start-up thread needs the GIL only after it)."""
    global _warm
    t = _thread
    if t is None:
        return
    warm, _warm = _warm, ()
    if warm and _found and t.is_alive():
        import importlib

        for name in warm:
            try:
                importlib.import_module(name)
            except Exception:       # imported again where it is used, raising there
                pass
    t.join()
