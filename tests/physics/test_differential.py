"""Differential drive against the kinematics of a two-wheeled robot on casters, worked out here.

The rover's rear-slot wheels (x = -0.22 m, y = ±0.25 m) are driven and its front-slot wheels are casters
(sear.project.Dynamics.drive_type). A robot whose only side grip is two wheels on one axle turns about a
point on that axle line: with wheel ground speeds vl and vr and track b, the middle of the axle runs on a
circle of radius b/2·(vr + vl)/(vr − vl), and with vl = −vr it turns on the spot.

The wheels' speeds are held by a PI controller in the test, as a robot's motor controllers
hold them, from the chassis' velocity at each wheel's contact (pybullet's base velocity: v + ω × r),
not from the vehicle's own bookkeeping.
"""

from __future__ import annotations

import math

import numpy as np
import pybullet as p
import pytest

from sear.physics.world import World

from .helpers import ROVER_WHEELS, rover_project, run, yaw

TRACK = ROVER_WHEELS["left_rear"][1] - ROVER_WHEELS["right_rear"][1]
"""b, m: the driven wheels' distance apart."""
AXLE_MIDDLE = np.array([ROVER_WHEELS["left_rear"][0], 0.0, 0.0])
"""The middle of the driven axle in the body frame (x only: the turning point lies on the vertical line
through it), m."""
GAIN = 200.0
"""N per m/s of wheel speed error: the test's motor controller."""
INTEGRAL = 400.0
"""N per m of accumulated wheel speed error (m/s · s)."""


def _frame(world: World) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Body origin (m), rotation matrix, linear velocity (m/s) and angular velocity (rad/s), world frame."""
    pos, orn = p.getBasePositionAndOrientation(world.vehicles[0].body_id, physicsClientId=world.client)
    vel, ang = p.getBaseVelocity(world.vehicles[0].body_id, physicsClientId=world.client)
    rot = np.asarray(p.getMatrixFromQuaternion(orn)).reshape(3, 3)
    return np.asarray(pos), rot, np.asarray(vel), np.asarray(ang)


def _wheel_speeds(world: World) -> tuple[float, float]:
    """Ground speed along the heading at the left and right driven wheels, m/s (the rover's centre of
    mass is its body origin, so pybullet's base velocity is the origin's)."""
    _, rot, vel, ang = _frame(world)
    speeds = []
    for wid in ("left_rear", "right_rear"):
        r = rot @ np.asarray(ROVER_WHEELS[wid])
        speeds.append(float((vel + np.cross(ang, r)) @ rot[:, 0]))
    return speeds[0], speeds[1]


def _axle_middle(world: World) -> np.ndarray:
    pos, rot, _, _ = _frame(world)
    return (pos + rot @ AXLE_MIDDLE)[:2]


def _hold_speeds(world: World, left: float, right: float, seconds: float, record=None) -> None:
    """Drive `seconds` with each driven wheel's speed held at `left` / `right` m/s by a PI controller
    (the integral carries the force the casters' rolling resistance and the turn take)."""
    il = ir = 0.0
    for _ in range(round(seconds / world.dt)):
        vl, vr = _wheel_speeds(world)
        il += (left - vl) * world.dt
        ir += (right - vr) * world.dt
        world.vehicles[0].drive(GAIN * (left - vl) + INTEGRAL * il, GAIN * (right - vr) + INTEGRAL * ir)
        world.step()
        if record is not None:
            record(world)


def _fit_circle(points: np.ndarray) -> tuple[np.ndarray, float]:
    """Least-squares circle through 2-D points (Kåsa): x² + y² = 2ax + 2by + c; centre (a, b), radius."""
    x, y = points[:, 0], points[:, 1]
    a, b, c = np.linalg.lstsq(np.column_stack([2 * x, 2 * y, np.ones_like(x)]), x * x + y * y, rcond=None)[0]
    return np.array([a, b]), math.sqrt(c + a * a + b * b)


def test_equal_forces_drive_straight(world_factory):
    world = world_factory(drive_type="differential")
    run(world, 1.0)
    start, heading = _axle_middle(world), yaw(world)
    world.vehicles[0].drive(10.0, 10.0)
    steps = 0
    while np.linalg.norm(_axle_middle(world) - start) < 10.0:
        world.step()
        steps += 1
        assert steps < 20 / world.dt, "the robot did not cover 10 m in 20 s"
    assert abs(math.degrees(yaw(world) - heading)) < 1.0
    # It went forwards (+x), not off to a side.
    assert _axle_middle(world)[0] - start[0] > 9.9


def test_opposite_wheel_speeds_spin_about_the_middle_of_the_axle(world_factory):
    world = world_factory(drive_type="differential")
    run(world, 1.0)
    centre = _axle_middle(world)
    # ω = (vr − vl)/b = 0.6/0.5 = 1.2 rad/s: a turn in 5.2 s; three turns.
    turned = [0.0]
    last = [yaw(world)]
    drift: list[float] = []
    origin_radius: list[float] = []

    def record(w: World) -> None:
        now = yaw(w)
        turned[0] += (now - last[0] + math.pi) % (2 * math.pi) - math.pi
        last[0] = now
        drift.append(float(np.linalg.norm(_axle_middle(w) - centre)))
        pos, _, _, _ = _frame(w)
        origin_radius.append(float(np.linalg.norm(pos[:2] - centre)))

    _hold_speeds(world, -0.3, 0.3, 3 * 2 * math.pi / 1.2 + 1.0, record)
    turns = turned[0] / (2 * math.pi)
    assert turns > 2.9  # left (counter-clockwise), about three turns
    assert max(drift) / turns < 0.05
    assert max(drift) < 0.05
    # The turning point is the axle's middle, not the body's centre: the body origin, 0.22 m ahead of
    # the axle, circles it at that distance.
    assert min(origin_radius[len(origin_radius) // 2:]) == pytest.approx(0.22, abs=0.03)
    assert max(origin_radius[len(origin_radius) // 2:]) == pytest.approx(0.22, abs=0.03)


@pytest.mark.parametrize(("left", "right"), [(0.4, 0.8), (0.9, 0.6)])
def test_turn_radius_is_half_the_track_times_the_speed_ratio(world_factory, left, right):
    world = world_factory(drive_type="differential")
    run(world, 1.0)
    _hold_speeds(world, left, right, 2.0)  # reach the speeds
    points: list[np.ndarray] = []
    speeds: list[tuple[float, float]] = []

    def record(w: World) -> None:
        points.append(_axle_middle(w))
        speeds.append(_wheel_speeds(w))

    # One lap of the axle's middle: 2π·R / ((vl + vr)/2).
    expected_lap = 2 * math.pi * abs(TRACK / 2 * (right + left) / (right - left)) / ((left + right) / 2)
    _hold_speeds(world, left, right, expected_lap, record)
    vl, vr = np.mean(speeds, axis=0)
    assert vl == pytest.approx(left, rel=0.02) and vr == pytest.approx(right, rel=0.02)
    expected = TRACK / 2 * (vr + vl) / (vr - vl)
    centre, radius = _fit_circle(np.array(points))
    assert radius == pytest.approx(abs(expected), rel=0.05)
    # The turning centre lies on the driven axle's line (neither ahead of nor behind the axle).
    assert abs((centre - points[-1]) @ _frame(world)[1][:2, 0]) < 0.02
    # The centre lies on the side of the slower wheel: to the left (+y at the start, heading +x) when
    # the right wheel is faster.
    assert np.sign(centre[1] - points[0][1]) == np.sign(expected)


def test_a_car_driven_by_its_rear_wheels_does_not_turn_about_its_axle(world_factory):
    # The control for the turn test above: a car (its front wheels gripping sideways, straight ahead)
    # with its rear wheels held at different speeds by drive() does turn, but its rear axle slides
    # sideways, so its path is not the two-wheel circle.
    world = world_factory(drive_type="car")
    run(world, 1.0)
    _hold_speeds(world, 0.4, 0.8, 2.0)
    points: list[np.ndarray] = []
    speeds: list[tuple[float, float]] = []

    def record(w: World) -> None:
        points.append(_axle_middle(w))
        speeds.append(_wheel_speeds(w))

    _hold_speeds(world, 0.4, 0.8, 6.0, record)
    vl, vr = np.mean(speeds, axis=0)
    assert vr - vl > 0.02  # it turns left
    centre, radius = _fit_circle(np.array(points))
    assert abs(radius / (TRACK / 2 * (vr + vl) / (vr - vl)) - 1.0) > 0.1
    assert (centre - _axle_middle(world)) @ _frame(world)[1][:2, 0] > 0.5  # turning about a point ahead


@pytest.mark.parametrize("drive_type", ["car", "skid", "differential"])
def test_the_keys_drive_every_type(tmp_path, drive_type):
    """U drives ahead, U with H turns left and with K right, J stops: Simulation.set_manual_input, as the
    window calls it for held keys (throttle, steer in -1..1, brake)."""
    from sear.runtime.simulation import Simulation

    headings = {}
    for name, steer in (("left", 1.0), ("right", -1.0)):
        # A skid-steered rover turns only when its wheels' forces beat their grip (test_vehicle.py):
        # 400 N of engine force for it.
        force = 400.0 if drive_type == "skid" else 40.0
        simulation = Simulation(rover_project(tmp_path / f"{drive_type}-{name}", drive_type=drive_type,
                                              engine_force=force))
        try:
            world = simulation.world
            run(world, 1.0)
            heading = yaw(world)
            simulation.set_manual_input(1.0, steer, False)  # U + H or K, from rest
            run(world, 0.7)
            headings[name] = (yaw(world) - heading + math.pi) % (2 * math.pi) - math.pi
            simulation.set_manual_input(1.0, 0.0, False)  # U: ahead, along the heading it now has
            run(world, 0.5)
            _, rot, velocity, _ = _frame(world)
            assert velocity @ rot[:, 0] > 0.3
            speed = float(np.linalg.norm(_frame(world)[2]))
            simulation.set_manual_input(0.0, 0.0, True)  # J: the brake force, 20 N on 20 kg
            run(world, speed / (20.0 / 20.0) + 0.5)  # slowing at least 1 m/s²: stopped within speed/1 s
            assert np.linalg.norm(_frame(world)[2]) < 0.05
        finally:
            simulation.close()
    assert headings["left"] > 0.05 and headings["right"] < -0.05


def test_h_alone_spins_a_differential_robot_on_the_spot(tmp_path):
    from sear.runtime.simulation import Simulation

    simulation = Simulation(rover_project(tmp_path, drive_type="differential"))
    try:
        world = simulation.world
        run(world, 1.0)
        centre, heading = _axle_middle(world), yaw(world)
        # H: the sides pushed apart with the full engine force (±20 N). Forces, not speeds: it spins
        # faster the longer H is held, until the centripetal force the driven wheels must give exceeds
        # their grip (at about 4 rad/s for this rover); half a second stays below that.
        simulation.set_manual_input(0.0, 1.0, False)
        run(world, 0.5)
        assert yaw(world) - heading > 0.3
        assert np.linalg.norm(_axle_middle(world) - centre) < 0.05
    finally:
        simulation.close()
