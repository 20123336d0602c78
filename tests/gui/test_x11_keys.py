"""The real application driven with real X events (xdotool under Xvfb), as a user would: click the
Camera box, close its list with Esc, hold U: the robot drives (issue 13 item 1); Ctrl+Q ends the process
with status 0."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tests.xserver import xdotool

pytestmark = pytest.mark.gl

HELPER = Path(__file__).with_name("x11_app.py")


def _xdotool(*args: str) -> None:
    xdotool(*args)


def _report(path: Path, timeout: float = 90.0, after: float | None = None) -> dict:
    """The application's latest report (tests/gui/x11_app.py), newer than simulated time `after`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            data = json.loads(path.read_text())
            if after is None or data["time"] > after:
                return data
        time.sleep(0.1)
    raise AssertionError(f"no report from the application in {timeout} s")


def _when(path: Path, condition, what: str, timeout: float = 60.0) -> dict:
    """The first report for which `condition(report)` holds, within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    data = _report(path)
    while not condition(data):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not seen in {timeout} s (last report {data})")
        time.sleep(0.1)
        data = _report(path)
    return data


def _settled(path: Path) -> dict:
    """A report once the robot stands still on the ground after its drop (two reports a second apart at
    the same x, y; its suspension may still bounce a little)."""
    last = _report(path)
    for _ in range(60):
        time.sleep(1.0)
        now = _report(path, after=last["time"])
        if np.linalg.norm(np.subtract(now["position"][:2], last["position"][:2])) < 0.01:
            return now
        last = now
    raise AssertionError("the robot never came to rest")


@pytest.mark.skipif(not shutil.which("xdotool"), reason="xdotool is not installed (make test installs it with "
                    "packaging/install-system-deps.sh)")
@pytest.mark.skipif(not os.environ.get("DISPLAY"), reason="needs an X display (tests/conftest.py starts Xvfb)")
def test_click_the_camera_box_then_u_drives_and_ctrl_q_quits(demo_copy, tmp_path):
    report = tmp_path / "report.json"
    log = tmp_path / "run.csv"
    process = subprocess.Popen([sys.executable, str(HELPER), str(report), "run", str(demo_copy / "demo.prj"),
                                "--log", str(log)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        rest = _settled(report)
        _xdotool("windowfocus", "--sync", str(rest["window_id"]))
        # Positive control: at rest, with no key held, the robot stays where it is.
        time.sleep(1.0)
        still = _report(report, after=rest["time"])
        assert np.linalg.norm(np.subtract(still["position"][:2], rest["position"][:2])) < 0.01
        x, y, width, height = rest["camera_box"]
        _xdotool("mousemove", "--sync", str(x + width // 2), str(y + height // 2))
        _xdotool("click", "1")
        _when(report, lambda r: r["popup_open"], "the click on the Camera box opens its list")
        _xdotool("key", "Escape")
        closed = _when(report, lambda r: not r["popup_open"], "Esc closes the list")
        closed = _report(report, after=closed["time"] + 0.3)
        assert closed["focus"] == "QComboBox"  # the box has the focus, as after a user's click
        _xdotool("keydown", "u")
        # Held for 1.5 s of simulated time (a loaded machine may simulate slower than the wall clock).
        _report(report, after=closed["time"] + 1.5, timeout=60.0)
        _xdotool("keyup", "u")
        driven = _report(report, after=closed["time"] + 2.0)
        moved = np.linalg.norm(np.subtract(driven["position"][:2], closed["position"][:2]))
        assert moved > 0.5, moved  # 1.5 s of full throttle, 40 N on 20 kg: about 2 m
        assert driven["focus"] == "QComboBox" and not driven["popup_open"]
        _xdotool("key", "ctrl+q")
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, stderr
    assert "demo: route of 4 corners" in stdout
    rows = log.read_text().splitlines()
    assert len(rows) > 60  # the log was closed properly on the way out: more than a second of it
