"""The hooks Dask loads by itself: the ``dask.sizeof`` entry point (run at ``import dask``)
and the ``distributed`` preload of :class:`~gpunb.dask.LocalGPUCluster`'s workers.

Nothing here imports gpunb's engine or ``dask.array``: the entry point runs while ``dask``
itself is being imported, so it only leaves lazy hooks keyed on the top-level module name
``gpunb`` (Dask's ``Dispatch.register_lazy``, the mechanism it uses for CuPy)."""

from __future__ import annotations

import sys


def _register() -> None:
    from . import dispatch

    dispatch.register()


def sizeof_plugin(sizeof) -> None:
    """The ``dask.sizeof`` entry point: Dask calls it with its ``sizeof`` dispatch at import.

    Hooks :func:`gpunb.dask.register` on the first gpunb object Dask sizes or tokenizes."""
    sizeof.register_lazy("gpunb", _register)
    # dask.tokenize cannot be imported yet (its imports lead back to the half-run dask.sizeof):
    # hook its tokenizer as soon as it has run
    _after_import("dask.tokenize", _hook_tokenize)


def _hook_tokenize(module) -> None:
    module.normalize_token.register_lazy("gpunb", _register)


def _after_import(name: str, then) -> None:
    """Run ``then(module)`` once module ``name`` has been executed (now, if it has been)."""
    if name in sys.modules:
        then(sys.modules[name])
        return
    sys.meta_path.insert(0, _AfterImport(name, then))


class _AfterImport:
    """A one-shot finder: finds ``name`` through the other finders and wraps its loader."""

    def __init__(self, name, then):
        self.name, self.then = name, then

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        import importlib.util

        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            spec.loader = _ThenLoader(spec.loader, self.then)
        return spec


class _ThenLoader:
    def __init__(self, loader, then):
        self._loader, self._then = loader, then

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        module.__loader__ = module.__spec__.loader = self._loader    # the real one again
        self._then(module)

    def __getattr__(self, attr):          # get_source, get_filename... for tracebacks
        return getattr(self._loader, attr)


def dask_setup(worker=None) -> None:
    """``distributed``'s preload hook: register on the worker before its first task (its task
    threads need nothing more: gpunb's runtime makes its context current in each thread)."""
    _register()
