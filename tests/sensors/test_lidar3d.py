"""Multi-layer (3-D) LIDAR: the presets, the range image's layout and the point cloud, against geometry."""

from __future__ import annotations

import json
import math

import numpy as np
import pybullet as p
import pytest

from sear.resources import packaged
from sear.sensors.config import Pose
from sear.sensors.lidar import LidarConfig
from sear.sensors.suite import SensorSuite
from sear.state import VehicleState

HEIGHT = 1.5
"""Height of the LIDAR above the ground plane, m."""


@pytest.fixture
def client():
    cid = p.connect(p.DIRECT)
    p.createMultiBody(0, p.createCollisionShape(p.GEOM_PLANE, physicsClientId=cid), physicsClientId=cid)
    yield cid
    p.disconnect(cid)


def preset(model_number: str) -> LidarConfig:
    presets = json.loads(packaged("sensor_presets.json").read_text(encoding="utf-8"))["presets"]
    (entry,) = [e for e in presets if e["model_number"] == model_number]
    fields = {k: tuple(v) if isinstance(v, list) else v for k, v in entry["fields"].items()}
    return LidarConfig(name="lidar", model_number=model_number, **fields)


def scan(client, config):
    suite = SensorSuite([config], rng=np.random.default_rng(0), client=client, ignore_bodies=[])
    state = VehicleState(time=0.0, position=np.array([0.0, 0.0, HEIGHT]), orientation=np.array([0.0, 0.0, 0.0, 1.0]),
                         linear_velocity=np.zeros(3), angular_velocity=np.zeros(3), wheel_angles={}, wheel_radii={})
    suite.update(state)
    return suite.sensor("lidar"), suite.read("lidar")


def test_the_vlp16_preset_has_its_datasheet_pattern():
    config = preset("Velodyne VLP-16")
    assert config.layers_deg == tuple(float(a) for a in range(-15, 16, 2))
    assert (config.angle_step_deg, config.spread_deg) == (0.2, 360.0)
    assert (config.update_rate_hz, config.max_range_m) == (10.0, 100.0)


def test_the_hdl32e_preset_has_32_layers_from_minus_30_67_to_10_67_degrees():
    layers = np.array(preset("Velodyne HDL-32E").layers_deg)
    assert len(layers) == 32 and layers[0] == pytest.approx(-30.67) and layers[-1] == pytest.approx(10.67)
    # The data sheet's 1.33° apart (the angles are rounded to 0.01°).
    assert np.diff(layers) == pytest.approx(np.full(31, 1.3335), abs=0.0101)


def test_a_vlp16_over_flat_ground_gives_a_range_image_of_the_ground(client):
    config = preset("Velodyne VLP-16")
    config.resolution_mm = 0.0
    sensor, ranges = scan(client, config)
    assert ranges.shape == (16, 1800)
    layers = np.radians(np.arange(-15, 16, 2))
    # A layer below the horizon meets the ground at HEIGHT / sin(-el) along its beam, at every azimuth;
    # the layers at and above it see nothing.
    for row, el in enumerate(layers):
        if el < 0:
            np.testing.assert_allclose(ranges[row], HEIGHT / math.sin(-el), rtol=1e-6)
        else:
            assert np.isnan(ranges[row]).all()
    image = sensor.arrays(ranges)["ranges"]
    assert image.dtype == np.float32 and image.shape == (16, 1800)
    np.testing.assert_array_equal(image[:8], ranges[:8].astype(np.float32))


def test_the_point_cloud_lies_on_the_ground_at_each_beams_azimuth(client):
    config = preset("Velodyne VLP-16")
    config.resolution_mm = 0.0
    sensor, ranges = scan(client, config)
    points = sensor.cloud(ranges)
    assert points.shape == (8 * 1800, 3)  # the eight layers below the horizon
    np.testing.assert_allclose(points[:, 2], -HEIGHT, atol=1e-5)  # the ground, 1.5 m below the sensor
    # Column i of the lowest layer (-15°) is at azimuth i·0.2° − 180°, counter-clockwise from ahead.
    az = np.radians(np.arange(1800) * 0.2 - 180.0)
    reach = HEIGHT / math.tan(math.radians(15.0))
    np.testing.assert_allclose(points[:1800, 0], reach * np.cos(az), atol=1e-5)
    np.testing.assert_allclose(points[:1800, 1], reach * np.sin(az), atol=1e-5)


def test_a_box_ahead_and_left_shows_in_the_columns_of_its_azimuth(client):
    shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=(0.25, 0.25, 3.0), physicsClientId=client)
    p.createMultiBody(0, shape, basePosition=(5.0, 5.0, 3.0), physicsClientId=client)  # 45° left of ahead
    config = preset("Velodyne VLP-16")
    _sensor, ranges = scan(client, config)
    horizon = ranges[8]  # the +1° layer: nothing but the box
    columns = np.flatnonzero(np.isfinite(horizon))
    assert len(columns) > 0
    azimuths = columns * 0.2 - 180.0
    assert azimuths.min() > 40.0 and azimuths.max() < 50.0  # the box spans 45° ± atan(0.35 / 7.07)


def test_a_planar_lidar_draws_no_point_cloud(client):
    sensor, ranges = scan(client, LidarConfig(name="lidar", pose=Pose(pitch=30.0)))
    assert np.isfinite(ranges).any() and sensor.cloud(ranges) is None
