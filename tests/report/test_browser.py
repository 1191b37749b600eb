"""Open the ``annokit demo`` report in headless Chromium and check it like a reader would.

Drives Chromium through the DevTools protocol over ``--remote-debugging-pipe``
(NUL-separated JSON on file descriptors 3 and 4), so no websocket library and
no network port are needed. Asserts: no console errors or exceptions, no
network request other than the file:// page itself, every figure (with an
SVG) and every table present; saves a screenshot to ``docs/report.png``.
Skipped only when no Chromium executable is found.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from annokit.cli import main

REPO = Path(__file__).resolve().parents[2]
SCREENSHOT = REPO / "docs" / "report.png"

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-extensions", "--disable-default-apps", "--mute-audio",
                  "--hide-scrollbars", "--remote-debugging-pipe"]


def _chromium() -> str | None:
    for name in (os.environ.get("ANNOKIT_CHROMIUM"), "chromium", "chromium-browser",
                 "google-chrome", "google-chrome-stable"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


class DevToolsPipe:
    """A minimal Chrome DevTools Protocol client over --remote-debugging-pipe."""

    def __init__(self, executable: str, user_data_dir: str):
        to_child_r, self._to_child_w = os.pipe()
        self._from_child_r, from_child_w = os.pipe()

        def wire_fds() -> None:  # the browser reads fd 3 and writes fd 4
            a = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)  # above 4: no clobbering
            b = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [executable, *CHROMIUM_FLAGS, f"--user-data-dir={user_data_dir}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            # fds 3/4 must be placed between fork and exec; pass_fds keeps them open after it
            preexec_fn=wire_fds, pass_fds=(3, 4))  # noqa: PLW1509
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._next_id = 0
        self.events: list[dict] = []

    def send(self, method: str, params: dict | None = None, *, session: str | None = None,
             timeout: float = 30.0) -> dict:
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_child_w, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._read(timeout)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, timeout: float = 30.0) -> dict:
        for ev in self.events:
            if ev.get("method") == method:
                return ev
        deadline = time.monotonic() + timeout
        while True:
            ev = self._read(max(0.1, deadline - time.monotonic()))
            self.events.append(ev)
            if ev.get("method") == method:
                return ev

    def drain(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self._from_child_r], [], [], 0.05)
            if ready or b"\0" in self._buf:
                try:
                    self.events.append(self._read(0.5))
                except TimeoutError:
                    return

    def _read(self, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._from_child_r], [], [], max(0.0, left))
            if not ready:
                raise TimeoutError("no message from Chromium in time")
            chunk = os.read(self._from_child_r, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe: "
                                   + self.proc.stderr.read().decode(errors="replace")[-2000:])
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def close(self) -> None:
        with contextlib.suppress(Exception):  # the browser may already be gone
            self.send("Browser.close", timeout=5)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_child_w)
        os.close(self._from_child_r)


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo") / "report"
    result = CliRunner().invoke(main, ["demo", "--out", str(out), "--n-boot", "200"])
    assert result.exit_code == 0, result.output
    assert f"report written to {out / 'report.html'}" in result.output
    return out / "report.html"


def test_report_in_headless_chromium(demo_report: Path):
    executable = _chromium()
    if executable is None:
        pytest.skip("Chromium not found (install Debian's `chromium` package or set "
                    "ANNOKIT_CHROMIUM to a Chrome/Chromium executable)")
    url = demo_report.resolve().as_uri()
    with tempfile.TemporaryDirectory(prefix="annokit-chromium-") as profile:
        cdp = DevToolsPipe(executable, profile)
        try:
            targets = cdp.send("Target.getTargets")["targetInfos"]
            page = next(t for t in targets if t["type"] == "page")
            session = cdp.send("Target.attachToTarget", {"targetId": page["targetId"],
                                                         "flatten": True})["sessionId"]
            for domain in ("Page", "Runtime", "Log", "Network"):
                cdp.send(f"{domain}.enable", session=session)
            cdp.send("Emulation.setDeviceMetricsOverride", {
                "width": 1280, "height": 1600, "deviceScaleFactor": 1, "mobile": False},
                session=session)
            cdp.events.clear()
            cdp.send("Page.navigate", {"url": url}, session=session)
            cdp.wait_for("Page.loadEventFired", timeout=60)
            cdp.drain(1.0)
            counts = json.loads(cdp.send("Runtime.evaluate", {
                "expression": """JSON.stringify({
                    figures: document.querySelectorAll('figure.report-figure').length,
                    figures_with_svg: document.querySelectorAll('figure.report-figure svg').length,
                    figure_ids: Array.from(document.querySelectorAll('figure.report-figure'),
                                           f => f.id),
                    tables: Array.from(document.querySelectorAll('table'), t => t.id),
                    empty_tables: Array.from(document.querySelectorAll('table'))
                        .filter(t => t.querySelectorAll('tbody tr').length === 0).length,
                    svg_heights: Array.from(document.querySelectorAll('figure svg'),
                                            s => s.getBoundingClientRect().height),
                    title: document.title})""",
                "returnByValue": True}, session=session)["result"]["value"])
            shot = cdp.send("Page.captureScreenshot", {"format": "png"}, session=session)
        finally:
            cdp.close()

    events = cdp.events
    errors = [e["params"] for e in events
              if e.get("method") == "Runtime.exceptionThrown"
              or (e.get("method") == "Runtime.consoleAPICalled"
                  and e["params"].get("type") in ("error", "assert"))
              or (e.get("method") == "Log.entryAdded"
                  and e["params"]["entry"].get("level") == "error")]
    assert errors == [], f"console errors: {errors}"
    requested = [e["params"]["request"]["url"] for e in events
                 if e.get("method") == "Network.requestWillBeSent"]
    # inline images (data: URLs) are part of the page itself, not fetched from anywhere
    fetched = [u for u in requested if not u.startswith("data:")]
    assert fetched == [url], f"unexpected requests: {fetched}"

    n_models = 4
    expected_figures = (["figure-per-bin"]
                        + [f"figure-reliability-{i}" for i in range(n_models)]
                        + ["figure-error-histograms", "figure-entropy-histograms",
                           "figure-subsampling", "figure-annotator-pairs"])
    assert counts["figure_ids"] == expected_figures
    assert counts["figures_with_svg"] == counts["figures"] == len(expected_figures)
    assert all(h > 100 for h in counts["svg_heights"]), counts["svg_heights"]
    expected_tables = (["table-global", "table-comparisons", "table-bins", "table-ceiling"]
                       + [f"table-bins-model-{i}" for i in range(n_models)]
                       + ["table-recommendation", "table-subsampling", "table-annotators",
                          "table-metrics", "table-dataset", "table-dataset-labels"])
    assert counts["tables"] == expected_tables
    assert counts["empty_tables"] == 0
    assert counts["title"].startswith("annokit demo")

    png = base64.b64decode(shot["data"])
    assert png.startswith(b"\x89PNG") and len(png) > 10_000
    SCREENSHOT.parent.mkdir(exist_ok=True)
    # written whole or not at all: tests/test_docs.py's mkdocs build may be copying docs/ on the
    # other pytest-xdist worker (mkdocs skips dot files, so it never sees the partial one)
    partial = SCREENSHOT.with_name(f".{SCREENSHOT.name}.{os.getpid()}")
    partial.write_bytes(png)
    os.replace(partial, SCREENSHOT)
