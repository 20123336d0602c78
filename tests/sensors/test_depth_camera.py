"""The depth camera against geometry worked out here: z-depth of a wall, range limits, orientation, noise."""

from __future__ import annotations

import math

import numpy as np
import pybullet as p
import pytest

from sear.sensors.config import Pose
from sear.sensors.depth_camera import DepthCameraConfig
from sear.sensors.suite import SensorSuite
from sear.state import VehicleState


@pytest.fixture
def client():
    cid = p.connect(p.DIRECT)
    yield cid
    p.disconnect(cid)


def box(client, centre, half):
    shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=half, physicsClientId=client)
    return p.createMultiBody(0, shape, basePosition=centre, physicsClientId=client)


def state(pos=(0.0, 0.0, 1.0)):
    return VehicleState(time=0.0, position=np.array(pos, float), orientation=np.array([0.0, 0.0, 0.0, 1.0]),
                        linear_velocity=np.zeros(3), angular_velocity=np.zeros(3), wheel_angles={}, wheel_radii={})


def frame(client, config, seed=0):
    suite = SensorSuite([config], rng=np.random.default_rng(seed), client=client, ignore_bodies=[])
    suite.update(state())
    return suite.read(config.name)


def camera(**fields):
    values = dict(name="depth", width_px=40, height_px=30, fov_deg=90.0, min_range_m=0.1, max_range_m=10.0,
                  resolution_mm=0.0)
    values.update(fields)
    return DepthCameraConfig(**values)


def test_a_wall_reads_its_z_depth_in_every_pixel_corners_included(client):
    box(client, (2.0 + 0.5, 0.0, 1.0), (0.5, 20.0, 20.0))  # face at x = 2 m, square to the optical axis
    image = frame(client, camera())
    assert image.shape == (30, 40)
    np.testing.assert_allclose(image, 2.0, atol=1e-4)
    # The corner pixel's ray is longer than its depth: with a 90° field of view over 40 px the focal
    # length is 20 px, and the corner pixel's centre is (19.5, 14.5) px off the axis.
    along_ray = 2.0 * math.hypot(1.0, 19.5 / 20.0, 14.5 / 20.0)
    assert along_ray > 2.0 * 1.5 and image[0, 0] == pytest.approx(2.0, abs=1e-4)


def test_a_tilted_wall_reads_the_depth_of_each_pixel(client):
    # A wall along the line x = 3 + y (45° to the axis): pixel direction (1, -u, -v) meets it where
    # d = 3 / (1 + u), u = (c + 0.5 - w/2) / f.
    half = 50.0
    shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=(0.5, half, 20.0), physicsClientId=client)
    yaw = math.radians(45.0)
    normal = np.array([math.cos(yaw), -math.sin(yaw)])  # the box's x axis after the yaw... pointing +x, -y
    centre = np.array([3.0, 0.0]) + 0.5 * np.array([math.cos(-yaw), math.sin(-yaw)])
    p.createMultiBody(0, shape, basePosition=(centre[0], centre[1], 1.0),
                      baseOrientation=p.getQuaternionFromEuler((0, 0, -yaw)), physicsClientId=client)
    assert normal @ np.array([1.0, 1.0]) == pytest.approx(0.0, abs=1e-12)  # the face runs along x = 3 + y
    image = frame(client, camera(width_px=20, height_px=4, fov_deg=60.0))
    f = 10.0 / math.tan(math.radians(30.0))
    u = (np.arange(20) + 0.5 - 10.0) / f
    expected = 3.0 / (1.0 + u)
    np.testing.assert_allclose(image, np.broadcast_to(expected, (4, 20)), atol=1e-3)


def test_nothing_beyond_the_maximum_depth_nor_nearer_than_the_minimum(client):
    box(client, (6.0 + 0.5, 0.0, 1.0), (0.5, 20.0, 20.0))  # wall at 6 m
    far = frame(client, camera(max_range_m=5.0))
    assert np.isnan(far).all()
    near = frame(client, camera(min_range_m=6.5))
    assert np.isnan(near).all()
    control = frame(client, camera(max_range_m=7.0, min_range_m=5.0))  # the same wall within both limits
    np.testing.assert_allclose(control, 6.0, atol=1e-4)


def test_the_corners_of_a_wall_just_inside_the_maximum_depth_still_read(client):
    # z-depth, not range: the corners are 1.9 × 1.54 m away along their rays, beyond 2.0 m, but their
    # depth is 1.9 m, inside the limit.
    box(client, (1.9 + 0.5, 0.0, 1.0), (0.5, 20.0, 20.0))
    image = frame(client, camera(max_range_m=2.0))
    np.testing.assert_allclose(image, 1.9, atol=1e-4)


def test_a_box_on_the_left_shows_in_the_left_columns_and_one_above_in_the_top_rows(client):
    # Sensor frame: x forward, y left, z up. The camera is at z = 1 m.
    box(client, (3.0, 1.5, 1.0), (0.2, 0.5, 0.5))  # left of the axis, at the camera's height
    image = frame(client, camera(width_px=40, height_px=30, fov_deg=90.0))
    columns = np.flatnonzero(np.isfinite(image).any(axis=0))
    assert len(columns) > 0 and columns.max() < 20  # only in the left half
    # Expected columns from the geometry: the front face x = 2.8 spans y from 1.0 to 2.0: u = -y / x.
    f = 20.0
    left = 20.0 - 2.0 / 2.8 * f   # column of y = 2.0 (u = -0.714)
    right = 20.0 - 1.0 / 2.8 * f  # column of y = 1.0
    assert columns.min() == pytest.approx(left, abs=1.0) and columns.max() == pytest.approx(right, abs=1.0)


def test_a_box_above_the_axis_shows_in_the_top_rows(client):
    box(client, (3.0, 0.0, 2.5), (0.2, 0.5, 0.5))  # 1 to 2 m above the camera
    image = frame(client, camera(width_px=40, height_px=30, fov_deg=90.0))
    rows = np.flatnonzero(np.isfinite(image).any(axis=1))
    assert len(rows) > 0 and rows.max() < 15  # only in the top half
    # Front face x = 2.8 spans z from 1.0 to 2.0 above the camera: v = -z / x, row = 15 + v f.
    assert rows.min() == pytest.approx(15.0 - 2.0 / 2.8 * 20.0, abs=1.0)
    assert rows.max() == pytest.approx(15.0 - 1.0 / 2.8 * 20.0, abs=1.0)


def test_the_camera_follows_its_mounting_pose(client):
    box(client, (0.0, 4.0 + 0.5, 1.0), (20.0, 0.5, 20.0))  # wall at y = 4 m, left of the robot
    image = frame(client, camera(pose=Pose(yaw=90.0)))
    np.testing.assert_allclose(image, 4.0, atol=1e-4)


def test_noise_grows_with_the_square_of_the_depth_and_repeats_with_the_seed(client):
    box(client, (2.0 + 0.5, 0.0, 1.0), (0.5, 20.0, 20.0))
    config = camera(width_px=100, height_px=100, noise=True, noise_at_1m_mm=5.0)
    image = frame(client, config, seed=7)
    errors = image.astype(float).ravel() - 2.0
    sigma = 0.005 * 2.0 ** 2  # 5 mm at 1 m, times (2 m)²
    # 10,000 samples: the mean is within 4 standard errors of 0, the standard deviation within 5 %.
    assert abs(errors.mean()) < 4 * sigma / 100.0
    assert errors.std() == pytest.approx(sigma, rel=0.05)
    np.testing.assert_array_equal(frame(client, config, seed=7), image)
    assert not np.array_equal(frame(client, config, seed=8), image)
    quiet = frame(client, camera(width_px=100, height_px=100, noise=False, noise_at_1m_mm=5.0), seed=7)
    np.testing.assert_allclose(quiet, 2.0, atol=1e-4)  # noise off: exact


def test_depth_is_quantised_to_the_depth_unit(client):
    box(client, (2.0123 + 0.5, 0.0, 1.0), (0.5, 20.0, 20.0))
    image = frame(client, camera(resolution_mm=10.0))
    np.testing.assert_allclose(image, 2.01, atol=1e-5)


def test_minimum_depth_not_below_the_maximum_is_a_problem():
    assert [f for f, _ in DepthCameraConfig(name="d", min_range_m=5.0, max_range_m=5.0).problems()] == ["min_range_m"]
    assert DepthCameraConfig(name="d").problems() == []


def test_the_log_gets_the_frame_as_an_array_and_the_csv_the_centre_and_nearest_depth(client):
    box(client, (2.0 + 0.5, 0.0, 1.0), (0.5, 20.0, 20.0))
    box(client, (1.0, 0.3, 1.0), (0.1, 0.1, 0.1))  # a small box nearer, left of the axis: front face x = 0.9
    suite = SensorSuite([camera()], rng=np.random.default_rng(0), client=client, ignore_bodies=[])
    suite.update(state())
    sensor = suite.sensor("depth")
    (name, array), = sensor.arrays(sensor.reading).items()
    assert name == "depth" and array.dtype == np.float32 and array.shape == (30, 40)
    # The small box's front face (pybullet's ray test of a small box is good to a fraction of a millimetre).
    assert np.nanmin(array) == pytest.approx(0.9, abs=1e-3)
    assert suite.log_columns() == ["depth.centre", "depth.min"]
    centre, nearest = (float(v) for v in suite.log_values())
    assert centre == pytest.approx(2.0, abs=1e-4) and nearest == pytest.approx(0.9, abs=1e-3)
