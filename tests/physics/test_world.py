"""World assembly: start pose (relative and absolute), Ackermann wheels, wheel transforms for drawing."""

from __future__ import annotations

import math

import numpy as np
import pytest
from geographiclib.geodesic import Geodesic

from .helpers import plane_mesh, rover_project, run

WHEEL_BOTTOM = 0.08 + 0.1
"""Demo rover: wheel centres 0.08 m below the body origin, radius 0.1 m."""


def test_relative_start_is_east_north_and_altitude_above_the_terrain(tmp_path, make_world):
    project = rover_project(tmp_path, terrain=plane_mesh(slope_deg=5.0))
    project.body.start_east, project.body.start_north, project.body.start_altitude = 3.0, -2.0, 0.05
    project.body.drop_start = True  # the altitude is that of a drop start
    world = make_world(project)
    ground = 3.0 * math.tan(math.radians(5.0))
    assert world.terrain_height(3.0, -2.0) == pytest.approx(ground, abs=1e-4)
    assert world.vehicles[0].state().position == pytest.approx([3.0, -2.0, ground + 0.05 + WHEEL_BOTTOM], abs=1e-4)


def test_absolute_start_converts_latitude_longitude_to_the_world_frame(tmp_path, make_world):
    project = rover_project(tmp_path)
    project.terrain.latitude, project.terrain.longitude, project.terrain.altitude = -33.9, 151.2, 100.0
    # 5 m east and 10 m north of the terrain centre, computed on the ellipsoid by geographiclib.
    target = Geodesic.WGS84.Direct(-33.9, 151.2, math.degrees(math.atan2(5.0, 10.0)), math.hypot(5.0, 10.0))
    project.body.start_mode = "absolute"
    project.body.start_latitude, project.body.start_longitude = target["lat2"], target["lon2"]
    project.body.start_abs_altitude = 100.5
    project.body.drop_start = True  # the altitude is that of a drop start
    world = make_world(project)
    # 0.5 m above the flat ground (the ellipsoid's drop over 11 m is 1e-5 m).
    assert world.vehicles[0].state().position == pytest.approx([5.0, 10.0, 0.5 + WHEEL_BOTTOM], abs=2e-3)


def test_front_wheels_follow_ackermann_geometry(tmp_path, make_world):
    world = make_world(rover_project(tmp_path))
    world.vehicles[0].steer(0.3)
    world.step()
    wheels = world.vehicles[0].wheel_states()
    inner, outer = wheels["left_front"].steering, wheels["right_front"].steering
    assert inner > 0.3 > outer > 0
    # Both front axles meet on the rear axle line: cot(outer) - cot(inner) = track / wheelbase.
    assert 1 / math.tan(outer) - 1 / math.tan(inner) == pytest.approx(0.5 / 0.44, rel=1e-6)
    assert wheels["left_rear"].steering == wheels["right_rear"].steering == 0.0


def test_skid_drive_steers_no_wheel(tmp_path, make_world):
    world = make_world(rover_project(tmp_path, drive_type="skid"))
    world.vehicles[0].steer(0.4)
    world.step()
    assert all(w.steering == 0.0 for w in world.vehicles[0].wheel_states().values())
    assert world.vehicles[0].state().steering == 0.0


def test_wheels_roll_without_slip_and_sit_a_radius_above_the_ground(tmp_path, make_world):
    world = make_world(rover_project(tmp_path))
    run(world, 1.0)
    start = world.vehicles[0].state()
    world.vehicles[0].accelerate(10.0)
    run(world, 2.0)
    world.vehicles[0].accelerate(0.0)
    end = world.vehicles[0].state()
    distance = end.position[0] - start.position[0]
    assert distance > 0.5
    for wid, angle in end.wheel_angles.items():
        # Rolling without slip: the wheel turns distance / radius radians (forward = +y spin).
        assert angle - start.wheel_angles[wid] == pytest.approx(distance / 0.1, rel=0.02)
    body_pos, _ = world.vehicles[0].pose()
    for wid, (pos, orn) in world.vehicles[0].wheel_transforms().items():
        assert pos[2] == pytest.approx(0.1, abs=1e-3)  # wheel centre one radius above z = 0
        assert np.linalg.norm(orn) == pytest.approx(1.0)
        axle = _rotate(orn, np.array([0.0, 1.0, 0.0]))
        assert abs(axle[1]) == pytest.approx(1.0, abs=1e-3)  # spinning about the body's y axis
        expected_side = 0.25 if "left" in wid else -0.25
        assert pos[1] - body_pos[1] == pytest.approx(expected_side, abs=0.01)


def _rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    x, y, z, w = q
    rot = np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])
    return rot @ v


def test_obstacles_record_what_the_window_draws(tmp_path, make_world):
    world = make_world(rover_project(tmp_path))
    tree = world.obstacles[world.add_tree(4.0, 4.0)]
    box = world.obstacles[world.add_box(-4.0, 4.0, size=0.5, mass=3.0)]
    wall = world.obstacles[world.add_wall(0.0, -5.0, 4.0, -2.0, height=0.8, thickness=0.2)]
    assert (tree.kind, box.kind, wall.kind) == ("tree", "box", "wall")
    assert box.dynamic and not tree.dynamic and not wall.dynamic
    assert wall.size == pytest.approx((5.0 + 0.2, 0.2, 0.8))  # 3-4-5 triangle: 5 m long
    pos, orn = world.obstacle_pose(wall)
    assert pos == pytest.approx([2.0, -3.5, 0.4], abs=1e-6)
    assert 2 * math.atan2(orn[2], orn[3]) == pytest.approx(math.atan2(3.0, 4.0))
    tree_pos, _ = world.obstacle_pose(tree)
    assert tree_pos == pytest.approx([4.0, 4.0, 0.0], abs=1e-6)  # drawn from its foot on the ground
    with pytest.raises(ValueError):
        world.add_box(0.0, 0.0, size=-1.0)
    with pytest.raises(ValueError):
        world.add_wall(1.0, 1.0, 1.0, 1.0)


def test_centre_of_gravity_offset_loads_the_nearer_axle(tmp_path, make_world):
    project = rover_project(tmp_path, cog_offset=(0.1, 0.0, 0.0))
    world = make_world(project)
    # The state reports the body model frame, not the shifted centre of mass.
    assert world.vehicles[0].state().position == pytest.approx(world.start_poses[0][0], abs=1e-9)
    run(world, 3.0)
    # Small-angle moment balance. Springs of stiffness k·m under a share of m·g: the front-rear
    # compression difference is g·e_eff/(L·k) over the wheelbase L = 0.44, so pitch = g·e_eff/(L²·k).
    # The rays run along the chassis, so pitching moves the contacts back under the centre of mass
    # by d·pitch (d = contact depth below it: 0.18 m at rest length, minus the mean sag g/(4k)):
    # e_eff = e + d·pitch, pitch = K·e/(1 - K·d) with K = g/(L²·k).
    k, e, wheelbase = 40.0, 0.1, 0.44
    gain = 9.81 / (wheelbase**2 * k)
    depth = 0.18 - 9.81 / (4 * k)
    expected = gain * e / (1 - gain * depth)
    x, y, z, w = world.vehicles[0].state().orientation
    pitch = math.asin(2 * (w * y - z * x))  # positive = nose down (REP 103)
    assert pitch == pytest.approx(expected, rel=0.1)
    e_eff = e + depth * expected
    loads = {wid: s.suspension_force for wid, s in world.vehicles[0].wheel_states().items()}
    assert loads["left_front"] / loads["left_rear"] == pytest.approx(
        (wheelbase / 2 + e_eff) / (wheelbase / 2 - e_eff), rel=0.1)
    assert sum(loads.values()) == pytest.approx(20.0 * 9.81, rel=0.01)
