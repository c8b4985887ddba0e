"""Run the array API conformance suite (data-apis/array-api-tests) against gpunb.

The suite is vendored under ``tools/array_api_tests`` (pinned commits: its README); nothing is
fetched at run time. Needs pytest, hypothesis, ndindex and pytest-json-report (pytest-xdist for
``-n``)::

    python tools/array_api/run.py                       # the whole suite, on the GPU
    python tools/array_api/run.py -n 8 --max-examples 20 --json report.json
    python tools/array_api/run.py -- -k test_sum         # more pytest arguments after --
    python tools/array_api/run.py --collect-only         # no GPU needed: does it start?
    python tools/array_api/run.py --summarize report.json

Known failures are listed, with a reason each, in ``tools/array_api/xfails.txt`` (the suite's
``--xfails-file``). The summary counts every collected test that ran (not skipped) and its
outcome; the pass rate is passed / (passed + failed + xfailed + xpassed + errors).
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SUITE = ROOT / "tools" / "array_api_tests"
XFAILS = HERE / "xfails.txt"
API_VERSION = "2025.12"

# --collect-only without a GPU: host buffers stand in for device memory (cpu_shim.py)
_CPU_MODULE = ("exec('import sys; sys.path.insert(0, {here!r}); import cpu_shim; "
               "cpu_shim.install(); import gpunb as xp')")


def command(args) -> tuple[list[str], dict, Path]:
    """The pytest command line, its environment and its working directory."""
    suite = Path(args.suite).resolve()
    if not (suite / "array_api_tests").is_dir():
        raise SystemExit(f"the conformance suite is not at {suite} (expected array_api_tests/ "
                         "there; see tools/array_api/README.md)")
    env = dict(os.environ)
    env["ARRAY_API_TESTS_MODULE"] = (_CPU_MODULE.format(here=str(HERE)) if args.collect_only
                                     else "gpunb")
    env["ARRAY_API_TESTS_VERSION"] = API_VERSION
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    # (options as one --name=value word: the suite defines them in its conftest, so pytest's
    # first pass would take a separate value for a path and move the rootdir up)
    cmd = [sys.executable, "-m", "pytest", "array_api_tests", "-p", "no:cacheprovider",
           f"--rootdir={suite}", f"--xfails-file={Path(args.xfails).resolve()}",
           f"--max-examples={args.max_examples}"]
    if args.collect_only:
        cmd += ["--collect-only", "-q"]
    else:
        cmd += ["-q", "-rfE", "--tb=line"]
        if not args.deadline:
            cmd.append("--hypothesis-disable-deadline")
        if args.json:
            cmd += ["--json-report", f"--json-report-file={Path(args.json).resolve()}",
                    "--json-report-omit", "collectors", "log", "keywords", "streams"]
        if args.n and importlib.util.find_spec("xdist") is not None:
            cmd += ["-n", str(args.n)]
    return cmd + list(args.pytest_args), env, suite


def summarize(report: dict) -> str:
    """Counts by outcome, the pass rate, and the failing tests grouped by test function."""
    counts = collections.Counter(t["outcome"] for t in report["tests"])
    ran = sum(n for o, n in counts.items() if o != "skipped")
    passed = counts.get("passed", 0)
    lines = [f"tests: {len(report['tests'])} collected, {ran} ran: "
             + ", ".join(f"{o} {n}" for o, n in sorted(counts.items())),
             f"pass rate: {passed}/{ran} = {100 * passed / max(ran, 1):.2f}%",
             f"passed or listed in the xfails file: {passed + counts.get('xfailed', 0)}/{ran}"]
    groups = collections.defaultdict(list)
    for t in report["tests"]:
        if t["outcome"] in ("failed", "error", "xpassed"):
            groups[t["nodeid"].split("[")[0]].append(t)
    if groups:
        lines.append("not passing, and not in the xfails file:")
        for name, tests in sorted(groups.items(), key=lambda g: -len(g[1])):
            first = tests[0]
            msg = ""
            for phase in ("setup", "call", "teardown"):
                crash = (first.get(phase) or {}).get("crash")
                if crash:
                    msg = crash.get("message", "").splitlines()[0][:160] if crash.get("message") else ""
                    break
            lines.append(f"  {len(tests):4d} {name}  {first['outcome']}: {msg}")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--suite", default=str(SUITE), help="the suite's checkout (default: vendored)")
    p.add_argument("--xfails", default=str(XFAILS), help="the xfails file")
    p.add_argument("--max-examples", type=int, default=20, help="hypothesis examples per test")
    p.add_argument("-n", type=int, default=0, help="pytest-xdist workers (when installed)")
    p.add_argument("--json", help="write pytest-json-report's report here, and summarize it")
    p.add_argument("--deadline", action="store_true",
                   help="keep hypothesis' 800 ms deadline (off by default: first calls compile)")
    p.add_argument("--collect-only", action="store_true", help="only collect (needs no GPU)")
    p.add_argument("--summarize", metavar="JSON", help="only summarize an existing report")
    p.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = p.parse_args(argv)
    if args.summarize:
        print(summarize(json.loads(Path(args.summarize).read_text())))
        return 0
    cmd, env, cwd = command(args)
    rc = subprocess.call(cmd, env=env, cwd=cwd)
    if args.json and Path(args.json).exists():
        print(summarize(json.loads(Path(args.json).read_text())))
    return rc


if __name__ == "__main__":
    sys.exit(main())
