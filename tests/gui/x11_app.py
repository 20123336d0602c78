"""`sear ARGS`, exactly as the command runs, plus a report for a test that drives it with real X events
(xdotool): while the simulation window is open, a JSON file (the first argument) says every 0.2 s where
its Camera box lies on the screen, the window's X id, the robot's position and which widget has the
keyboard focus. Nothing of the application is changed.

    python tests/gui/x11_app.py REPORT.json run PROJECT.prj [sear run options]
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QPoint, QTimer
from PySide6.QtWidgets import QApplication, QWidget

from sear.cli import main
from sear.gui import simwindow


def report_every(window: QWidget, report: Path, data: Callable[[], dict]) -> None:
    """Write `data()` as JSON to `report` every 0.2 s while `window` lives, whole each time (a temporary
    file renamed into place: the test never reads half a file)."""

    def write() -> None:
        partial = report.with_suffix(".part")
        partial.write_text(json.dumps(data()))
        os.replace(partial, report)

    timer = QTimer(window)
    timer.timeout.connect(write)
    timer.start(200)


def _reporter(window: simwindow.SimulationWindow, report: Path) -> None:
    def data() -> dict:
        box = window.cameras.box
        corner = box.mapToGlobal(QPoint(0, 0))
        focus = QApplication.focusWidget()
        return {
            "window_id": int(window.winId()),
            "camera_box": [corner.x(), corner.y(), box.width(), box.height()],
            "popup_open": box.view().isVisible(),
            "focus": type(focus).__name__ if focus is not None else None,
            "position": window.simulation.state.position.tolist(),
            "time": window.simulation.world.time,
        }

    report_every(window, report, data)


def _start_with_report(report: Path):
    start = simwindow.SimulationWindow.start

    def started(self: simwindow.SimulationWindow) -> None:
        start(self)
        _reporter(self, report)

    return started


if __name__ == "__main__":
    simwindow.SimulationWindow.start = _start_with_report(Path(sys.argv[1]))  # type: ignore[method-assign]
    sys.exit(main(sys.argv[2:]))
