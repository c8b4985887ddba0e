"""``%gputimeit``: IPython's ``%timeit`` for GPU code, on :func:`gpunb.profiler.benchmark`.

``%gputimeit a @ b`` (or ``%%gputimeit`` over a cell) runs the statement as the body of a
function in the notebook's namespace, warms it up, then times runs until ``-n`` of them or
``-t`` seconds, each waited for on the GPU: the line printed gives the host time (CPU) and the
GPU time of the work each run queued, as ``cupyx.profiler.benchmark`` prints them. ``-o``
returns the result (``cpu_times``, ``gpu_times`` in seconds). Options come before the
statement, as with ``%timeit``.
"""

from __future__ import annotations

import textwrap

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class

_NAME = "__gpunb_gputimeit__"


@magics_class
class TimingMagics(Magics):
    """``%gputimeit`` / ``%%gputimeit``."""

    @line_cell_magic
    def gputimeit(self, line: str, cell: str | None = None):
        """Time a statement's host and GPU time (see :mod:`gpunb.magics.timing`).

        Usage: ``%gputimeit [-n N] [-w W] [-t SECONDS] [-o] statement`` or ``%%gputimeit
        [options] [setup]`` over a cell: N timed runs at most (default 10000), W untimed ones
        first (default 10), at most SECONDS of timed runs (default 2), ``-o`` returns the
        result.
        """
        opts, stmt = self.parse_options(line, "n:w:t:o", posix=False, strict=False)
        setup = ""
        if cell is not None:
            setup, stmt = stmt, cell
        if not stmt.strip():
            raise UsageError("%gputimeit needs a statement to time: %gputimeit a @ b")
        try:
            n = int(opts.get("n", 10000))
            warmup = int(opts.get("w", 10))
            seconds = float(opts.get("t", 2.0))
        except ValueError as e:
            raise UsageError(f"%gputimeit: -n and -w take integers, -t seconds: {e}") from None
        if n < 1 or warmup < 0 or seconds <= 0:
            raise UsageError("%gputimeit: -n must be positive, -w non-negative, -t positive")
        ns = self.shell.user_ns
        if setup.strip():
            self.shell.run_cell(setup)
        source = f"def {_NAME}():\n" + textwrap.indent(textwrap.dedent(stmt), "    ") + "\n"
        try:
            code = compile(source, "<gputimeit>", "exec")
        except SyntaxError as e:
            raise UsageError(f"%gputimeit: the statement does not compile: {e.msg} "
                             f"(line {max((e.lineno or 2) - 1, 1)})") from None
        local: dict = {}
        exec(code, ns, local)   # noqa: S102 - the user's own statement, as %timeit runs it
        from ..profiler import benchmark

        name = stmt.strip().splitlines()[0]
        result = benchmark(local[_NAME], n_repeat=n, n_warmup=warmup, max_duration=seconds,
                           name=name if len(name) <= 40 else name[:37] + "...")
        print(result)
        return result if "o" in opts else None
