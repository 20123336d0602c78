"""The simulation window's Free camera with real key and mouse events (pytest-qt under Xvfb): held Z
cannot take it under the terrain, and choosing Free again in the Camera box puts it back on the robot."""

from __future__ import annotations

import math

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

from sear.gui.simwindow import SimulationWindow
from sear.project import Project
from sear.runtime.simulation import Simulation

pytestmark = pytest.mark.gl


@pytest.fixture
def window(qtbot, demo_copy):
    simulation = Simulation(Project.load(demo_copy / "demo.prj"), seed=4)
    w = SimulationWindow(simulation)
    qtbot.addWidget(w)
    w.show()
    w.view.setFocus()
    w.advance(0.5)
    yield w
    w.timer.stop()
    simulation.close()


def _eye(view) -> np.ndarray:
    """The eye of pyqtgraph's orbit camera: `distance` from the centre, `elevation` up, `azimuth` round."""
    c, o = view.opts["center"], view.opts
    e, a = math.radians(o["elevation"]), math.radians(o["azimuth"])
    return np.array([c.x(), c.y(), c.z()]) + o["distance"] * np.array(
        [math.cos(e) * math.cos(a), math.cos(e) * math.sin(a), math.sin(e)])


def test_held_z_stops_the_free_camera_above_the_ground(window):
    w = window
    w.timer.stop()
    ground = w.simulation.world.terrain  # the demo's terrain: its highest point bounds the ground anywhere
    start = _eye(w.view)
    QTest.keyPress(w.view, Qt.Key.Key_Z)
    for _ in range(400):  # 400 frames of Z: 2 % of the distance each, far below the ground unclamped
        w.frame()
    QTest.keyRelease(w.view, Qt.Key.Key_Z)
    eye = _eye(w.view)
    assert eye[2] < start[2] - 1.0  # positive control: Z did move the camera down
    xy = eye[:2]
    near = np.linalg.norm(ground.mesh.vertices[:, :2] - xy, axis=1) < 3.0
    assert near.any()  # the eye is over the terrain
    assert eye[2] >= ground.mesh.vertices[near, 2].min() + 0.45, eye


def test_choosing_free_again_puts_the_camera_back_on_the_robot(window):
    w = window
    w.timer.stop()
    first = dict(w.view.opts)
    QTest.mousePress(w.view, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, QPoint(700, 60))
    for y in range(60, 400, 20):
        QTest.mouseMove(w.view, QPoint(700 - y, y))
    QTest.mouseRelease(w.view, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, QPoint(300, 400))
    assert w.view.opts["azimuth"] != pytest.approx(first["azimuth"], abs=5)  # the drag orbited
    box = w.cameras.box
    assert box.currentData() == "free"
    box.activated.emit(box.currentIndex())  # what choosing the entry in use does (Qt emits no change)
    robot = w.simulation.state.position
    centre = w.view.opts["center"]
    assert np.allclose([centre.x(), centre.y(), centre.z()], robot, atol=1e-6)
    assert (w.view.opts["distance"], w.view.opts["elevation"], w.view.opts["azimuth"]) == (8.0, 25, -135)
