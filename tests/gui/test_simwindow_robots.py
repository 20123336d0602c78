"""The simulation window with several robots: every robot drawn where it is, Tab chooses the robot the
keys drive and the camera follows, and the status bar and HUD say which (issue 16 item 2); the sensor
docks show the driven robot's own sensors (issue 22)."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from sear.gui.simwindow import SimulationWindow
from sear.project import Project
from sear.runtime.simulation import Simulation

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
    for run, (body_item, _hull, _wheels) in zip(w.simulation.robots, w.scene.robot_items, strict=True):
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


def test_a_double_click_on_a_robot_in_the_objects_dock_drives_it_and_the_camera_follows(window):
    w = window
    _west, east = w.simulation.robots
    objects = w.objects
    row = objects.rows[("robot", 1)]
    assert objects.rows[("robot", 0)].text(0) == "west (robot, driven)" and row.text(0) == "east (robot)"
    w.objects_dock.show()
    objects.scrollToItem(row)
    place = objects.visualItemRect(row).center()
    assert objects.itemAt(place) is row
    # A double click as the mouse makes it: a click, then the second press (Qt's double-click event).
    QTest.mouseClick(objects.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, place)
    QTest.mouseDClick(objects.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, place)
    assert w.simulation.driven == 1
    assert row.text(0) == "east (robot, driven)" and row.font(0).bold()
    assert objects.rows[("robot", 0)].text(0) == "west (robot)" and not objects.rows[("robot", 0)].font(0).bold()
    assert "driving east" in w.status.text() and "robot east" in w.hud.text()
    w.view.setFocus()
    moved = _drive(w, 1.0)
    assert moved[1] > 0.3 and moved[0] < 0.02, moved  # the keys drive east now
    centre = np.array(list(w.view.opts["center"]))
    assert np.linalg.norm(centre[:2] - east.state.position[:2]) < 0.05  # the camera is on it


LIDAR_SENSORS = """<?xml version='1.0' encoding='UTF-8'?>
<sear-sensors version="1">
  <lidar name="lidar">
    <pose><x>0.0</x><z>0.16</z></pose>
    <angle_step_deg>1</angle_step_deg>
    <max_range_m>8</max_range_m>
    <spread_deg>180</spread_deg>
    <update_rate_hz>10</update_rate_hz>
  </lidar>
</sear-sensors>
"""
WALLS = """\
def init(sim):
    sim.add_wall(2.0, -1.5, 2.0, 1.5)   # ahead of alpha: its near face at x = 1.9 m
    sim.add_wall(4.0, 4.5, 4.0, 7.5)    # ahead of beta: its near face at x = 3.9 m


def main_loop(sim):
    pass
"""
FACES = {"alpha": 1.9, "beta": 3.9}
"""x (m) of the near face of the wall ahead of each robot (add_wall: 0.2 m thick, centred on its line)."""


@pytest.fixture
def lidar_window(qtbot, tmp_path):
    """Robots alpha (0, 0) and beta (0, 6 m), both facing east with a LIDAR of the same name, each with a
    wall of its own ahead at a distance of its own."""
    from tests.physics.helpers import rover_project

    project = rover_project(tmp_path)
    (tmp_path / "sensors.xml").write_text(LIDAR_SENSORS)
    (tmp_path / "walls.py").write_text(WALLS)
    project.code.sensors = tmp_path / "sensors.xml"
    project.code.user_code = tmp_path / "walls.py"
    project.robot_name = "alpha"
    beta = copy.deepcopy(project.robots[0])
    beta.name = "beta"
    beta.body.start_north = 6.0
    beta.code.user_code = None  # alpha's init() builds both walls
    project.add_robot(beta)
    simulation = Simulation(project, seed=1, output=lambda text: None)
    w = SimulationWindow(simulation)
    qtbot.addWidget(w)
    w.show()
    w.advance(0.5)
    yield w
    w.timer.stop()
    simulation.close()


def _ahead(w, run) -> float:
    """The LIDAR dock's return nearest to straight ahead: how far ahead of the sensor it lies (m), from the
    marks drawn; checked against the drawn robot's own wall."""
    panel = w.sensor_docks.panel("lidar")
    xs, ys = panel.returns.getData()
    right, ahead = xs[2::4], ys[0::4]  # each return drawn as a '+': its centre
    assert len(right) > 10
    return float(ahead[np.argmin(np.abs(right))])


def test_the_lidar_dock_shows_the_driven_robots_own_lidar(lidar_window):
    w = lidar_window
    alpha, beta = w.simulation.robots
    dock = next(d for d in w.sensor_docks.scan_docks if d.name == "lidar")
    assert len(w.sensor_docks.scan_docks) == 1  # one dock for the name, whichever robot is driven
    for run, other in ((alpha, beta), (beta, alpha), (alpha, beta)):
        if w.simulation.driven_robot is not run:
            QTest.keyClick(w.view, Qt.Key.Key_Tab)
            w.advance(0.2)
        assert dock.windowTitle() == f"LIDAR (lidar) — {run.name}"
        panel = w.sensor_docks.panel("lidar")
        assert panel is dock.pages.currentWidget() and panel.sensor is run.sensors.sensor("lidar")
        assert panel.sensor is not other.sensors.sensor("lidar")
        # The return straight ahead lies on this robot's wall, not on the other's.
        sensor_x = float(run.state.position[0])  # the LIDAR is mounted over the body's origin
        assert _ahead(w, run) == pytest.approx(FACES[run.name] - sensor_x, abs=0.03), run.name
        # The on-board cameras are the driven robot's sensors, and the camera box offers them.
        assert w.cameras.run is run and w.cameras.box.findData("sensor:lidar") >= 0
