"""Sensors on the simulated rover in a real world, against ground truth and geometry."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sear.runtime.simulation import Simulation
from sear.sensors.config import Pose
from sear.sensors.imu import AccelerometerConfig, GyroscopeConfig
from sear.sensors.lidar import LidarConfig
from sear.sensors.odometer import OdometerConfig
from sear.state import quaternion_to_euler

from ..physics.helpers import plane_mesh, rover_project


def _simulation(tmp_path, configs, **kwargs):
    return Simulation(rover_project(tmp_path / "p", **kwargs), sensor_configs=configs)


def test_lidar_in_a_square_room_built_with_add_wall(tmp_path):
    sim = _simulation(tmp_path, [LidarConfig(name="lidar", angle_step_deg=0.5, resolution_mm=0.0,
                                             pose=Pose(z=0.16))])
    try:
        for x1, y1, x2, y2 in ((-2.1, -2.1, 2.1, -2.1), (2.1, -2.1, 2.1, 2.1), (2.1, 2.1, -2.1, 2.1),
                               (-2.1, 2.1, -2.1, -2.1)):
            sim.sim.add_wall(x1, y1, x2, y2, height=1.0, thickness=0.2)  # inner faces at ±2.0 m
        sim.run(1.0)
        scan = sim.sensors.read("lidar")
        state = sim.state
        _, _, yaw = quaternion_to_euler(state.orientation)
        sx, sy = state.position[0], state.position[1]  # the LIDAR is mounted over the body origin
        errors = []
        for i, reading in enumerate(scan):
            a = yaw + math.radians(-90.0 + 0.5 * i)
            c, s = math.cos(a), math.sin(a)
            tx = (math.copysign(2.0, c) - sx) / c if abs(c) > 1e-12 else math.inf
            ty = (math.copysign(2.0, s) - sy) / s if abs(s) > 1e-12 else math.inf
            errors.append(abs(reading - min(tx, ty)))
        assert max(errors) < 0.01  # every beam within 1 cm of the geometric distance
    finally:
        sim.close()


def test_accelerometer_at_rest_on_a_10_degree_slope(tmp_path):
    sim = _simulation(tmp_path, [AccelerometerConfig(name="acc", max_range_g=3.0)],
                      terrain=plane_mesh(slope_deg=10.0), brake_force=400.0)
    try:
        sim.world.vehicles[0].brake(400.0)
        sim.run(3.0)
        x, y, z = sim.sensors.read("acc")
        # Specific force of gravity in the body frame, nose up by the body's actual pitch: the slope's 10°
        # plus a little more, as the downhill springs carry more of the weight.
        _, pitch, _ = quaternion_to_euler(sim.state.orientation)
        assert math.radians(10.0) < -pitch < math.radians(13.0)
        assert x == pytest.approx(-9.81 * math.sin(pitch), abs=0.03)
        assert z == pytest.approx(9.81 * math.cos(pitch), abs=0.03)
        assert y == pytest.approx(0.0, abs=0.03)
    finally:
        sim.close()


def test_gyroscope_in_a_steady_turn_matches_the_true_yaw_rate(tmp_path):
    sim = _simulation(tmp_path, [GyroscopeConfig(name="gyro", bandwidth_hz=50.0)])
    try:
        sim.run(1.0)
        sim.world.vehicles[0].accelerate(15.0)
        sim.world.vehicles[0].steer(0.3)
        sim.run(4.0)
        yaws = []
        readings = []
        for _ in range(60):
            sim.tick()
            yaws.append(quaternion_to_euler(sim.state.orientation)[2])
            readings.append(sim.sensors.read("gyro").z)
        truth = np.diff(np.unwrap(yaws)).mean() / sim.world.dt  # rad/s from the ground-truth yaw
        assert truth > 0.3
        assert np.mean(readings) == pytest.approx(truth, rel=0.02)
    finally:
        sim.close()


def test_odometer_follows_ground_truth_on_a_straight_run(tmp_path):
    sim = _simulation(tmp_path, [OdometerConfig(name="odo", ticks_per_rev=1024, wheels=("left_rear", "right_rear"))])
    try:
        sim.run(1.0)
        start = sim.state.position.copy()
        before = sim.sensors.read("odo").distance
        sim.world.vehicles[0].accelerate(20.0)
        sim.run(4.0)
        travelled = np.linalg.norm(sim.state.position[:2] - start[:2])
        assert travelled > 3.0
        assert sim.sensors.read("odo").distance - before == pytest.approx(travelled, rel=0.01)
    finally:
        sim.close()


def test_odometer_shows_wheel_slip_as_error(tmp_path):
    # On ice with full throttle the rear wheels cannot transmit the force, yet keep turning with the ground
    # speed; braking hard locks them while the robot slides, so the odometer under-reads. The rear wheels
    # carry about half the weight, so the robot gains at most 0.05·g/2 = 0.25 m/s² (less the front wheels'
    # rolling resistance): 4 s give ~0.7 m/s, and braking at 0.05·g = 0.49 m/s² slides it > 0.2 m in 1 s.
    sim = _simulation(tmp_path, [OdometerConfig(name="odo")], friction_slip=0.05, brake_force=400.0)
    try:
        sim.run(1.0)
        sim.world.vehicles[0].accelerate(40.0)
        sim.run(4.0)
        start = sim.state.position.copy()
        before = sim.sensors.read("odo").distance
        sim.world.vehicles[0].accelerate(0.0)
        sim.world.vehicles[0].brake(400.0)
        sim.run(1.0)
        travelled = np.linalg.norm(sim.state.position[:2] - start[:2])
        counted = sim.sensors.read("odo").distance - before
        assert travelled > 0.2 and counted < 0.5 * travelled
    finally:
        sim.close()


def test_rays_cast_in_the_body_frame_equal_the_same_rays_in_the_world_frame(tmp_path):
    """The simulation casts sensor rays in the chassis' frame (pybullet moves them with it, and pybullet's
    chassis frame sits at the centre of mass); a suite with no body casts the same rays in the world frame.
    On a turning rover with its centre of gravity off the origin both must read the same."""
    from sear.sensors.range import InfraredConfig, UltrasonicConfig
    from sear.sensors.suite import SensorSuite

    configs = [
        LidarConfig(name="lidar", angle_step_deg=1.0, resolution_mm=0.0, pose=Pose(x=0.1, y=0.05, z=0.16, yaw=10.0)),
        InfraredConfig(name="ir", pose=Pose(x=0.3, z=0.05, yaw=20.0), resolution_cm=0.5, max_range_cm=300.0),
        UltrasonicConfig(name="sonar", pose=Pose(x=0.3, z=0.08, pitch=-3.0)),
    ]
    sim = _simulation(tmp_path, configs, cog_offset=(0.05, -0.03, -0.04))
    try:
        for x1, y1, x2, y2 in ((-3.0, -3.0, 3.0, -3.0), (3.0, -3.0, 3.0, 3.0), (3.0, 3.0, -3.0, 3.0),
                               (-3.0, 3.0, -3.0, -3.0)):
            sim.sim.add_wall(x1, y1, x2, y2, height=1.0, thickness=0.2)
        sim.sim.add_box(2.2, 0.9, size=0.6, mass=0.0)
        sim.sim.accelerate(20.0)
        sim.sim.steer(0.3)
        sim.run(1.0)
        state = sim.state
        assert abs(quaternion_to_euler(state.orientation)[2]) > 0.15  # the rover has turned
        world_frame = SensorSuite(configs, rng=np.random.default_rng(0), client=sim.world.client,
                                  ignore_bodies=sim.world.robot_body_ids(0))
        world_frame.update(state)
        body_frame = SensorSuite(configs, rng=np.random.default_rng(0), client=sim.world.client,
                                 ignore_bodies=sim.world.robot_body_ids(0), body=sim.world.vehicles[0].body_id,
                                 body_centre=sim.world.vehicles[0].cog)
        body_frame.update(state)
        assert np.isfinite(world_frame.read("lidar")).sum() > 100
        np.testing.assert_allclose(body_frame.read("lidar"), world_frame.read("lidar"), atol=1e-9)
        for name in ("ir", "sonar"):
            assert body_frame.read(name) == pytest.approx(world_frame.read(name), abs=1e-9)
        assert world_frame.read("sonar") is not None and world_frame.read("ir") is not None
        drawn_body, drawn_world = body_frame.last_rays, world_frame.last_rays
        for a, b in zip(drawn_body, drawn_world, strict=True):
            np.testing.assert_allclose(a, b, atol=1e-9)
    finally:
        sim.close()
