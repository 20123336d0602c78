"""`sear ARGS`, exactly as the command runs, plus a report for a test that drives its 3-D view with real X
mouse and key events (xdotool): every 0.1 s a JSON file (the first argument) says where the 3-D view lies
on the screen, its camera (centre, distance, elevation, azimuth, field of view), the window's X id, the
simulated time, the driven robot's position, every obstacle's kind and position (from the simulation),
and the text of the picked object's label. Nothing of the application is changed.

    python tests/gui/x11_view_app.py REPORT.json run PROJECT.prj [sear run options]
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from PySide6.QtCore import QPoint, QTimer

from sear.cli import main
from sear.gui import simwindow


def _reporter(window: simwindow.SimulationWindow, report: Path) -> None:
    def write() -> None:
        view = window.view
        corner = view.mapToGlobal(QPoint(0, 0))
        centre = view.opts["center"]
        world = window.simulation.world
        data = {
            "window_id": int(window.winId()),
            "view": [corner.x(), corner.y(), view.width(), view.height()],
            "camera": {"center": [centre.x(), centre.y(), centre.z()], "distance": float(view.opts["distance"]),
                       "elevation": float(view.opts["elevation"]), "azimuth": float(view.opts["azimuth"]),
                       "fov": float(view.opts["fov"])},
            "time": world.time,
            "robot": window.simulation.driven_robot.state.position.tolist(),
            "obstacles": [{"kind": o.kind, "dynamic": o.dynamic, "size": list(o.size),
                           "position": world.obstacle_pose(o)[0].tolist()} for o in world.obstacles],
            "picked": window.picked.text() if window.picked.isVisible() else None,
        }
        partial = report.with_suffix(".part")
        partial.write_text(json.dumps(data))
        os.replace(partial, report)  # the test never reads half a file

    timer = QTimer(window)
    timer.timeout.connect(write)
    timer.start(100)


def _start_with_report(report: Path):
    start = simwindow.SimulationWindow.start

    def started(self: simwindow.SimulationWindow) -> None:
        start(self)
        _reporter(self, report)

    return started


if __name__ == "__main__":
    simwindow.SimulationWindow.start = _start_with_report(Path(sys.argv[1]))  # type: ignore[method-assign]
    sys.exit(main(sys.argv[2:]))
