"""`sear ARGS`, exactly as the command runs, plus a report for a test that drives it with real X events
(xdotool): while the simulation window is open, a JSON file (the first argument) says every 0.1 s where
its Camera box and its 3-D view lie on the screen, the view's camera (centre, distance, elevation, azimuth,
field of view), the window's X id, the simulated time, the robot's position, every obstacle's kind and
position (from the simulation), the picked object's label and which widget has the keyboard focus.
Nothing of the application is changed.

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


def report_every(window: QWidget, report: Path, data: Callable[[], dict], period_ms: int = 200) -> None:
    """Write `data()` as JSON to `report` every `period_ms` while `window` lives, whole each time (a
    temporary file renamed into place: the test never reads half a file)."""

    def write() -> None:
        partial = report.with_suffix(".part")
        partial.write_text(json.dumps(data()))
        os.replace(partial, report)

    timer = QTimer(window)
    timer.timeout.connect(write)
    timer.start(period_ms)


def _reporter(window: simwindow.SimulationWindow, report: Path) -> None:
    def data() -> dict:
        box = window.cameras.box
        corner = box.mapToGlobal(QPoint(0, 0))
        focus = QApplication.focusWidget()
        view = window.view
        view_corner = view.mapToGlobal(QPoint(0, 0))
        centre = view.opts["center"]
        world = window.simulation.world
        return {
            "window_id": int(window.winId()),
            "camera_box": [corner.x(), corner.y(), box.width(), box.height()],
            "popup_open": box.view().isVisible(),
            "focus": type(focus).__name__ if focus is not None else None,
            "position": window.simulation.state.position.tolist(),
            "time": window.simulation.world.time,
            "view": [view_corner.x(), view_corner.y(), view.width(), view.height()],
            "camera": {"center": [centre.x(), centre.y(), centre.z()], "distance": float(view.opts["distance"]),
                       "elevation": float(view.opts["elevation"]), "azimuth": float(view.opts["azimuth"]),
                       "fov": float(view.opts["fov"])},
            "robot": window.simulation.driven_robot.state.position.tolist(),
            "obstacles": [{"kind": o.kind, "dynamic": o.dynamic, "size": list(o.size),
                           "position": world.obstacle_pose(o)[0].tolist()} for o in world.obstacles],
            "picked": window.picked.text() if window.picked.isVisible() else None,
        }

    report_every(window, report, data, period_ms=100)


def _start_with_report(report: Path):
    start = simwindow.SimulationWindow.start

    def started(self: simwindow.SimulationWindow) -> None:
        start(self)
        _reporter(self, report)

    return started


if __name__ == "__main__":
    simwindow.SimulationWindow.start = _start_with_report(Path(sys.argv[1]))  # type: ignore[method-assign]
    sys.exit(main(sys.argv[2:]))
