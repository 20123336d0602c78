"""The simulation window's point cloud (multi-layer LIDAR) and depth image docks."""

from __future__ import annotations

import numpy as np
import pytest

from sear.gui.simview import height_colours
from sear.gui.simwindow import SimulationWindow
from sear.project import Project
from sear.runtime.simulation import Simulation
from sear.sensors.config import Pose
from sear.sensors.depth_camera import DepthCameraConfig
from sear.sensors.files import load_sensors
from sear.sensors.lidar import LidarConfig
from sear.sensors.rgb_camera import SKY_HORIZON, SKY_ZENITH, RgbCameraConfig

pytestmark = pytest.mark.gl


@pytest.fixture
def window(qtbot, demo_copy):
    configs = [*load_sensors(demo_copy / "sensors.xml"),
               LidarConfig(name="vlp", layers_deg=(-15.0, -5.0, 5.0, 15.0), angle_step_deg=1.0, spread_deg=360.0,
                           max_range_m=100.0, pose=Pose(z=0.35)),
               DepthCameraConfig(name="depth", width_px=32, height_px=24, fov_deg=80.0, pose=Pose(x=0.3, z=0.15)),
               RgbCameraConfig(name="rgb", width_px=32, height_px=24, fov_deg=80.0, pose=Pose(x=0.3, z=0.15))]
    simulation = Simulation(Project.load(demo_copy / "demo.prj"), seed=4, sensor_configs=configs)
    w = SimulationWindow(simulation)
    qtbot.addWidget(w)
    w.show()
    w.advance(1.0)
    yield w
    w.timer.stop()
    simulation.close()


def test_the_point_cloud_is_the_scan_placed_in_the_world_and_can_be_hidden(window):
    w = window
    sensor = w.simulation.sensors.sensor("vlp")
    assert set(w.scene.cloud_items) == {"vlp"}  # the demo's planar LIDAR draws no cloud
    item = w.scene.cloud_items["vlp"]
    pos = item.pos
    # The same points worked out here: each return at range r along (cos el cos az, cos el sin az, sin el)
    # in the sensor frame, turned and moved by the sensor's pose.
    ranges = np.asarray(sensor.reading, dtype=float)
    el = np.radians([-15.0, -5.0, 5.0, 15.0])[:, None]
    az = np.radians(np.arange(360) - 180.0)[None, :]
    local = np.stack([ranges * np.cos(el) * np.cos(az), ranges * np.cos(el) * np.sin(az),
                      ranges * np.sin(el)], axis=-1)[np.isfinite(ranges)]
    origin, rotation = sensor.sensor_frame(w.simulation.state)
    assert len(local) > 100
    np.testing.assert_allclose(pos, origin + local @ rotation.T, atol=1e-3)
    assert w.commands["cloud"].isChecked() and item.visible()
    w.commands["cloud"].setChecked(False)
    assert not item.visible()
    w.commands["cloud"].setChecked(True)
    assert item.visible()


def test_height_colours_run_from_blue_to_red():
    colours = height_colours(np.linspace(0.0, 10.0, 101))
    np.testing.assert_allclose(colours[0], (0, 0, 1, 1), atol=1e-6)
    np.testing.assert_allclose(colours[50], (0, 1, 0, 1), atol=1e-6)
    np.testing.assert_allclose(colours[-1], (1, 0, 0, 1), atol=1e-6)


def test_the_depth_camera_frame_is_drawn_in_its_dock(window):
    w = window
    w._panels_drawn = 0.0
    w.draw()
    image = w.sensor_docks.panel("depth").image.image
    sensor = w.simulation.sensors.sensor("depth")
    assert image.shape == (24, 32, 3)
    depth = np.asarray(sensor.reading)
    assert np.isfinite(depth).any() and np.isnan(depth).any()  # ground below, sky above
    np.testing.assert_array_equal(image[np.isnan(depth)], 0)  # no return is black
    assert (image[np.isfinite(depth)].sum(axis=1) > 0).all()
    assert np.isfinite(depth[-1]).all() and np.isnan(depth[0]).all()  # the ground at the bottom of the image


def test_the_rgb_camera_frame_is_drawn_in_its_dock(window):
    w = window
    w._panels_drawn = 0.0
    w.draw()
    image = w.sensor_docks.panel("rgb").image.image
    frame = np.asarray(w.simulation.sensors.sensor("rgb").reading)
    assert image.shape == frame.shape == (24, 32, 3)
    np.testing.assert_array_equal(image, frame)
    # The top row looks at the sky (between its horizon and zenith colours, blue strongest); the bottom row
    # at the ground, no sky colour there.
    low, high = np.minimum(SKY_HORIZON, SKY_ZENITH) * 255 - 1, np.maximum(SKY_HORIZON, SKY_ZENITH) * 255 + 1
    top = frame[0].astype(float)
    assert ((top >= low) & (top <= high)).all() and (top[:, 2] > top[:, 0]).all()
    bottom = frame[-1].astype(float)
    assert not ((bottom >= low) & (bottom <= high)).all(axis=1).any()
