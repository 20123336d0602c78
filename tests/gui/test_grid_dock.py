"""The simulation window's Grids dock (sim.show_grid) and the range map of a sparse scan (a ring of beams)."""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest

from sear.gui.griddock import UNKNOWN, grid_rgba
from sear.gui.simwindow import SimulationWindow
from sear.runtime.simulation import Simulation
from sear.sensors.lidar import LidarConfig
from sear.state import quaternion_to_euler

from ..physics.helpers import rover_project

pytestmark = pytest.mark.gl


def test_grid_colours_run_from_white_to_black_with_unknown_apart():
    rgba = grid_rgba(np.array([[0.0, 1.0], [0.25, np.nan]], dtype=np.float32))
    assert rgba[0, 0].tolist() == [255, 255, 255, 255] and rgba[0, 1].tolist() == [0, 0, 0, 255]
    assert rgba[1, 0].tolist() == [191, 191, 191, 255]          # 255 x 0.75, cut to an integer
    assert rgba[1, 1].tolist() == [*UNKNOWN, 255]


def _window(qtbot, tmp_path, code: str, sensors=()) -> SimulationWindow:
    project = rover_project(tmp_path / "p")
    project.code.user_code = tmp_path / "p" / "robot.py"
    project.code.user_code.write_text(textwrap.dedent(code))
    simulation = Simulation(project, sensor_configs=list(sensors), output=lambda text: None)
    w = SimulationWindow(simulation)
    qtbot.addWidget(w)
    w.show()
    w.timer.stop()
    return w


def test_a_grid_user_code_shows_appears_in_its_dock_in_place_with_the_robot(qtbot, tmp_path):
    w = _window(qtbot, tmp_path, """\
        import math

        def main_loop(sim):
            sim.show_grid([[0.0, 1.0, 0.5], [math.nan, 1.0, 0.0]], x=-1.0, y=2.0, cell=0.5, title="map")
        """)
    try:
        w.advance(0.5)
        assert w.sensor_docks.grid_dock is None  # positive control: not before the user code shows one
        w.start_user_code()
        w.advance(0.5)
        w.draw()
        w.set_paused(True)
        w.refresh_docks()
        qtbot.waitUntil(lambda: w.sensor_docks.grid_dock is not None and w.sensor_docks.grid_dock.isVisible())
        plot = w.sensor_docks.grid_tabs.plots["map"]
        assert [w.sensor_docks.grid_tabs.tabText(i) for i in range(w.sensor_docks.grid_tabs.count())] == ["map"]
        rect = plot.image.mapRectToParent(plot.image.boundingRect())
        assert (rect.x(), rect.y(), rect.width(), rect.height()) == pytest.approx((-1.0, 2.0, 1.5, 1.0))
        shown = plot.image.image
        assert shown.shape == (2, 3, 4)
        assert shown[0, 1, :3].tolist() == [0, 0, 0] and shown[0, 0, :3].tolist() == [255, 255, 255]
        assert shown[1, 0, :3].tolist() == list(UNKNOWN)
        # The robot's 0.3 m arrowhead: tip 0.18 m ahead of the robot, base corners 0.12 m behind; their
        # centroid is 0.02 m behind the robot's position, along its heading.
        state = w.simulation.state
        yaw = quaternion_to_euler(state.orientation)[2]
        xs, ys = plot.robot.getData()
        centre = np.array([np.mean(xs[:3]), np.mean(ys[:3])])
        expected = state.position[:2] + (0.18 - 0.12 * 2) / 3 * np.array([math.cos(yaw), math.sin(yaw)])
        assert np.allclose(centre, expected, atol=1e-6)
    finally:
        w.simulation.close()


def test_a_ring_of_beams_is_drawn_as_spokes_and_a_dense_scan_is_not(qtbot, tmp_path):
    ring = LidarConfig(name="ring", angle_step_deg=11.25, spread_deg=360.0, max_range_m=5.0)
    dense = LidarConfig(name="dense", angle_step_deg=1.0, spread_deg=360.0, max_range_m=5.0)
    w = _window(qtbot, tmp_path, """\
        def init(sim):
            sim.add_wall(-3.0, -3.0, 3.0, -3.0)
            sim.add_wall(3.0, -3.0, 3.0, 3.0)

        def main_loop(sim):
            pass
        """, sensors=[ring, dense])
    try:
        w.advance(0.5)
        w.refresh_docks()
        ring = w.sensor_docks.panel("ring")
        xs, ys = ring.beams.getData()
        returns = ring.sensor.plot_points(w.simulation.sensors.read("ring"))
        assert 4 <= len(returns) < 32                 # the two walls in range, open sky beyond
        assert len(xs) == 2 * len(returns)
        assert np.all(xs[0::2] == 0.0) and np.all(ys[0::2] == 0.0)   # every spoke from the sensor
        assert np.allclose(np.column_stack([xs[1::2], ys[1::2]]), returns)
        assert w.sensor_docks.panel("dense").beams is None
    finally:
        w.simulation.close()
