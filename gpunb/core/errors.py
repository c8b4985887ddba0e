"""Exception types of gpunb.

They live in a module that imports nothing heavy so that ``import gpunb`` stays cheap and every
layer (compiler, cache, runtime, magics) can raise or catch them.
"""

from __future__ import annotations


class GPUNBError(Exception):
    """Base class of gpunb's own errors."""


class GPUUnavailableError(GPUNBError, RuntimeError):
    """No usable GPU: no driver library, no device, or a driver too old for this NVRTC.

    Compiling kernels for a named architecture and the kernel cache keep working without a GPU;
    only launching needs one.
    """

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(
            f"No usable CUDA GPU: {reason}\n"
            "Compiling kernels for a named architecture (for example arch='sm_90') and the "
            "kernel cache still work without a GPU; launching a kernel needs one."
        )


class CompileError(GPUNBError):
    """NVRTC rejected a program.

    Attributes
    ----------
    log : str
        The NVRTC log, unchanged.
    options : tuple of str
        The options NVRTC was given.
    source : str
        The program's source.
    name : str
        The program's file name as NVRTC saw it (it prefixes every log line).
    line_offset : int
        Added to NVRTC's line numbers when the source is shown, so that a ``%%cuda`` cell can
        report its own line numbers.
    """

    def __init__(self, log: str, options, source: str, name: str = "kernel.cu",
                 line_offset: int = 0):
        self.log = log.rstrip("\x00").rstrip()
        self.options = tuple(options)
        self.source = source
        self.name = name
        self.line_offset = line_offset
        super().__init__(self.render())

    def error_lines(self) -> list[tuple[int, int | None]]:
        """The (line, column) pairs that the log reports as errors, in source numbering."""
        from .compiler import parse_log_locations  # local: errors must stay import-light

        return parse_log_locations(self.log, self.name, self.source)

    def render(self) -> str:
        """The log, the options and the offending source lines marked with a caret."""
        from .compiler import render_compile_error

        return render_compile_error(self)

    def _render_traceback_(self):
        # IPython calls this instead of printing a long traceback: the cell shows the log only.
        return self.render().splitlines()


class CacheWarning(UserWarning):
    """The kernel cache could not use its directory and keeps entries in memory only."""


class KernelArgumentError(GPUNBError, TypeError):
    """Arguments given to a kernel do not match its signature."""
