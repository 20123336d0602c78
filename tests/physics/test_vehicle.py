"""The vehicle's dynamics against values worked out from the physics, not from the code."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sear.models.loaded import load_models
from sear.physics.world import World

from .helpers import G, plane_mesh, rover_project, run, static_box, yaw


def test_settles_at_rest_without_creep(world_factory):
    world = world_factory()
    run(world, 3.0)
    before = world.vehicles[0].state().position
    run(world, 10.0)
    after = world.vehicles[0].state()
    assert np.linalg.norm(after.position - before) < 0.01
    assert np.linalg.norm(after.linear_velocity) < 1e-3


def test_rest_height_follows_the_spring_law(world_factory):
    # Each of 4 springs carries m·g/4 with force stiffness·compression·m, so compression = g/(4·stiffness).
    # The body origin then sits at wheel radius (0.1) + wheel drop (0.08) + rest length (0.1) - compression.
    heights = {}
    for k in (40.0, 80.0):
        world = world_factory(suspension_stiffness=k)
        run(world, 4.0)
        heights[k] = world.vehicles[0].state().position[2]
        expected = 0.1 + 0.08 - 0.1 + 0.1 - G / (4 * k)
        assert heights[k] == pytest.approx(expected, abs=0.002)
    assert heights[80.0] > heights[40.0]  # stiffer springs sag less


def test_throttle_from_rest_accelerates_at_force_over_mass(world_factory):
    world = world_factory()
    run(world, 2.0)
    world.vehicles[0].accelerate(40.0)
    v0 = world.vehicles[0].state().linear_velocity[0]
    run(world, 0.25)
    v1 = world.vehicles[0].state().linear_velocity[0]
    assert (v1 - v0) / 0.25 == pytest.approx(40.0 / 20.0, rel=0.15)


def test_brake_stops_the_robot(world_factory):
    world = world_factory()
    run(world, 1.0)
    world.vehicles[0].accelerate(40.0)
    run(world, 1.5)
    speed = np.linalg.norm(world.vehicles[0].state().linear_velocity)
    assert speed > 2.0
    world.vehicles[0].accelerate(0.0)
    world.vehicles[0].brake(20.0)
    # Deceleration at least brake/mass = 1 m/s² (plus rolling resistance): stopped within speed/1 s.
    run(world, speed / 1.0 + 0.3)
    assert np.linalg.norm(world.vehicles[0].state().linear_velocity) < 0.05


def test_steering_left_turns_left_at_the_bicycle_model_rate(world_factory):
    world = world_factory()
    run(world, 1.0)
    world.vehicles[0].accelerate(10.0)
    run(world, 1.0)
    world.vehicles[0].steer(0.2)
    run(world, 0.5)
    state = world.vehicles[0].state()
    speed = np.linalg.norm(state.linear_velocity)
    yaw_rate = state.angular_velocity[2]
    assert yaw_rate > 0  # left = counter-clockwise seen from above
    # Low-speed kinematics: yaw rate = v·tan(steer)/wheelbase, wheelbase 0.44 m.
    assert yaw_rate == pytest.approx(speed * math.tan(0.2) / 0.44, rel=0.2)
    y0 = yaw(world)
    run(world, 0.5)
    assert yaw(world) > y0


def test_steering_is_clamped_to_the_limit(world_factory):
    world = world_factory(max_steering=0.3)
    world.vehicles[0].steer(2.0)
    assert world.vehicles[0].steering == pytest.approx(0.3)
    world.vehicles[0].steer(-2.0)
    assert world.vehicles[0].steering == pytest.approx(-0.3)


def _oscillations(world) -> int:
    """Sign changes of the height about its final value after a drop."""
    zs = []
    for _ in range(int(3.0 / world.dt)):
        world.step()
        zs.append(world.vehicles[0].state().position[2])
    zs = np.array(zs)
    deviation = zs - zs[-1]
    significant = deviation[np.abs(deviation) > 5e-4]
    return int(np.sum(np.diff(np.sign(significant)) != 0))


def test_more_damping_means_fewer_oscillations(tmp_path):
    counts = {}
    for c in (0.3, 6.0):
        project = rover_project(tmp_path / f"d{c}", suspension_compression=c, suspension_damping=c)
        project.body.start_altitude, project.body.drop_start = 0.15, True  # it bounces after a drop
        world = World(project, load_models(project))
        counts[c] = _oscillations(world)
        world.close()
    assert counts[0.3] > counts[6.0]
    assert counts[0.3] >= 3


def test_climbs_a_gentle_slope(world_factory):
    # 5°: m·g·sin = 17.1 N < 40 N of engine force.
    world = world_factory(terrain=plane_mesh(slope_deg=5.0))
    run(world, 2.0)
    x0 = world.vehicles[0].state().position[0]
    world.vehicles[0].accelerate(40.0)
    run(world, 4.0)
    assert world.vehicles[0].state().position[0] - x0 > 3.0


def test_holds_on_a_steep_slope_with_grip_but_slides_on_ice(world_factory):
    # 30° with the brakes on: grip holds when friction_slip > tan(30°) = 0.577, ice (0.1) slides down.
    moved = {}
    for mu in (1.0, 0.1):
        world = world_factory(terrain=plane_mesh(slope_deg=30.0), brake_force=2000.0, friction_slip=mu)
        world.vehicles[0].brake(2000.0)
        run(world, 1.5)
        x0 = world.vehicles[0].state().position[0]
        run(world, 2.0)
        moved[mu] = world.vehicles[0].state().position[0] - x0
    assert abs(moved[1.0]) < 0.05
    # Sliding down the x slope: at most g·(sin - mu·cos) = 4.06 m/s², over 2 s up to 8 m.
    assert moved[0.1] < -1.0


def _drive_at_table(world, underside: float) -> float:
    # Table 2 m wide, 1 m deep, top 5 cm thick, at x = 3 m; legs at y = ±1.1 m, outside the robot's path.
    static_box(world, (3.0, 0.0, underside + 0.025), (0.5, 1.0, 0.025))
    for y in (-1.1, 1.1):
        for x in (2.55, 3.45):
            static_box(world, (x, y, underside / 2), (0.05, 0.05, underside / 2))
    run(world, 1.0)
    world.vehicles[0].accelerate(30.0)
    run(world, 4.0)
    return world.vehicles[0].state().position[0]


def test_drives_under_a_high_table_but_not_a_low_one(world_factory):
    # The rover rests with its origin 0.119 m up; its deck top is 0.12 m above that (0.24 m tall) and its
    # hull's vertical front face reaches 0.06 m above it (0.18 m). A 0.40 m table clears everything; a
    # 0.15 m one meets the front face.
    assert _drive_at_table(world_factory(), underside=0.40) > 4.5
    assert _drive_at_table(world_factory(), underside=0.15) < 2.6


def test_skid_steer_spins_in_place(world_factory):
    # A skid-steered robot turns only by sliding its tyres sideways: each wheel's drive force must
    # exceed its grip μ·m·g/4 = 49 N; 400 N of engine gives 100 N a wheel at full steering.
    assert 1.0 * 20.0 * G / 4 < 400.0 / 4
    world = world_factory(drive_type="skid", engine_force=400.0)
    run(world, 1.0)
    start = world.vehicles[0].state().position.copy()
    y0 = yaw(world)
    world.vehicles[0].steer(0.5)  # full left
    run(world, 2.0)
    assert yaw(world) - y0 > 0.2
    assert np.linalg.norm(world.vehicles[0].state().position[:2] - start[:2]) < 0.05


def test_boxes_rest_on_the_terrain_and_walls_block(world_factory):
    world = world_factory()
    index = world.add_box(5.0, 5.0, size=0.5, mass=2.0)
    run(world, 1.0)
    pos, _ = world.obstacle_pose(world.obstacles[index])
    assert pos[2] == pytest.approx(0.25, abs=0.01)
    world.add_wall(2.0, -2.0, 2.0, 2.0, height=1.0)
    world.vehicles[0].accelerate(40.0)
    run(world, 4.0)
    # The wall's near face is at x = 1.9; the body's front is 0.3 m ahead of its origin.
    assert world.vehicles[0].state().position[0] < 1.9 - 0.3 + 0.02


def test_reset_returns_to_the_start_pose(world_factory):
    world = world_factory()
    world.vehicles[0].accelerate(40.0)
    run(world, 2.0)
    world.reset_vehicle()
    state = world.vehicles[0].state()
    assert np.allclose(state.position, world.start_poses[0][0])
    assert np.linalg.norm(state.linear_velocity) == 0.0


def test_full_throttle_cannot_climb_a_steep_icy_slope(world_factory):
    # 30°, friction_slip 0.1. Gravity pulls m·g·sin 30° = 98 N down the slope. The friction circle lets
    # the wheels push at most 0.1·(load) uphill: with all the weight on them 0.1·m·g·cos 30° = 17 N
    # < 40 N of engine. So the robot slides back down with an acceleration along the slope between
    # (98 - 17) / 20 = 4.05 m/s² and g·sin 30° = 4.9 m/s². (Bullet's 0.5 weighting of the forward impulse
    # doubled the grip to 34 N, and this test allowed it.)
    world = world_factory(terrain=plane_mesh(slope_deg=30.0), friction_slip=0.1)
    world.vehicles[0].accelerate(40.0)
    run(world, 0.5)
    v0 = world.vehicles[0].state().linear_velocity[0] / math.cos(math.radians(30.0))
    run(world, 1.0)
    v1 = world.vehicles[0].state().linear_velocity[0] / math.cos(math.radians(30.0))
    downhill = -(v1 - v0)
    mg = 20.0 * G
    assert (mg * 0.5 - 0.1 * mg * math.cos(math.radians(30.0))) / 20.0 - 0.05 < downhill < G * 0.5
