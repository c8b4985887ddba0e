"""JupyterLab and headless Chromium for the browser tests: find the browser, start and stop a
server, and drive a notebook (Run All, samples of running cells, DOM facts, screenshots).

No browser is ever downloaded: playwright drives the system's Chromium (Debian's ``chromium``
package, ``apt-get install chromium`` as root) or the one named by ``GPUNB_CHROMIUM``.

DOM facts used (JupyterLab 4, ipywidgets 8): a progress bar is ``.widget-hprogress`` (fill:
``.progress-bar``'s ``style.width``); tabs are ``.widget-tab .lm-TabBar-tab``; the kernel is
ready when the status bar says ``| Idle`` (the toolbar's indicator says idle before the kernel
connects); after a failed ``raises-exception`` cell, queued cells show ``[ ]:`` rather than
``[*]:``, so the running cell is the first unnumbered one while the kernel is busy.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# ipywidgets 8: a FloatProgress is .widget-hprogress (there is no .widget-progress)
PROGRESS = ".widget-hprogress"
RAW_WIDGET_REPR = re.compile(r"\b(Int|Float)Progress\(value=|\bVBox\(children=|\bHBox\(children=|"
                             r"\bHTML\(value=|\bTab\(children=")
# characters that only an emoji font draws (a box without one): hourglasses, watches, media
# symbols, and everything beyond the Basic Multilingual Plane
EMOJI_ONLY = r"[\u231A\u231B\u23E9-\u23F3\u23F8-\u23FA]|[\uD800-\uDBFF][\uDC00-\uDFFF]"


def find_chromium() -> str | None:
    named = os.environ.get("GPUNB_CHROMIUM")
    if named:
        return named if Path(named).is_file() else None
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    for module, pkg in (("playwright", "playwright"), ("jupyterlab", "jupyterlab"),
                        ("ipykernel", "ipykernel"), ("nbclient", "nbclient")):
        try:
            __import__(module)
        except ImportError:
            return f"{pkg} is not installed (pip install -e '.[browser]')"
    if find_chromium() is None:
        return ("no Chromium: install Debian's package as root (apt-get install chromium) or name "
                "one with GPUNB_CHROMIUM; the tests never download a browser")
    return None


def artifacts_dir(name: str) -> Path:
    """Where a test's screenshots go: $GPUNB_ARTIFACTS/NAME (default artifacts/browser/NAME,
    git-ignored), emptied first."""
    base = Path(os.environ.get("GPUNB_ARTIFACTS", REPO / "artifacts" / "browser"))
    out = base / name
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A JupyterLab server on 127.0.0.1 with a random token, serving ``root``; settings and
    workspaces live under ``root`` (nothing is written to the environment). Stop it with
    :meth:`stop`, which ends the server by its PID."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.port = _free_port()
        self.token = secrets.token_hex(12)
        self.proc: subprocess.Popen | None = None
        self.log = self.root.parent / "jupyterlab.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _settings(self) -> Path:
        # notebook windowing off: every cell stays in the DOM (reliable locators); no news toasts
        settings = self.root.parent / "lab-settings"
        for ext, name, value in (("notebook-extension", "tracker", {"windowingMode": "none"}),
                                 ("apputils-extension", "notification",
                                  {"checkForUpdates": False, "fetchNews": "false"})):
            d = settings / "@jupyterlab" / ext
            d.mkdir(parents=True, exist_ok=True)
            (d / f"{name}.jupyterlab-settings").write_text(json.dumps(value))
        return settings

    def start(self, env: dict | None = None, timeout: float = 90) -> "Lab":
        self.root.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, **(env or {}))
        env.update(JUPYTERLAB_SETTINGS_DIR=str(self._settings()),
                   JUPYTERLAB_WORKSPACES_DIR=str(self.root.parent / "lab-workspaces"),
                   PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])))
        cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1",
               f"--port={self.port}", f"--IdentityProvider.token={self.token}",
               f"--ServerApp.root_dir={self.root}"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-root")      # CI runs as root; jupyter refuses otherwise
        self.proc = subprocess.Popen(cmd, stdout=open(self.log, "w"), stderr=subprocess.STDOUT,
                                     env=env, cwd=self.root)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"JupyterLab exited: {self.log.read_text()[-2000:]}")
            try:
                self.api("status")
                return self
            except OSError:
                time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"JupyterLab did not answer in {timeout} s: {self.log.read_text()[-2000:]}")

    def api(self, path: str, method: str = "GET"):
        req = urllib.request.Request(f"{self.url}/api/{path}", method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read()
        return json.loads(body) if body else None

    def shutdown_sessions(self) -> None:
        """Delete every kernel session, so the next notebook opens on a fresh kernel."""
        for sess in self.api("sessions"):
            self.api(f"sessions/{sess['id']}", "DELETE")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            self.shutdown_sessions()
        except OSError:
            pass
        self.proc.terminate()          # this server only, by its PID
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


def launch_browser(playwright):
    return playwright.chromium.launch(executable_path=find_chromium(), headless=True,
                                      args=["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"])


class NotebookPage:
    """One notebook open in JupyterLab: run it, watch cells, read the DOM, take screenshots."""

    def __init__(self, browser, lab: Lab, name: str, shots: Path, width: int = 1400,
                 kernel: bool = True):
        self.lab, self.name, self.shots = lab, name, shots
        self.tags = [c.get("metadata", {}).get("tags", [])
                     for c in json.loads((lab.root / name).read_text())["cells"] if c["cell_type"] == "code"]
        self.errors: list[str] = []
        self.samples: list[dict] = []
        self.timeline: dict[str, float] = {}
        self.t0 = time.monotonic()
        self.page = browser.new_page(viewport={"width": width, "height": 1000})
        self.page.on("console", lambda m: self.errors.append(f"console: {m.text}")
                     if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        # reset: a fresh workspace, so tabs restored from an earlier run don't come back
        self.page.goto(f"{lab.url}/lab/tree/{name}?token={lab.token}&reset")
        self.panel = ".jp-NotebookPanel:visible"
        self.page.wait_for_selector(f"{self.panel} .jp-Notebook .jp-Cell", timeout=60_000)
        if kernel:    # to read stored outputs, no kernel is needed
            self.page.wait_for_function(
                "() => /\\| Idle/.test(document.querySelector('#jp-main-statusbar')?.innerText)",
                timeout=90_000)
        self.cells = self.page.locator(f"{self.panel} .jp-Notebook .jp-CodeCell")
        self.mark("open, kernel idle")

    def mark(self, what: str) -> None:
        self.timeline[what] = round(time.monotonic() - self.t0, 2)

    def tag(self, i: int) -> str:
        return self.tags[i][0] if i < len(self.tags) and self.tags[i] else f"cell{i}"

    def index(self, tag: str) -> int:
        return next(i for i, t in enumerate(self.tags) if tag in t)

    def prompt(self, i: int) -> str:
        return self.cells.nth(i).locator(".jp-InputArea-prompt").inner_text().strip()

    def _busy(self) -> bool:
        return self.page.locator(f"{self.panel} .jp-Notebook-ExecutionIndicator[data-status='busy']").count() > 0

    def output(self, i: int):
        return self.cells.nth(i).locator(".jp-Cell-outputWrapper")

    def text(self, i: int) -> str:
        out = self.output(i)
        return out.inner_text() if out.count() else ""

    # one evaluation in the page, so a cell that changes under us (the widget replaced by its
    # summary as the cell ends) is read consistently, never half way
    _SAMPLE_JS = """cell => {
        const shown = e => e.getClientRects().length > 0;
        const all = sel => Array.from(cell.querySelectorAll(sel));
        const out = cell.querySelector('.jp-Cell-outputWrapper');
        return {
            text: out ? out.innerText : '',
            progress_visible: all('%s').filter(shown).length,
            bar_fill: all('%s .progress-bar').filter(shown).map(e => parseFloat(e.style.width) || 0),
            banner: all('.gpunb-banner').filter(shown).length > 0,
            banner_text: all('.gpunb-banner').map(e => e.innerText).join(' '),
            indeterminate: all('.gpunb-indeterminate').filter(shown).length > 0,
            stderr: all("[data-mime-type='application/vnd.jupyter.stderr']").length,
        };
    }""" % (PROGRESS, PROGRESS)

    def sample(self, i: int) -> dict:
        s = self.cells.nth(i).evaluate(self._SAMPLE_JS)
        s.update(t=round(time.monotonic() - self.t0, 2), cell=self.tag(i), text=s["text"][:600])
        self.samples.append(s)
        return s

    def run_all(self, watch: set[str] = frozenset(), timeout: float = 300) -> None:
        """Run > Run All Cells, as a user would; sample (and screenshot) the cells tagged in
        ``watch`` while they run; return when the kernel has been idle for 1.5 s."""
        self.page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        self.page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
        self.mark("run all clicked")
        n = self.cells.count()
        numbered = lambda pr: re.fullmatch(r"\[\d+\]:", pr) is not None
        seen, shots_of, last_shot, idle_since = set(), {}, 0.0, None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            prompts = [self.prompt(i) for i in range(n)]
            busy = self._busy() or "[*]:" in prompts
            running = next((i for i, pr in enumerate(prompts) if not numbered(pr)), None) if busy else None
            if running is not None and running not in seen:
                seen.add(running)
                self.mark(f"{self.tag(running)} running")
            if running is not None and set(self.tags[running]) & set(watch):
                s = self.sample(running)
                k = shots_of.get(running, 0)
                if k < 3 and s["text"].strip() and time.monotonic() - last_shot > 1.5:
                    shots_of[running], last_shot = k + 1, time.monotonic()
                    try:
                        self.cells.nth(running).scroll_into_view_if_needed(timeout=3000)
                        self.output(running).screenshot(
                            path=str(self.shots / f"running_{self.tag(running)}_{k + 1}.png"), timeout=3000)
                    except Exception:      # the cell finished (and changed) while we shot it
                        pass
                time.sleep(0.15)
                continue
            if not busy and any(numbered(pr) for pr in prompts):
                idle_since = idle_since or time.monotonic()
                if time.monotonic() - idle_since > 1.5:   # idle a moment between queued cells
                    break
            else:
                idle_since = None
            time.sleep(0.25)
        else:
            self.errors.append(f"timed out after {timeout} s waiting for the notebook")
        self.mark("run finished")
        time.sleep(1.0)   # the last widget messages (the switch to the summary) land

    def cell_report(self, i: int) -> dict:
        cell = self.cells.nth(i)
        text = self.text(i)
        return {"index": i, "tag": self.tag(i), "prompt": self.prompt(i), "text": text,
                "widgets": cell.locator(".jupyter-widgets").count(),
                "error_displaying_widget": "Error displaying widget" in text or "model not found" in text,
                "raw_widget_repr": bool(RAW_WIDGET_REPR.search(text)),
                # stderr text and errors (JupyterLab renders both with the stderr mime type)
                "stderr": cell.locator("[data-mime-type='application/vnd.jupyter.stderr']").count(),
                "traceback": "Traceback (most recent call last)" in text,
                "emoji_only_chars": cell.locator(".jp-OutputArea").evaluate_all(
                    f"els => els.map(e => (e.innerHTML.match(/{EMOJI_ONLY}/g) || []).join('')).join('')")}

    def screenshot_outputs(self) -> None:
        for i in range(self.cells.count()):
            if self.cells.nth(i).locator(".jp-OutputArea-output").count():
                self.cells.nth(i).scroll_into_view_if_needed()
                self.output(i).screenshot(path=str(self.shots / f"out_{i:02d}_{self.tag(i)}.png"))

    def screenshot_pages(self, limit: int = 30, prefix: str = "page") -> None:
        """The whole notebook, one screen at a time (JupyterLab scrolls inside its own panel)."""
        scroller = self.page.locator(f"{self.panel} .jp-WindowedPanel-outer")
        total, step = scroller.evaluate("e => [e.scrollHeight, e.clientHeight - 80]")
        for k, top in enumerate(range(0, max(total, 1), max(step, 200))):
            if k >= limit:
                break
            scroller.evaluate("(e, y) => { e.scrollTop = y; }", top)
            time.sleep(0.3)
            self.page.screenshot(path=str(self.shots / f"{prefix}_{k:02d}.png"))

    def save(self) -> None:
        self.page.keyboard.press("Control+s")
        self.page.wait_for_timeout(1500)

    def write_report(self, extra: dict | None = None) -> None:
        data = {"notebook": self.name, "timeline_s": self.timeline, "samples": self.samples,
                "errors": self.errors[:50], **(extra or {})}
        (self.shots / "report.json").write_text(json.dumps(data, indent=1, default=str))

    def close(self) -> None:
        self.page.close()
