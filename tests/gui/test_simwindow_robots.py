"""The simulation window with several robots: every robot drawn where it is, Tab chooses the robot the
keys drive and the camera follows, and the status bar and HUD say which (issue 16 item 2)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from sear.gui.simwindow import SimulationWindow
from sear.project import Project
from sear.runtime import Simulation

pytestmark = pytest.mark.gl

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "two_robots_avoid"


@pytest.fixture
def window(qtbot, tmp_path):
    shutil.copytree(EXAMPLE, tmp_path / "example")
    simulation = Simulation(Project.load(tmp_path / "example" / "two_robots.prj"), seed=2)
    w = SimulationWindow(simulation)
    qtbot.addWidget(w)
    w.show()
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow, timeout=60_000)
    w.view.setFocus()
    w.advance(1.0)  # drop and settle
    yield w
    w.timer.stop()
    w.simulation.close()


def _drive(w, seconds: float) -> list[float]:
    """Hold U for `seconds` simulated; how far (m) each robot moved."""
    before = [run.state.position[:2].copy() for run in w.simulation.robots]
    QTest.keyPress(w.view, Qt.Key.Key_U)
    w.advance(seconds)
    QTest.keyRelease(w.view, Qt.Key.Key_U)
    return [float(np.linalg.norm(run.state.position[:2] - b)) for run, b in zip(w.simulation.robots, before,
                                                                               strict=True)]


def test_tab_chooses_the_robot_the_keys_drive_and_the_camera_follows(window):
    w = window
    _west, east = w.simulation.robots
    # Every robot is drawn at its own pose.
    for run, (body_item, _hull, _wheels) in zip(w.simulation.robots, w.robot_items, strict=True):
        drawn = np.array(body_item.transform().column(3).toTuple()[:3])
        assert np.allclose(drawn, run.vehicle.pose()[0], atol=1e-4), run.name
    assert "driving west" in w.status.text() and "west" in w.hud.text()
    moved = _drive(w, 1.0)
    assert moved[0] > 0.3 and moved[1] < 0.02  # the first robot drives; the other stays put
    QTest.keyClick(w.view, Qt.Key.Key_Return)  # every robot back at its start, at rest
    w.advance(1.0)
    QTest.keyClick(w.view, Qt.Key.Key_Tab)
    assert w.simulation.driven == 1
    assert "driving east (Tab: next of 2 robots)" in w.status.text() and "robot east" in w.hud.text()
    assert w.view.hasFocus()  # Tab did not move the focus away from the 3-D view
    moved = _drive(w, 1.0)
    assert moved[1] > 0.3 and moved[0] < 0.02, moved  # now the second one
    centre = np.array(list(w.view.opts["center"]))
    assert np.linalg.norm(centre[:2] - east.state.position[:2]) < 0.05  # the camera is on it
    QTest.keyClick(w.view, Qt.Key.Key_Tab)
    assert w.simulation.driven == 0 and "driving west" in w.status.text()
