"""An on-board camera (simulation window, Camera: On board: NAME) looks from outside the hull, even for a
sensor mounted inside the body (issue 13 item 12)."""

from __future__ import annotations

import numpy as np
import pytest

from sear.gui.simwindow import SimulationWindow
from sear.project import Project
from sear.runtime.simulation import Simulation
from sear.state import body_rotation

pytestmark = pytest.mark.gl


@pytest.fixture
def window(qtbot, demo_copy):
    simulation = Simulation(Project.load(demo_copy / "demo.prj"), seed=4)
    w = SimulationWindow(simulation)
    qtbot.addWidget(w)
    w.show()
    w.advance(1.0)
    yield w
    w.timer.stop()
    simulation.close()


def test_an_on_board_camera_of_a_sensor_inside_the_body_sees_from_above_the_hull(window):
    w = window
    sensor = w.simulation.sensors.sensor("accel")
    lo, hi = w.simulation.world.vehicles[0].body_mesh.bounds
    assert np.all(lo <= sensor.mount_position) and np.all(sensor.mount_position <= hi)  # mounted inside the body
    w.cameras.box.setCurrentIndex(w.cameras.box.findData("sensor:accel"))
    w.advance(0.1)
    w.draw()
    state = w.simulation.state
    eye = np.array(list(w.view.cameraPosition()), dtype=float)
    in_body = body_rotation(state).T @ (eye - state.position)
    assert in_body[2] > hi[2], (in_body, hi)  # above the hull's top, not inside it
    assert np.hypot(*(in_body[:2] - sensor.mount_position[:2])) < 0.01  # right over the mount
